/**
 * Edgelink's A2A client against Edgelink's own demo worker (wrangler + workerd + Durable
 * Objects), over both bindings: every operation, typed errors with ErrorInfo and field
 * violations, exact resumption with Last-Event-ID after a cut connection, and the
 * Edgelink-only history and compaction calls.
 */
// @ts-nocheck -- Node-only test (the repository has no @types/node).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type AgentEvent,
  answerOf,
  ContextNotFoundError,
  connect,
  InvalidParamsError,
  Parts,
  TaskNotCancelableError,
  TaskNotFoundError,
  textOf,
  UnsupportedOperationError,
} from "../../src/client/index";
import { type CutProxy, startCutProxy } from "./support/cut-proxy";
import { type DemoAgent, startDemoAgent } from "./support/worker";

let worker: DemoAgent;
let proxy: CutProxy;

beforeAll(async () => {
  worker = await startDemoAgent(25);
  proxy = await startCutProxy(Number(new URL(worker.baseUrl).port));
});

afterAll(async () => {
  await proxy?.stop();
  await worker?.stop();
});

async function collect(
  stream: AsyncIterable<AgentEvent>,
  onEvent?: (e: AgentEvent, i: number) => void,
) {
  const events: AgentEvent[] = [];
  for await (const e of stream) {
    events.push(e);
    onEvent?.(e, events.length);
  }
  return events;
}

function textFrom(events: AgentEvent[]): string {
  let text = "";
  for (const e of events) {
    if (e.kind === "task") text = e.task.artifacts.map((a) => textOf(a.parts)).join("");
    if (e.kind === "artifact-update") {
      text = e.append ? text + textOf(e.artifact.parts) : textOf(e.artifact.parts);
    }
  }
  return text;
}

describe.each(["JSONRPC", "HTTP+JSON"] as const)(
  "client against the demo worker over %s",
  (binding) => {
    let agent: Awaited<ReturnType<typeof connect>>;

    beforeAll(async () => {
      agent = await connect(proxy.url, { binding, resume: { retries: 3, delayMs: 50 } });
    });

    it("A2 recognises an Edgelink agent and its card", () => {
      expect(agent.card.name).toBe("Edgelink demo agent");
      expect(agent.isEdgelink).toBe(true);
      expect(agent.version).toBe("1.0");
      expect(agent.binding).toBe(binding);
      expect(agent.card.skills.map((s) => s.id)).toContain("count");
    });

    it("B3 send, stream and a tool_call part", async () => {
      const sent = await agent.send("streams are fun");
      expect(sent.task.status.state).toBe("completed");
      expect(answerOf(sent)).toBe("You said: streams are fun");

      const events = await collect(agent.stream("one two three"));
      expect(events[0].kind).toBe("task");
      expect(events.filter((e) => e.kind === "artifact-update").length).toBe(5);
      expect(textFrom(events)).toBe("You said: one two three");
      expect(events.at(-1).status.state).toBe("completed");
      expect(events.every((e) => typeof e.eventId === "string")).toBe(true);

      const tool = await agent.send([Parts.toolCall("add", { a: 2, b: 40 })]);
      const output = tool.task.artifacts[0].parts[0];
      expect(output.type).toBe("tool_output");
      expect(output.content.result).toBe(42);
    });

    it("B7 multi-turn and the conversation of a context", async () => {
      const first = await agent.send("hello");
      expect(first.task.status.state).toBe("input-required");
      const second = await agent.send("Ada", { taskId: first.task.id });
      expect(answerOf(second)).toBe("Nice to meet you, Ada!");
      const { contextId } = first.task;
      const recap = await agent.send("recap", { contextId });
      expect(answerOf(recap)).toContain("hello / Ada");

      const pages = [];
      for await (const page of agent.history(contextId, { pageSize: 2 })) pages.push(page);
      expect(pages.length).toBeGreaterThan(1);
      const items = pages.flatMap((p) => p.items);
      expect(items.length).toBe(pages[0].totalSize);
      expect(items.filter((i) => i.type === "message" && i.role === "user").length).toBe(3);

      const compaction = await agent.compact(contextId, { strategy: "recent", maxMessages: 2 });
      expect(compaction.strategy).toBe("recent");
      expect(compaction.afterMessages).toBeLessThan(compaction.beforeMessages);

      const tasks = [];
      for await (const page of agent.listTasks({ contextId, pageSize: 1 }))
        tasks.push(...page.tasks);
      expect(tasks.map((t) => t.id).sort()).toEqual([first.task.id, recap.task.id].sort());
    });

    it("errors are typed and carry ErrorInfo and field violations", async () => {
      const missing = await agent.getTask("nope").catch((e) => e);
      expect(missing).toBeInstanceOf(TaskNotFoundError);
      expect(missing.errorInfo).toMatchObject({
        reason: "TASK_NOT_FOUND",
        domain: "a2a-protocol.org",
      });

      const bad = await agent
        .listTasks({ pageSize: 1000 })
        .next()
        .catch((e) => e);
      expect(bad).toBeInstanceOf(InvalidParamsError);
      expect(bad.code).toBe(-32602);
      expect(bad.fieldViolations[0].field).toContain("pageSize");

      const done = await agent.send("x");
      const notCancelable = await agent.cancel(done.task.id).catch((e) => e);
      expect(notCancelable).toBeInstanceOf(TaskNotCancelableError);
      expect(notCancelable.errorInfo.reason).toBe("TASK_NOT_CANCELABLE");

      // A context id of the shape Edgelink issues that it did not issue: not found. One a
      // client chose: refused, naming the field (clientContextIds is false by default).
      const noContext = await agent.compact(`c.${"A".repeat(32)}`).catch((e) => e);
      expect(noContext).toBeInstanceOf(ContextNotFoundError);
      const chosen = await agent.compact("no-such-context").catch((e) => e);
      expect(chosen).toBeInstanceOf(InvalidParamsError);
      expect(chosen.fieldViolations[0].field).toContain("contextId");

      expect(await agent.extendedCard().catch((e) => e)).toBeInstanceOf(UnsupportedOperationError);
    });

    it("a cut subscription resumes exactly after the last event (Last-Event-ID)", async () => {
      const words = Array.from({ length: 24 }, (_, i) => `w${i}`).join(" ");
      const { task } = await agent.send(words, { returnImmediately: true });
      let cut = false;
      const events = await collect(agent.subscribe(task.id), (_e, i) => {
        if (i === 5 && !cut) {
          cut = true;
          proxy.cut();
        }
      });
      expect(cut).toBe(true);
      // Edgelink keeps an event log: after the cut come exactly the events not yet seen,
      // no second snapshot, no repeats.
      expect(events.filter((e) => e.kind === "task")).toHaveLength(1);
      const ids = events.map((e) => Number(e.eventId));
      expect(ids).toEqual([...ids].sort((a, b) => a - b));
      expect(new Set(ids).size).toBe(ids.length);
      expect(textFrom(events)).toBe(`You said: ${words}`);
      expect(events.at(-1).status.state).toBe("completed");
    });

    it("cancel, and push config CRUD on a running task", async () => {
      const { task } = await agent.send("count 30", { returnImmediately: true });
      const created = await agent.createPushConfig(task.id, {
        url: "http://127.0.0.1:9/hook",
        token: "tok",
      });
      expect(await agent.getPushConfig(task.id, created.id)).toEqual(created);
      expect((await agent.listPushConfigs(task.id)).configs.map((c) => c.id)).toEqual([created.id]);
      await agent.deletePushConfig(task.id, created.id);
      await agent.deletePushConfig(task.id, created.id); // idempotent
      expect((await agent.listPushConfigs(task.id)).configs).toEqual([]);
      const canceled = await agent.cancel(task.id);
      expect(canceled.status.state).toBe("canceled");
    });
  },
);

