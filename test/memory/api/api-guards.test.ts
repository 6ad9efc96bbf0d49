import { createExecutionContext, env, waitOnExecutionContext } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { defineAgent } from "../../../src/index";
import type { MemoryScope } from "../../../src/memory/base/scope-key";
import { memory } from "../../../src/memory/index";
import { type Caller, headersOf, newCaller } from "../../harness/memory/support";
import { BASE, userMessage } from "../../support/helpers";

type Json = Record<string, unknown>;

/**
 * Agents whose memory is kept per conversation: by the built-in `"context"` scope, and by
 * a scope function keyed on the conversation alone (a team's shared notes, say). Their
 * conversations are the handler agent's objects (HANDLER_CONTEXT), which answer any message.
 */
function agentWith(scope: MemoryScope) {
  return defineAgent({
    card: {
      name: "Memory guard test agent",
      description: "Keeps memory per conversation.",
      url: "http://agent.test/",
      skills: [{ id: "s", name: "S", description: "S", tags: ["s"] }],
    },
    bindings: { context: "HANDLER_CONTEXT", index: "HANDLER_INDEX" },
    auth: {
      authenticate: (request) => {
        const user = request.headers.get("X-User");
        return user ? { subject: user, tenant: request.headers.get("X-Tenant") ?? "" } : null;
      },
    },
    memory: memory({ scope, api: { operatorSecret: "MEMORY_OPERATOR_KEY" } }),
    handler: () => "noted",
  });
}

const byContext = agentWith("context");
const byConversationOnly = agentWith((who) => (who.contextId ? `notes:${who.contextId}` : ""));

async function call(
  agent: ReturnType<typeof agentWith>,
  caller: Caller,
  method: string,
  path: string,
  init: { body?: string; type?: string } = {},
): Promise<{ status: number; body: Json }> {
  const ctx = createExecutionContext();
  const headers: Record<string, string> = { ...headersOf(caller) };
  if (init.body !== undefined) headers["Content-Type"] = init.type ?? "application/json";
  const response = await agent.fetch(
    new Request(`${BASE}${path}`, { method, headers, body: init.body }),
    env as never,
    ctx,
  );
  await waitOnExecutionContext(ctx);
  const text = await response.text();
  return { status: response.status, body: text ? (JSON.parse(text) as Json) : {} };
}

/** A conversation of `caller`'s with the agent: its issued context id. */
async function conversationOf(agent: ReturnType<typeof agentWith>, caller: Caller) {
  const { status, body } = await call(agent, caller, "POST", "/", {
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "SendMessage",
      params: { message: userMessage("hello") },
    }),
  });
  expect(status, JSON.stringify(body)).toBe(200);
  const result = body.result as { task?: Json; message?: Json };
  return String((result.task ?? result.message)?.contextId);
}

const facts = async (agent: ReturnType<typeof agentWith>, caller: Caller, contextId: string) => {
  const { status, body } = await call(agent, caller, "GET", `/memory?contextId=${contextId}`);
  expect(status, JSON.stringify(body)).toBe(200);
  return ((body.items as Json[]) ?? []).map((f) => f.claim);
};

const fact = (claim: string) => ({ body: JSON.stringify({ claim }) });

describe("the memory API's context ids are verified for the caller", () => {
  it("K8: a caller cannot read or write the memory of another caller's conversation", async () => {
    const alice = newCaller("alice");
    const mallory = newCaller("mallory");
    const agent = byConversationOnly;
    const contextId = await conversationOf(agent, alice);
    const added = await call(agent, alice, "POST", `/memory/facts?contextId=${contextId}`, {
      ...fact("The launch code hint is blue."),
    });
    expect(added.status, JSON.stringify(added.body)).toBe(200);

    const read = await call(agent, mallory, "GET", `/memory?contextId=${contextId}`);
    expect(read.status).toBeGreaterThanOrEqual(400);
    expect(read.status).toBeLessThan(500);
    expect(JSON.stringify(read.body)).toContain("query.contextId");
    const planted = await call(agent, mallory, "POST", `/memory/facts?contextId=${contextId}`, {
      ...fact("Planted by another caller."),
    });
    expect(planted.status).toBe(400);
    expect(JSON.stringify(planted.body)).toContain("query.contextId");
    const erased = await call(agent, mallory, "DELETE", `/memory?contextId=${contextId}`);
    expect(erased.status).toBeGreaterThanOrEqual(400);
    // Alice's memory is as she left it.
    expect(await facts(agent, alice, contextId)).toEqual(["The launch code hint is blue."]);
  });

  it("K8: a context id this agent never issued is refused, naming the field, and stores nothing", async () => {
    const alice = newCaller("alice");
    for (const agent of [byContext, byConversationOnly]) {
      for (const forged of ["made-up-conversation", `${"c".repeat(40)}`]) {
        const write = await call(agent, alice, "POST", `/memory/facts?contextId=${forged}`, {
          ...fact("Into a conversation that does not exist."),
        });
        expect(write.status, JSON.stringify(write.body)).toBe(400);
        expect(JSON.stringify(write.body)).toContain("query.contextId");
        const read = await call(agent, alice, "GET", `/memory?contextId=${forged}`);
        expect([400, 404], JSON.stringify(read.body)).toContain(read.status);
        expect(JSON.stringify(read.body)).toContain("query.contextId");
      }
    }
    // A conversation the caller does have works as before.
    const contextId = await conversationOf(byContext, alice);
    expect(
      (await call(byContext, alice, "POST", `/memory/facts?contextId=${contextId}`, fact("Ok.")))
        .status,
    ).toBe(200);
    expect(await facts(byContext, alice, contextId)).toEqual(["Ok."]);
  });
});

describe("the memory API's bodies must be JSON", () => {
  it("K8: a text/plain or form body is refused with 415 and plants nothing", async () => {
    const alice = newCaller("alice");
    const agent = agentWith("owner");
    const before = await call(agent, alice, "GET", "/memory?kind=fact");
    expect(before.status).toBe(200);
    const cases = [
      { type: "text/plain", body: JSON.stringify({ claim: "Planted by a cross-site form." }) },
      { type: "application/x-www-form-urlencoded", body: "claim=Planted" },
      {
        type: "multipart/form-data; boundary=x",
        body: '--x\r\nContent-Disposition: form-data; name="claim"\r\n\r\nPlanted\r\n--x--',
      },
    ];
    for (const c of cases) {
      for (const [method, path] of [
        ["POST", "/memory/facts"],
        ["POST", "/memory/goals"],
        ["POST", "/memory/search"],
      ] as const) {
        const refused = await call(agent, alice, method, path, c);
        expect(refused.status, `${method} ${path} ${c.type}`).toBe(415);
        expect(JSON.stringify(refused.body)).toContain("Content-Type");
      }
    }
    const after = await call(agent, alice, "GET", "/memory?kind=fact");
    expect(after.body).toEqual(before.body);
  });
});
