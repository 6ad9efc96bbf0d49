import { createExecutionContext, env, waitOnExecutionContext } from "cloudflare:test";
import { beforeAll, describe, expect, it } from "vitest";
import type { Agent } from "../../../src/agent/definition";
import { defineAgent } from "../../../src/index";
import { OPERATOR_HEADER } from "../../../src/memory/api/memory-api";
import { memory } from "../../../src/memory/index";
import { agentRoutes } from "../../../src/worker/app/agent-routes";
import { type Caller, headersOf, newCaller } from "../../harness/memory/support";
import { BASE } from "../../support/helpers";

/**
 * The memory routes of the agent's route table (test/worker/route-table.test.ts walks the
 * rest), each given the same hostile requests chosen by what it declares: no credential, a
 * wrong operator key, a wrong media type, an oversize body, a burst past the rate limit,
 * another tenant, another owner's item ids, a forged `?contextId=`. Each gets its 4xx; a
 * refusal names no memory object, and the owner's memory reads the same afterwards.
 */

type Json = Record<string, unknown>;
const MAX_BODY = 4096;

const agent = defineAgent({
  card: {
    name: "Memory route table test agent",
    description: "Serves its memory API.",
    url: "http://agent.test/",
    skills: [{ id: "s", name: "S", description: "S", tags: ["s"] }],
  },
  bindings: { context: "HANDLER_CONTEXT", index: "HANDLER_INDEX" },
  maxBodyBytes: MAX_BODY,
  auth: {
    authenticate: (request) => {
      const user = request.headers.get("X-User");
      return user ? { subject: user, tenant: request.headers.get("X-Tenant") ?? "" } : null;
    },
  },
  memory: memory({ api: { operatorSecret: "MEMORY_OPERATOR_KEY" } }),
  handler: () => "ok",
});
const MEMORY_ROUTES = agentRoutes(agent.agent as Agent<unknown>)
  .flat()
  .filter((e) => e.id.startsWith("memory "));

function limiter(allowed: number) {
  const counts = new Map<string, number>();
  return {
    limit: async ({ key }: { key: string }) => {
      const n = (counts.get(key) ?? 0) + 1;
      counts.set(key, n);
      return { success: n <= allowed };
    },
  };
}

const touched: string[] = [];
const memoryNs = (env as unknown as Record<string, DurableObjectNamespace>)
  .EDGELINK_MEMORY as DurableObjectNamespace;
const watchedMemory = {
  idFromName: (name: string) => {
    touched.push(name);
    return memoryNs.idFromName(name);
  },
  idFromString: (id: string) => {
    touched.push(id);
    return memoryNs.idFromString(id);
  },
  get: (id: DurableObjectId) => memoryNs.get(id),
};
const open = { ...env, EDGELINK_PRINCIPAL_RATE_LIMIT: limiter(1e9) };
const guarded = { ...open, EDGELINK_MEMORY: watchedMemory };
const burst = { ...guarded, EDGELINK_PRINCIPAL_RATE_LIMIT: limiter(0) };

async function call(
  method: string,
  path: string,
  init: { headers?: Record<string, string>; body?: string; env?: object } = {},
) {
  const ctx = createExecutionContext();
  const request = new Request(`${BASE}${path}`, { method, headers: init.headers, body: init.body });
  const response = await agent.fetch(request, (init.env ?? guarded) as never, ctx);
  const text = await response.text();
  await waitOnExecutionContext(ctx);
  return { status: response.status, text, body: (text ? JSON.parse(text) : {}) as Json };
}

const json = (headers: Record<string, string>) => ({
  ...headers,
  "Content-Type": "application/json",
});

let alice: Caller;
let factId = "";
async function aliceState(): Promise<string> {
  const facts = await call("GET", "/memory?kind=fact", { headers: headersOf(alice), env: open });
  expect(facts.status).toBe(200);
  return JSON.stringify(facts.body);
}

/** A path made concrete: Alice's fact, the tenant given (hers is the default ""). */
const concrete = (pattern: string, tenant: string) =>
  pattern.replace("/:tenant", `/${tenant}`).replace(":kind", "fact").replace(":id", factId);

/** A body each route would serve. */
const VALID: Record<string, Json> = {
  "POST /memory/search": { text: "anything" },
  "POST /memory/goals": { title: "A goal" },
  "POST /memory/entities": { name: "Ana", type: "Person" },
};
const validBody = (id: string) =>
  JSON.stringify(VALID[id.slice("memory ".length)] ?? { claim: "x" });

