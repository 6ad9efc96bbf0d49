import { env, evictDurableObject, runInDurableObject } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { Model } from "../../src/providers/base/types";
import { fallback } from "../../src/providers/fallback";
import { openai } from "../../src/providers/openai/openai-chat";
import { indexObjectName } from "../../src/storage/ids";
import { defineAgent } from "../../src/worker/app/define-agent";
import { BASE, userMessage } from "../support/helpers";

type Json = Record<string, unknown>;

/** A fresh agent each time: the check's memo is per agent and per env object. */
function agentWith(model?: Model) {
  return defineAgent({
    card: { name: "Checked", description: "Start-up checks" },
    ...(model ? { model } : { handler: () => "ok" }),
  });
}

const card = (worker: ReturnType<typeof agentWith>, e: object, origin = BASE) =>
  worker.app.request(`${origin}/.well-known/agent-card.json`, {}, e);

const rpcSend = (worker: ReturnType<typeof agentWith>, e: object) =>
  worker.app.request(
    `${BASE}/`,
    {
      method: "POST",
      headers: { "Content-Type": "application/json", "A2A-Version": "1.0" },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "SendMessage",
        params: { message: userMessage("hi") },
      }),
    },
    e,
  );

async function misconfigured(response: Response): Promise<string> {
  expect(response.status).toBe(503);
  const body = (await response.json()) as { error: Json };
  expect(body.error.status).toBe("UNAVAILABLE");
  const info = (body.error.details as Json[])[0] as Json;
  expect(info.reason).toBe("MISCONFIGURED");
  return String(body.error.message);
}

afterEach(() => vi.restoreAllMocks());

