import {
  evictDurableObject,
  runDurableObjectAlarm,
  runInDurableObject,
  SELF,
} from "cloudflare:test";
import { beforeEach, describe, expect, it, vi } from "vitest";
import type { DiscoverPage, RegistryEntry } from "../../src/protocol/card/registry";
import { defineRegistry } from "../../src/registry/index";
import { REGISTRY_SCHEMA } from "../../src/storage/schema";
import { inspectSchema } from "../../src/storage/schema-version";
import { registryOf, resetRegistry, serveCard } from "../harness/registry/helpers";
import type { TestRegistry } from "../harness/registry/worker";

const ORIGIN = "https://registry.example.com";
const KEYS = { alice: "key-alice", bob: "key-bob", carol: "key-carol" } as const;
type Who = keyof typeof KEYS;

function call(who: Who | null, method: string, path: string, body?: unknown, headers = {}) {
  return SELF.fetch(`${ORIGIN}${path}`, {
    method,
    headers: {
      ...(who ? { "X-API-Key": KEYS[who] } : {}),
      ...(body === undefined ? {} : { "Content-Type": "application/json" }),
      ...headers,
    },
    body: body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body),
  });
}

const card = (name: string, url: string, extra: Record<string, unknown> = {}) => ({
  name,
  description: `${name} agent`,
  url,
  ...extra,
});

/** Registers `c`, served first at its URL as its agent would serve it. */
async function register(who: Who, c: { url: string }, ttlSeconds?: number) {
  await serveCard(c);
  const response = await call(who, "POST", "/agents", { card: c, ttlSeconds });
  return { status: response.status, entry: (await response.json()) as RegistryEntry };
}

async function discover(who: Who, query = ""): Promise<DiscoverPage> {
  const response = await call(who, "GET", `/agents${query}`);
  expect(response.status).toBe(200);
  return response.json();
}

async function errorOf(response: Response) {
  const body = (await response.json()) as {
    error: {
      status: string;
      message: string;
      details: { fieldViolations?: { field: string }[] }[];
    };
  };
  const fields = body.error.details.flatMap((d) => d.fieldViolations ?? []).map((v) => v.field);
  return { status: response.status, grpc: body.error.status, message: body.error.message, fields };
}

beforeEach(resetRegistry);

