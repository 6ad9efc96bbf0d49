/**
 * A handler-written agent's deliberate memory (`ctx.memory`, test/harness/memory/handler-worker.ts):
 * the caller's memory with the same scope, limits and isolation as a model turn's.
 */
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { Agent } from "../../../src/agent/definition";
import { withHandlerMemory } from "../../../src/agent/memory-source";
import type { RunContext } from "../../../src/agent/run-context";
import { handlerAgent } from "../../harness/memory/handler-worker";
import { type Caller, claims, headersOf, memoryApi, newCaller } from "../../harness/memory/support";
import { rpc, userMessage } from "../../support/helpers";

type Json = Record<string, unknown>;

/** A blocking SendMessage to the handler agent as `caller`: the task. */
async function askHandler(caller: Caller, text: string): Promise<Json> {
  const { body } = await rpc(
    "SendMessage",
    { message: userMessage(text) },
    { headers: { ...headersOf(caller), "X-Agent": "handler" } },
  );
  if (!body.result) throw new Error(`SendMessage failed: ${JSON.stringify(body.error)}`);
  return (body.result as { task: Json }).task;
}

/** What the handler answered, parsed; fails the test when the task did not complete. */
async function handlerSays(caller: Caller, text: string): Promise<Json> {
  const task = await askHandler(caller, text);
  const status = task.status as { state: string; message?: { parts: { text?: string }[] } };
  if (status.state !== "TASK_STATE_COMPLETED") {
    throw new Error(`${text}: ${status.state} ${JSON.stringify(status.message)}`);
  }
  const artifacts = (task.artifacts as { parts: { text?: string }[] }[]) ?? [];
  return JSON.parse(artifacts.flatMap((a) => a.parts.map((p) => p.text ?? "")).join("")) as Json;
}

/** The reason a handler's task failed with. */
async function failureOf(caller: Caller, text: string): Promise<string> {
  const task = await askHandler(caller, text);
  const status = task.status as { state: string; message?: { parts: { text?: string }[] } };
  expect(status.state).toBe("TASK_STATE_FAILED");
  return status.message?.parts.map((p) => p.text ?? "").join("") ?? "";
}

const recalledClaims = (answer: Json) =>
  ((answer.bundle as { facts: { claim: string }[] }).facts ?? []).map((f) => f.claim);