describe("the start-up check: a misconfigured Worker answers every request with what to fix", () => {
  it("a configured Worker serves, and its check ran once for the env (memoized)", async () => {
    const worker = agentWith();
    let probes = 0;
    const index = env.EDGELINK_INDEX;
    const counted = {
      ...env,
      EDGELINK_INDEX: {
        idFromName: (name: string) => index.idFromName(name),
        get: (id: DurableObjectId) => {
          probes++;
          return index.get(id);
        },
      },
    };
    expect((await card(worker, counted)).status).toBe(200);
    expect((await card(worker, counted)).status).toBe(200);
    expect((await rpcSend(worker, counted)).status).toBe(200);
    // One probe for the check; SendMessage reaches the index only from the object's outbox.
    expect(probes).toBe(1);
  });

  it("a missing EDGELINK_INDEX binding: the card, HTTP+JSON and JSON-RPC all answer 503 naming it, logged once", async () => {
    const worker = agentWith();
    const log = vi.spyOn(console, "error").mockImplementation(() => {});
    const { EDGELINK_INDEX: _, ...withoutIndex } = env;
    const message = await misconfigured(await card(worker, withoutIndex));
    expect(message).toContain("EDGELINK_INDEX is not bound");
    expect(message).toContain('class_name = "EdgelinkIndex"');
    const rest = await worker.app.request(`${BASE}/tasks`, {}, withoutIndex);
    expect(await misconfigured(rest)).toBe(message);
    const rpc = await rpcSend(worker, withoutIndex);
    expect(rpc.status).toBe(503);
    const body = (await rpc.json()) as {
      jsonrpc: string;
      error: { code: number; message: string };
    };
    expect(body.jsonrpc).toBe("2.0");
    expect(body.error.code).toBe(-32603);
    expect(body.error.message).toBe(message);
    expect(log).toHaveBeenCalledTimes(1);
    expect(String(log.mock.calls[0]?.[0])).toContain("EDGELINK_INDEX is not bound");
  });

  it("a binding that is not a Durable Object namespace is named", async () => {
    const message = await misconfigured(
      await card(agentWith(), { ...env, EDGELINK_CONTEXT: "oops" }),
    );
    expect(message).toContain("EDGELINK_CONTEXT is not a Durable Object binding");
  });

  it("a runtime whose SQLite lacks jsonb_each is named (an object answering as an older workerd would)", async () => {
    vi.spyOn(console, "error").mockImplementation(() => {});
    // The installed workerd has jsonb_each whatever the date, so the object's answer is
    // stood in for here; the report itself is read from real storage in the case above.
    const old = {
      idFromName: () => ({}),
      get: () => ({
        storageReport: async () => ({
          sqlite: true,
          jsonb: false,
          detail: "no such table: jsonb_each",
        }),
      }),
    };
    const message = await misconfigured(await card(agentWith(), { ...env, EDGELINK_INDEX: old }));
    expect(message).toContain(
      "the Durable Objects' SQLite has no jsonb_each (no such table: jsonb_each), so task lists would come back empty",
    );
  });

  it("an index left by a development build (the default tenant's first shard) is named with what to do; the check writes nothing", async () => {
    vi.spyOn(console, "error").mockImplementation(() => {});
    // A shard count no other test uses: this object keeps its development-build tables for the run.
    const shards = 37;
    const shard = env.EDGELINK_INDEX.get(
      env.EDGELINK_INDEX.idFromName(indexObjectName("", "", 0, shards)),
    );
    const old = () =>
      runInDurableObject(shard, (_i, state) => {
        const sql = state.storage.sql;
        sql.exec("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)");
        sql.exec(`CREATE TABLE IF NOT EXISTS task_index (
          task_id TEXT PRIMARY KEY, context_id TEXT NOT NULL, state TEXT NOT NULL,
          created_at TEXT NOT NULL, updated_at TEXT NOT NULL)`);
        sql.exec(
          "INSERT INTO meta (key, value) VALUES ('schema_version', '3') ON CONFLICT (key) DO NOTHING",
        );
        return sql.exec("SELECT type, name, sql FROM sqlite_master").toArray();
      });
    const before = await old();
    await evictDurableObject(shard);
    const worker = defineAgent({
      card: { name: "Upgraded", description: "Deployed over development-build storage" },
      handler: () => "ok",
      limits: { indexShards: shards },
    });
    const message = await misconfigured(await card(worker, env));
    expect(message).toContain(
      "EDGELINK_INDEX: This index object's storage holds an unversioned development build's schema, migration 3",
    );
    expect(message).toContain("the unversioned development builds before 0.1.0");
    expect(message).not.toContain("0.x");
    expect(message).toContain("'Upgrading from a development build' in docs/operations.md");
    expect(await old()).toEqual(before);
  });

  it("EDGELINK_ID_KEY: too short anywhere, or missing when deployed, is named with the command that fixes it", async () => {
    vi.spyOn(console, "error").mockImplementation(() => {});
    const short = await misconfigured(
      await card(agentWith(), { ...env, EDGELINK_ID_KEY: "changeme" }),
    );
    expect(short).toContain(
      "EDGELINK_ID_KEY must be a secret of at least 32 characters (it has 8)",
    );
    expect(short).toContain("npx wrangler secret put EDGELINK_ID_KEY");
    const { EDGELINK_ID_KEY: _, ...keyless } = env as typeof env & { EDGELINK_ID_KEY: string };
    const missing = await misconfigured(await card(agentWith(), keyless));
    expect(missing).toContain("EDGELINK_ID_KEY is not set");
  });

  it("EDGELINK_ID_KEY missing under wrangler dev (localhost): served, with a warning that names it", async () => {
    const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
    const { EDGELINK_ID_KEY: _, ...keyless } = env as typeof env & { EDGELINK_ID_KEY: string };
    const response = await card(agentWith(), keyless, "http://localhost:8787");
    expect(response.status).toBe(200);
    expect(String(warn.mock.calls[0]?.[0])).toContain("EDGELINK_ID_KEY is not set");
  });

  it("EDGELINK_ID_KEY missing under wrangler dev: a first request from elsewhere (a tunnel, another Worker) is refused, and this machine's requests are still served", async () => {
    vi.spyOn(console, "error").mockImplementation(() => {});
    vi.spyOn(console, "warn").mockImplementation(() => {});
    const { EDGELINK_ID_KEY: _, ...keyless } = env as typeof env & { EDGELINK_ID_KEY: string };
    const agent = agentWith();
    const remote = await card(agent, keyless, "http://dummy");
    expect(await misconfigured(remote)).toContain("EDGELINK_ID_KEY is not set");
    expect((await card(agent, keyless, "http://localhost:8787")).status).toBe(200);
    expect((await card(agent, keyless, "http://127.0.0.1:8787")).status).toBe(200);
    expect((await card(agent, keyless, "https://tunnel.example.com")).status).toBe(503);
  });

  it("a model without its key secret, or with a base URL missing /v1 or not https, is named", async () => {
    vi.spyOn(console, "error").mockImplementation(() => {});
    const keyless = await misconfigured(
      await card(agentWith(openai({ model: "gpt-4o-mini" })), env),
    );
    expect(keyless).toContain(
      "OPENAI_API_KEY is not set (or empty): the model openai (gpt-4o-mini)",
    );
    const empty = await misconfigured(
      await card(agentWith(openai({ model: "gpt-4o-mini" })), { ...env, OPENAI_API_KEY: "" }),
    );
    expect(empty).toContain("OPENAI_API_KEY is not set (or empty)");
    const unversioned = await misconfigured(
      await card(
        agentWith(
          openai({ model: "gpt-4o-mini", apiKey: "sk-x", baseUrl: "https://api.openai.com" }),
        ),
        env,
      ),
    );
    expect(unversioned).toContain("has no version segment (got https://api.openai.com)");
    expect(unversioned).toContain("did you mean https://api.openai.com/v1?");
    const clear = await misconfigured(
      await card(
        agentWith(
          openai({ model: "gpt-4o-mini", apiKey: "sk-x", baseUrl: "http://proxy.example/v1" }),
        ),
        env,
      ),
    );
    expect(clear).toContain("must be https");
    const configured = agentWith(openai({ model: "gpt-4o-mini" }));
    expect((await card(configured, { ...env, OPENAI_API_KEY: "sk-x" })).status).toBe(200);
  });

  it("a fallback answers when one member is configured; with none, each member's problem is named", async () => {
    vi.spyOn(console, "error").mockImplementation(() => {});
    const model = fallback([
      openai({ model: "gpt-4o-mini" }),
      openai({ model: "gpt-4.1-mini", apiKey: "sk-x", baseUrl: "https://api.example.com" }),
    ]);
    const message = await misconfigured(await card(agentWith(model), env));
    expect(message).toContain("OPENAI_API_KEY is not set");
    expect(message).toContain("has no version segment (got https://api.example.com)");
    const one = fallback([
      openai({ model: "gpt-4o-mini" }),
      openai({ model: "gpt-4.1-mini", apiKey: "k" }),
    ]);
    expect((await card(agentWith(one), env)).status).toBe(200);
  });
});