async function hostile(
  what: string,
  method: string,
  path: string,
  init: { headers?: Record<string, string>; body?: string; env?: object },
  quiet = true,
) {
  touched.length = 0;
  const answer = await call(method, path, init);
  expect(answer.status, `${what}: ${answer.text.slice(0, 300)}`).toBeGreaterThanOrEqual(400);
  expect(answer.status, `${what}: ${answer.text.slice(0, 300)}`).toBeLessThan(500);
  if (quiet) expect(touched, `${what} named a memory`).toEqual([]);
  return answer;
}

beforeAll(async () => {
  alice = newCaller("alice");
  const added = await call("POST", "/memory/facts", {
    headers: json(headersOf(alice)),
    body: JSON.stringify({ claim: "The user's locker code hint is green." }),
    env: open,
  });
  expect(added.status, added.text).toBe(200);
  factId = String(((added.body.results as Json[])[0] as Json).id);
  // The start-up check probes the objects once per env: done before anything is watched.
  for (const each of [guarded, burst])
    await call("GET", "/.well-known/agent-card.json", { env: each });
});

describe("the memory routes of the route table", () => {
  it("K8: every memory route answers the hostile set with its 4xx and changes nothing", async () => {
    expect(MEMORY_ROUTES.map((e) => e.id).sort()).toEqual(
      [
        "memory DELETE /memory",
        "memory DELETE /memory/:kind/:id",
        "memory GET /memory",
        "memory GET /memory/:kind/:id",
        "memory POST /memory/entities",
        "memory POST /memory/facts",
        "memory POST /memory/goals",
        "memory POST /memory/search",
        "memory PUT /memory/facts/:id",
      ].sort(),
    );
    const before = await aliceState();
    const bob = newCaller("bob");
    const eve = newCaller("eve", "t2");
    for (const entry of MEMORY_ROUTES) {
      const g = entry.guards;
      const method = entry.methods[0] as string;
      const path = concrete(entry.paths[0] as string, "");
      const body = g.body === "none" ? undefined : validBody(entry.id);
      const name = entry.id;
      expect(g.auth).toBe("caller-or-operator");
      expect(g.contextIds).toMatchObject({ in: "query", name: "contextId" });

      const anonymous = await hostile(`${name} no credentials`, method, path, {
        headers: json({}),
        body,
      });
      expect(anonymous.status, name).toBe(401);
      const operator = await hostile(`${name} wrong operator key`, method, `${path}?scope=x`, {
        headers: json({ ...headersOf(alice), [OPERATOR_HEADER]: "not-the-operator-key-at-all" }),
        body,
      });
      expect(operator.status, name).toBe(403);

      if (g.body !== "none") {
        for (const type of ["text/plain", "application/x-www-form-urlencoded"]) {
          const refused = await hostile(`${name} ${type}`, method, path, {
            headers: { ...headersOf(alice), "Content-Type": type },
            body: body ?? "",
          });
          expect(refused.status, `${name} ${type}`).toBe(415);
        }
        const oversize = await hostile(`${name} oversize`, method, path, {
          headers: json(headersOf(alice)),
          body: JSON.stringify({ claim: "x".repeat(MAX_BODY) }),
        });
        expect(oversize.status, name).toBe(413);
      }

      expect(g.rateLimit).toBe("path");
      const limited = await hostile(`${name} burst`, method, path, {
        headers: json(headersOf(alice)),
        body,
        env: burst,
      });
      expect(limited.status, name).toBe(429);

      const tenanted = entry.paths.find((p) => p.startsWith("/:tenant")) as string;
      const foreign = await hostile(`${name} another tenant`, method, concrete(tenanted, "t2"), {
        headers: json(headersOf(alice)),
        body,
      });
      expect(foreign.status, name).toBe(403);

      const separator = path.includes("?") ? "&" : "?";
      for (const forged of ["forged-context", "c".repeat(43)]) {
        const refused = await hostile(
          `${name} forged context`,
          method,
          `${path}${separator}contextId=${forged}`,
          { headers: json(headersOf(alice)), body },
        );
        expect(refused.text, name).toContain("query.contextId");
        expect(refused.status, name).toBe(400);
      }

      // Another owner's item, and another tenant's caller: not found (their own memory
      // is asked, so an object is named; nothing of Alice's is read or changed).
      if (path.includes(factId)) {
        for (const who of [bob, eve]) {
          const answer = await hostile(
            `${name} another owner`,
            method,
            path,
            { headers: json(headersOf(who)), body },
            false,
          );
          expect(answer.status, `${name} ${who.user}`).toBe(404);
          expect(answer.text).not.toContain("locker");
        }
      }
    }
    expect(await aliceState()).toBe(before);
  });
});