describe("a handler's own memory (ctx.memory)", () => {
  it("K8 a handler remembers and recalls deliberately: the bundle and the section a model turn gets", async () => {
    const alice = newCaller("alice");
    expect(await handlerSays(alice, "has memory?")).toEqual({ memory: true });
    const stored = await handlerSays(alice, "remember The user drinks oolong tea");
    expect(stored).toMatchObject({ results: [{ status: "added" }] });
    const again = await handlerSays(alice, "remember the user  DRINKS oolong tea");
    expect(again).toMatchObject({ results: [{ status: "duplicate" }] });

    const recalled = await handlerSays(alice, "recall what tea does the user drink");
    expect(recalledClaims(recalled)).toEqual(["The user drinks oolong tea"]);
    expect(recalled.section).toBe(
      "## What you remember about this user\n\nFacts:\n- The user drinks oolong tea (stated by the user)",
    );
    // Same scope as the API and model turns: the user's own memory, stated by the user,
    // with the task that wrote it.
    expect(await claims(alice)).toEqual(["The user drinks oolong tea"]);
    const { body } = await memoryApi(alice, "GET", "/memory?kind=fact");
    expect((body.items as Json[])[0]).toMatchObject({ source: "user_stated" });
    expect(typeof (body.items as Json[])[0]?.taskId).toBe("string");

    // Operations: a correction supersedes, and the old claim is no longer recalled.
    const id = (body.items as Json[])[0]?.id as string;
    const ops = [{ op: "supersede_fact", id, claim: "The user drinks green tea" }];
    expect(await handlerSays(alice, `ops ${JSON.stringify(ops)}`)).toMatchObject({
      results: [{ status: "updated" }],
    });
    expect(recalledClaims(await handlerSays(alice, "recall tea"))).toEqual([
      "The user drinks green tea",
    ]);
  });

  it("K8 a handler reaches only its caller's memory: isolated across owners and tenants", async () => {
    const alice = newCaller("alice", "tenant-a");
    const bob = newCaller("bob", "tenant-a");
    const aliceElsewhere = { ...alice, tenant: "tenant-b" };
    await handlerSays(alice, "remember Alice's locker code is 4411");
    expect(recalledClaims(await handlerSays(alice, "recall locker code"))).toEqual([
      "Alice's locker code is 4411",
    ]);
    expect(recalledClaims(await handlerSays(bob, "recall locker code"))).toEqual([]);
    expect((await handlerSays(bob, "recall locker code")).section).toBe("");
    expect(recalledClaims(await handlerSays(aliceElsewhere, "recall locker code"))).toEqual([]);
    await handlerSays(bob, "remember Bob's locker code is 9000");
    expect(recalledClaims(await handlerSays(alice, "recall locker code"))).toEqual([
      "Alice's locker code is 4411",
    ]);
    expect(await claims(bob)).toEqual(["Bob's locker code is 9000"]);
    expect(await claims(aliceElsewhere)).toEqual([]);
    // Naming another memory's fact by id changes nothing there.
    const { body } = await memoryApi(alice, "GET", "/memory?kind=fact");
    const aliceFact = (body.items as Json[])[0]?.id as string;
    const ops = [{ op: "delete_fact", id: aliceFact }];
    expect(await handlerSays(bob, `ops ${JSON.stringify(ops)}`)).toMatchObject({
      results: [{ status: "refused" }],
    });
    expect(await claims(alice)).toEqual(["Alice's locker code is 4411"]);
  });

  it("K7 a handler's writes and recalls obey the memory's limits; a refusal fails the task with its reason", async () => {
    const carol = newCaller("carol");
    // maxItemBytes (4,096 by default): the store refuses, naming the field.
    expect(await failureOf(carol, `remember ${"x".repeat(5_000)}`)).toMatch(/ops\.0\.claim/);
    // More than 100 operations in one batch.
    const many = Array.from({ length: 101 }, (_, i) => ({ op: "add_fact", claim: `fact ${i}` }));
    expect(await failureOf(carol, `ops ${JSON.stringify(many)}`)).toMatch(/ops/);
    expect(await claims(carol)).toEqual([]);
    // The recall's budget is the agent's (200 tokens here, about 800 characters).
    const long = Array.from({ length: 12 }, (_, i) => ({
      op: "add_fact",
      claim: `Trip note ${i}: ${"the user packs light for every trip ".repeat(3)}`,
    }));
    await handlerSays(carol, `ops ${JSON.stringify(long)}`);
    const recalled = await handlerSays(carol, "recall trip note packs light");
    const bundle = recalled.bundle as { tokens: number; truncated: boolean; facts: unknown[] };
    expect(bundle.tokens).toBeLessThanOrEqual(200);
    expect(bundle.truncated).toBe(true);
    expect(bundle.facts.length).toBeGreaterThan(0);
    expect(bundle.facts.length).toBeLessThan(12);
  });

  it("K8 no memory for a caller without a scope, and none for an agent without memory", async () => {
    const anonymous = { tenant: "", owner: "", background: () => {}, mergeMetadata: () => {} };
    const ctx = () =>
      ({
        taskId: "t",
        contextId: "c",
        env,
        message: { parts: [{ type: "text", content: "has memory?" }] },
      }) as unknown as RunContext;
    // The handler agent with memory on: an anonymous caller's run has no ctx.memory.
    const withMemory = withHandlerMemory(
      () => handlerAgent.agent as Agent<unknown>,
      () => anonymous,
    );
    expect(withMemory()).toBe(withMemory());
    expect(await withMemory().handler?.(ctx())).toBe(JSON.stringify({ memory: false }));
    const signedIn = withHandlerMemory(
      () => handlerAgent.agent as Agent<unknown>,
      () => ({ ...anonymous, owner: "someone" }),
    );
    expect(await signedIn().handler?.(ctx())).toBe(JSON.stringify({ memory: true }));

    // An agent without memory runs its handler as given: nothing is added to its context.
    const plain = { ...handlerAgent.agent, memory: null } as Agent<unknown>;
    expect(
      withHandlerMemory(
        () => plain,
        () => anonymous,
      )(),
    ).toBe(plain);
  });
});
