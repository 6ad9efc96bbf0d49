import { SELF } from "cloudflare:test";
import { beforeEach, describe, expect, it } from "vitest";
import {
  A2AConnectionError,
  AgentNotFoundError,
  InvalidParamsError,
  PermissionDeniedError,
  RegistryClient,
  RegistryFullError,
  UnauthenticatedError,
} from "../../src/client";
import { registryOf, resetRegistry, serveCard } from "../harness/registry/helpers";

const ORIGIN = "https://registry.example.com";
const client = (apiKey?: string) =>
  new RegistryClient(`${ORIGIN}/`, {
    ...(apiKey ? { auth: { apiKey } } : {}),
    fetch: (input, init) => SELF.fetch(input, init),
  });
/** A card, served at its URL as its agent would serve it (the registry reads it there). */
const card = (name: string, url: string, tags: string[] = []) => serveCard({ name, url, tags });

beforeEach(resetRegistry);

describe("RegistryClient (A9)", () => {
  it("A9 registers, finds across pages, renews and removes through the client", async () => {
    const alice = client("key-alice");
    const entries = [];
    for (const n of ["a", "b", "c", "d"]) {
      entries.push(
        await alice.register(await card(`Agent ${n}`, `https://${n}.example/`, ["Team"]), {
          ttlSeconds: 30,
        }),
      );
    }
    // Pages of at most 3 (the test registry's maxPageSize): the iterator follows the token.
    const found = [];
    for await (const entry of alice.discoverAll({ tags: ["team"], pageSize: 3 }))
      found.push(entry.name);
    expect(found).toStrictEqual(["Agent a", "Agent b", "Agent c", "Agent d"]);
    expect((await alice.discover({ name: "agent b" })).agents.map((e) => e.id)).toStrictEqual([
      entries[1]?.id,
    ]);

    await registryOf().advance(20_000);
    const renewed = await alice.heartbeat(entries[0]?.id ?? "");
    expect(Date.parse(renewed.expiresAt)).toBeGreaterThan(Date.parse(entries[0]?.expiresAt ?? ""));
    await alice.unregister(entries[0]?.id ?? "");
    await expect(alice.get(entries[0]?.id ?? "")).rejects.toBeInstanceOf(AgentNotFoundError);
  });

  it("A9 a token source is asked again once after a 401, as the A2A client does", async () => {
    const asked: boolean[] = [];
    const client = new RegistryClient(ORIGIN, {
      auth: {
        bearer: ({ refresh }) => {
          asked.push(refresh);
          return refresh ? "key-alice" : "expired";
        },
      },
      // The test registry takes API keys: the bearer token is passed on as one.
      fetch: (input, init) => {
        const headers = new Headers(init?.headers);
        headers.set("X-API-Key", (headers.get("Authorization") ?? "").replace(/^Bearer /, ""));
        return SELF.fetch(input, { ...init, headers });
      },
    });
    expect((await client.discover()).agents).toStrictEqual([]);
    expect(asked).toStrictEqual([false, true]);
  });

  it("A9 the registry's refusals arrive as the client's typed errors", async () => {
    await expect(client().discover()).rejects.toBeInstanceOf(UnauthenticatedError);
    const bad = await client("key-alice")
      .register({ name: "No url" })
      .catch((e: unknown) => e);
    expect(bad).toBeInstanceOf(InvalidParamsError);
    expect((bad as InvalidParamsError).fieldViolations.map((v) => v.field)).toStrictEqual([
      "card.url",
    ]);
    const held = await card("Held", "https://held.example/");
    await client("key-alice").register(held);
    await expect(client("key-bob").register(held)).rejects.toBeInstanceOf(PermissionDeniedError);
    for (let i = 0; i < 4; i++)
      await client("key-bob").register(await card(`F${i}`, `https://f${i}.example/`));
    await expect(
      client("key-bob").register(await card("Too many", "https://x.example/")),
    ).rejects.toBeInstanceOf(RegistryFullError);
    const down = new RegistryClient("https://registry.invalid", {
      fetch: () => Promise.reject(new TypeError("network down")),
    });
    await expect(down.get("a".repeat(22))).rejects.toBeInstanceOf(A2AConnectionError);
  });
});