describe("the client entry in plain Node (no workerd)", () => {
  it("edgelink/client and edgelink/push bundle with no cloudflare:* import and run under node", async () => {
    const { bundle, nodeBinaries } = await import("./support/bundle");
    const { execFile } = await import("node:child_process");
    const { writeFileSync } = await import("node:fs");
    const { join } = await import("node:path");
    const dir = await bundle({ client: "src/client/index.ts", push: "src/push/receiver.ts" });
    const script = join(dir, "script.mjs");
    writeFileSync(
      script,
      `const t0 = Date.now();
import { connect, answerOf, TaskNotFoundError } from "./client.mjs";
import { verifyPushNotification, PushVerificationError } from "./push.mjs";
const agent = await connect(process.argv[2]);
const sent = await agent.send("hello from node");
const words = [];
for await (const e of agent.stream("a b c")) if (e.kind === "artifact-update") words.push(e.artifact.parts[0].content);
const missing = await agent.getTask("nope").catch((e) => e);
const refused = await verifyPushNotification(new Request("http://x/", { method: "POST", body: "{}" }), {
  keys: [], audience: "http://x/" }).catch((e) => e);
console.log(JSON.stringify({ ms: Date.now() - t0, node: process.version, name: agent.card.name, state: sent.task.status.state,
  answer: answerOf(sent), words, notFound: missing instanceof TaskNotFoundError,
  push: refused instanceof PushVerificationError && refused.reason }));
`,
    );
    for (const node of nodeBinaries()) {
      const out = await new Promise<string>((resolve, reject) =>
        execFile(node, [script, worker.baseUrl], { timeout: 30_000 }, (error, stdout, stderr) =>
          error ? reject(new Error(`${node}: ${stderr || error.message}`)) : resolve(stdout),
        ),
      );
      const result = JSON.parse(out);
      expect(Number(result.node.slice(1).split(".")[0])).toBeGreaterThanOrEqual(20);
      expect(result).toMatchObject({
        name: "Edgelink demo agent",
        state: "input-required",
        answer: "Hi! What's your name?",
        words: ["You ", "said: ", "a ", "b ", "c"],
        notFound: true,
        push: "missing-signature",
      });
    }
  });

  it("the bundle refuses an entry that imports cloudflare:* (the check above can fail)", async () => {
    const { bundle } = await import("./support/bundle");
    await expect(bundle({ index: "src/index.ts" })).rejects.toThrow(/cloudflare:workers/);
  });
});