describe("agent registry (A9)", () => {
  it("A9 registers a card for its TTL and answers it by id; registering again renews and replaces", async () => {
    const first = await register(
      "alice",
      card("Trips", "https://trips.example/", { tags: ["Travel"] }),
      30,
    );
    expect(first.status).toBe(201);
    const { entry } = first;
    expect(entry).toMatchObject({
      name: "Trips",
      url: "https://trips.example/",
      role: "worker",
      tags: ["travel"],
      ttlSeconds: 30,
    });
    expect(Date.parse(entry.expiresAt) - Date.parse(entry.registeredAt)).toBe(30_000);
    expect(entry.card).toStrictEqual(card("Trips", "https://trips.example/", { tags: ["Travel"] }));

    const got = await call("bob", "GET", `/agents/${entry.id}`);
    expect(got.status).toBe(200);
    expect(await got.json()).toStrictEqual(entry);

    await registryOf().advance(10_000);
    const again = await register("alice", card("Trips v2", "https://trips.example/"), 60);
    expect(again.status).toBe(200);
    expect(again.entry.id).toBe(entry.id);
    expect(again.entry.registeredAt).toBe(entry.registeredAt);
    expect(again.entry.name).toBe("Trips v2");
    // Real time passes between the calls too (a few ms here).
    const lived = Date.parse(again.entry.expiresAt) - Date.parse(entry.registeredAt);
    expect(lived).toBeGreaterThanOrEqual(70_000);
    expect(lived).toBeLessThan(71_000);
    expect((await discover("alice")).agents.map((a) => a.name)).toStrictEqual(["Trips v2"]);
  });

  it("A9 discovers live agents by name in any case, by role and by every tag, a page at a time", async () => {
    await register(
      "alice",
      card("Hotels", "https://hotels.example/", { tags: ["travel", "stay"] }),
    );
    await register(
      "alice",
      card("Flights", "https://flights.example/", { role: "orchestrator", tags: ["travel"] }),
    );
    await register(
      "bob",
      card("Weather", "https://weather.example/", { skills: [{ id: "f", tags: ["Forecast"] }] }),
    );
    await register(
      "bob",
      card("flights", "https://flights2.example/", { tags: ["travel", "cheap"] }),
    );

    const names = (page: DiscoverPage) => page.agents.map((a) => a.url);
    expect(names(await discover("alice", "?name=FLIGHTS"))).toHaveLength(2);
    expect(names(await discover("alice", "?role=orchestrator"))).toStrictEqual([
      "https://flights.example/",
    ]);
    expect(names(await discover("alice", "?tag=travel&tag=Stay"))).toStrictEqual([
      "https://hotels.example/",
    ]);
    expect(names(await discover("alice", "?tag=forecast"))).toStrictEqual([
      "https://weather.example/",
    ]);
    expect(names(await discover("alice", "?tag=travel&tag=nothing"))).toStrictEqual([]);

    // Pages of at most limits.maxPageSize (3 here), by name then id, each agent once.
    const first = await discover("bob", "?pageSize=2");
    expect(first.agents).toHaveLength(2);
    expect(first.nextPageToken).not.toBe("");
    const second = await discover("bob", `?pageSize=2&pageToken=${first.nextPageToken}`);
    expect(second.nextPageToken).toBe("");
    const all = [...first.agents, ...second.agents].map((a) => a.name.toLowerCase());
    expect(all).toStrictEqual(["flights", "flights", "hotels", "weather"]);
    expect((await discover("bob")).agents).toHaveLength(3);
  });

  it("A9 a heartbeat renews; an entry that misses it is never listed again and the alarm deletes its row", async () => {
    const stub = registryOf();
    const { entry } = await register("alice", card("Beat", "https://beat.example/"), 10);
    const { entry: other } = await register("alice", card("Quiet", "https://quiet.example/"), 10);
    await stub.advance(8_000);
    const beat = await call("alice", "POST", `/agents/${entry.id}/heartbeat`);
    expect(beat.status).toBe(200);
    const renewed = (await beat.json()) as RegistryEntry;
    const renewedBy = Date.parse(renewed.expiresAt) - Date.parse(entry.expiresAt);
    expect(renewedBy).toBeGreaterThanOrEqual(8_000);
    expect(renewedBy).toBeLessThan(9_000);

    await stub.advance(5_000); // Quiet is 3 s past its TTL, Beat has 5 s left
    expect((await discover("alice")).agents.map((a) => a.name)).toStrictEqual(["Beat"]);
    expect((await call("alice", "GET", `/agents/${other.id}`)).status).toBe(404);
    const late = await call("alice", "POST", `/agents/${other.id}/heartbeat`);
    expect(await errorOf(late)).toMatchObject({ status: 404, grpc: "NOT_FOUND" });

    const rows = () =>
      runInDurableObject(stub, (_, state) =>
        state.storage.sql
          .exec<{ id: string }>("SELECT id FROM agents")
          .toArray()
          .map((r) => r.id),
      );
    expect(await rows()).toContain(other.id);
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    expect(await rows()).toStrictEqual([entry.id]);
    // The alarm is set again, for the entry that expires next.
    const alarm = await runInDurableObject(stub, (_, state) => state.storage.getAlarm());
    expect(alarm).toBe(Date.parse(renewed.expiresAt));
  });

  it("A9 only the owner renews, replaces or removes an entry; a lapsed one may be taken", async () => {
    const { entry } = await register("alice", card("Mine", "https://mine.example/"), 10);
    expect((await call("bob", "POST", `/agents/${entry.id}/heartbeat`)).status).toBe(404);
    expect((await call("bob", "DELETE", `/agents/${entry.id}`)).status).toBe(404);
    // The very card the agent serves: still not bob's to take over.
    const taken = await call("bob", "POST", "/agents", {
      card: card("Mine", "https://mine.example/"),
    });
    expect(await errorOf(taken)).toMatchObject({ status: 403, grpc: "PERMISSION_DENIED" });
    expect((await call("alice", "GET", `/agents/${entry.id}`)).status).toBe(200);

    await registryOf().advance(11_000);
    const after = await register("bob", card("Now mine", "https://mine.example/"));
    expect(after.status).toBe(201);
    expect((await call("alice", "DELETE", `/agents/${entry.id}`)).status).toBe(404);
    const removed = await call("bob", "DELETE", `/agents/${entry.id}`);
    expect(removed.status).toBe(204);
    expect((await call("bob", "GET", `/agents/${entry.id}`)).status).toBe(404);
  });

  it("A9 a full registry refuses a new agent with 409 until one goes; renewals still pass", async () => {
    const entries: RegistryEntry[] = [];
    for (let i = 0; i < 5; i++) {
      entries.push(
        (await register("alice", card(`A${i}`, `https://a${i}.example/`), 10 + i)).entry,
      );
    }
    const full = await call("bob", "POST", "/agents", {
      card: await serveCard(card("Sixth", "https://six.example/")),
    });
    expect(await errorOf(full)).toMatchObject({ status: 409, grpc: "FAILED_PRECONDITION" });
    expect((await register("alice", card("A0 again", "https://a0.example/"))).status).toBe(200);
    expect((await call("alice", "DELETE", `/agents/${entries[1]?.id}`)).status).toBe(204);
    expect((await register("bob", card("Sixth", "https://six.example/"))).status).toBe(201);
    // An expired entry frees its place too, pruned or not.
    await registryOf().advance(12_500);
    expect((await register("bob", card("Seventh", "https://seven.example/"))).status).toBe(201);
  });

  it.each([
    ["a body that is not JSON", "{", {}, 400, []],
    ["a body not declared as JSON", "{}", { "Content-Type": "text/plain" }, 415, []],
    ["no card", { ttlSeconds: 10 }, {}, 400, ["card"]],
    ["a card that is a list", { card: [] }, {}, 400, ["card"]],
    [
      "a TTL under the minimum",
      { card: card("T", "https://t.example/"), ttlSeconds: 1 },
      {},
      400,
      ["ttlSeconds"],
    ],
    [
      "a TTL over the maximum",
      { card: card("T", "https://t.example/"), ttlSeconds: 86_401 },
      {},
      400,
      ["ttlSeconds"],
    ],
    [
      "a fractional TTL",
      { card: card("T", "https://t.example/"), ttlSeconds: 1.5 },
      {},
      400,
      ["ttlSeconds"],
    ],
    ["a card without url", { card: { name: "T" } }, {}, 400, ["card.url"]],
    [
      "a card over maxCardChars",
      { card: card("T", "https://t.example/", { pad: "x".repeat(4100) }) },
      {},
      400,
      ["card"],
    ],
    [
      "a body far over the limit",
      { card: card("T", "https://t.example/", { pad: "x".repeat(20_000) }) },
      {},
      413,
      [],
    ],
    [
      "more tags than maxTags",
      { card: card("T", "https://t.example/", { tags: ["a", "b", "c", "d", "e", "f", "g"] }) },
      {},
      400,
      ["card.tags"],
    ],
  ])(
    "A9 refuses a registration with %s (a 4xx naming the field, nothing stored)",
    async (_, body, headers, status, fields) => {
      const response = await call("alice", "POST", "/agents", body, headers);
      const error = await errorOf(response);
      expect(error.status).toBe(status);
      expect(error.fields).toStrictEqual(fields);
      expect((await discover("alice")).agents).toStrictEqual([]);
    },
  );

  it("A9 refuses bad discovery parameters, ids and methods with a 4xx", async () => {
    expect(await errorOf(await call("alice", "GET", "/agents?pageSize=4"))).toMatchObject({
      status: 400,
      fields: ["pageSize"],
    });
    expect(await errorOf(await call("alice", "GET", "/agents?pageToken=nope!"))).toMatchObject({
      status: 400,
      fields: ["pageToken"],
    });
    expect((await call("alice", "GET", "/agents/..%2F..%2Fetc")).status).toBe(404);
    expect((await call("alice", "GET", `/agents/${"x".repeat(500)}`)).status).toBe(404);
    const put = await call("alice", "PUT", "/agents");
    expect(put.status).toBe(405);
    expect(put.headers.get("Allow")).toBe("GET, POST");
    expect((await call("alice", "GET", "/nothing-here")).status).toBe(404);
  });

  it("A9 every route needs a principal (401 with a challenge); each tenant has its own registry", async () => {
    for (const [method, path] of [
      ["GET", "/agents"],
      ["POST", "/agents"],
      ["GET", `/agents/${"a".repeat(22)}`],
    ]) {
      const response = await call(null, method as string, path as string);
      expect(response.status).toBe(401);
      expect(response.headers.get("WWW-Authenticate")).toContain('header="X-API-Key"');
    }
    const wrong = await SELF.fetch(`${ORIGIN}/agents`, { headers: { "X-API-Key": "key-mallory" } });
    expect(wrong.status).toBe(401);

    const { entry } = await register("alice", card("Default tenant", "https://d.example/"));
    expect((await discover("carol")).agents).toStrictEqual([]);
    expect((await call("carol", "GET", `/agents/${entry.id}`)).status).toBe(404);
    const theirs = await register("carol", card("Default tenant", "https://d.example/"));
    expect(theirs.status).toBe(201);
    expect((await discover("alice")).agents.map((a) => a.name)).toStrictEqual(["Default tenant"]);
    await runDurableObjectAlarm(registryOf("t2"));
  });

  it("A9 a read never creates storage: an unused tenant's registry stays empty", async () => {
    const stub = registryOf("never-written");
    const before = await runInDurableObject(
      stub,
      (_, state) => inspectSchema(state.storage.sql, REGISTRY_SCHEMA).state,
    );
    expect(before).toBe("none");
    // Reached directly (no principal of that tenant exists): discover, get, heartbeat, remove.
    const rpc = stub as unknown as TestRegistry;
    expect(await rpc.discover({ tags: [], pageSize: 3, after: null })).toStrictEqual({
      ok: true,
      value: { agents: [], nextPageToken: "" },
    });
    expect((await rpc.get("a".repeat(22))).ok).toBe(false);
    expect((await rpc.heartbeat("alice", "a".repeat(22))).ok).toBe(false);
    expect((await rpc.unregister("alice", "a".repeat(22))).ok).toBe(false);
    expect(
      await runInDurableObject(
        stub,
        (_, state) => inspectSchema(state.storage.sql, REGISTRY_SCHEMA).state,
      ),
    ).toBe("none");
  });

  it("A9 a registry made by a development build answers StorageOutdated and is left as it was", async () => {
    const stub = registryOf("made-by-0x");
    const written = () =>
      runInDurableObject(stub, (_, state) => {
        const sql = state.storage.sql;
        sql.exec("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)");
        sql.exec(`CREATE TABLE IF NOT EXISTS agents (
          id TEXT PRIMARY KEY, owner TEXT NOT NULL, name TEXT NOT NULL, name_key TEXT NOT NULL,
          url TEXT NOT NULL, role TEXT NOT NULL, tags TEXT NOT NULL, card TEXT NOT NULL,
          registered_at INTEGER NOT NULL, expires_at INTEGER NOT NULL, ttl_ms INTEGER NOT NULL)`);
        sql.exec(
          "INSERT INTO meta (key, value) VALUES ('schema_version', '1') ON CONFLICT (key) DO NOTHING",
        );
        return sql.exec("SELECT type, name FROM sqlite_master ORDER BY name").toArray();
      });
    const before = await written();
    await evictDurableObject(stub);
    const log = vi.spyOn(console, "error").mockImplementation(() => {});
    const rpc = stub as unknown as TestRegistry;
    const page = await rpc.discover({ tags: [], pageSize: 3, after: null });
    expect(page).toMatchObject({
      ok: false,
      error: { kind: "StorageOutdated", metadata: { object: "registry" } },
    });
    expect((await rpc.get("a".repeat(22))).ok).toBe(false);
    expect(log).toHaveBeenCalledTimes(1);
    log.mockRestore();
    expect(await written()).toEqual(before);
  });

  it("A9 defineRegistry refuses a missing auth and bad limits", () => {
    expect(() => defineRegistry({} as never)).toThrow(/needs auth/);
    const auth = { apiKeys: { secret: "K" } };
    expect(() => defineRegistry({ auth, limits: { maxAgents: 0 } })).toThrow(/maxAgents/);
    expect(() => defineRegistry({ auth, limits: { maxCardChars: 1_000_000 } })).toThrow(
      /maxCardChars must be at most/,
    );
    expect(() =>
      defineRegistry({ auth, limits: { maxCardChars: 512 * 1024, maxPageSize: 100 } }),
    ).toThrow(/maxCardChars × maxPageSize/);
    expect(() =>
      defineRegistry({ auth, limits: { minTtlSeconds: 100, defaultTtlSeconds: 60 } }),
    ).toThrow(/TtlSeconds/);
    for (const timeoutMs of [0, 1.5, 60_000, Number.NaN]) {
      expect(() => defineRegistry({ auth, verify: { timeoutMs } })).toThrow(/verify.timeoutMs/);
    }
  });
});
