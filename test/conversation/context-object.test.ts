import { env, evictDurableObject, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { type ContextRpc, RESTART_REASON } from "../../src/conversation/context-object";
import { HistoryStore } from "../../src/conversation/history/history-store";
import { itemFromMessage } from "../../src/conversation/tasks/conversation-bridge";
import { Message } from "../../src/protocol/message";
import { contextObjectName, idKeys, sealedTaskId, verifiedContextOf } from "../../src/storage/ids";
import { CONTEXT_SCHEMA } from "../../src/storage/schema";
import { ensureSchema, schemaVersion } from "../../src/storage/schema-version";
import {
  artifactText,
  BASE,
  indexShardStub,
  listUntil,
  rpc,
  send,
  sleep,
  waitForState,
} from "../support/helpers";
import { orphanTaskRow } from "../support/task-fixture";

type Json = Record<string, unknown>;

function contextStub(contextId: string, tenant = "") {
  const ns = env.EDGELINK_CONTEXT;
  return ns.get(ns.idFromName(contextObjectName(tenant, contextId)));
}

describe("conversation Durable Object storage", () => {
  it("keeps a task as rows: task, messages, artifact parts, state history, event log", async () => {
    const task = await send("rows not blobs");
    const stub = contextStub(task.contextId as string);
    const counts = await runInDurableObject(stub, (_instance, state) => {
      const count = (table: string) =>
        state.storage.sql
          .exec<{ n: number }>(
            table.startsWith("artifact")
              ? `SELECT COUNT(*) AS n FROM ${table} WHERE task_key = (SELECT key FROM tasks WHERE id = ?)`
              : `SELECT COUNT(*) AS n FROM ${table} WHERE task_id = ?`,
            task.id as string,
          )
          .one().n;
      const largest = state.storage.sql
        .exec<{ n: number }>("SELECT MAX(LENGTH(body)) AS n FROM events")
        .one().n;
      return {
        tasks: state.storage.sql
          .exec<{ n: number }>("SELECT COUNT(*) AS n FROM tasks WHERE id = ?", task.id as string)
          .one().n,
        messages: count("history_items"),
        artifacts: count("artifacts"),
        // Parts appended to an artifact are rows of their own; its first ones sit in its
        // own row.
        parts:
          count("artifact_parts") +
          state.storage.sql
            .exec<{ n: number }>(
              "SELECT COALESCE(SUM(json_array_length(parts)), 0) AS n FROM artifacts WHERE task_key = (SELECT key FROM tasks WHERE id = ?)",
              task.id as string,
            )
            .one().n,
        partRows: count("artifact_parts"),
        history: (
          JSON.parse(
            state.storage.sql
              .exec<{ h: string }>(
                "SELECT state_history AS h FROM tasks WHERE id = ?",
                task.id as string,
              )
              .one().h,
          ) as unknown[]
        ).length,
        events: count("events"),
        largest,
      };
    });
    // "You said: rows not blobs" streams as 5 word chunks: the first in the artifact's
    // row, each appended one its own part row.
    expect(counts).toMatchObject({
      tasks: 1,
      messages: 1,
      artifacts: 1,
      parts: 5,
      partRows: 4,
      history: 2,
    });
    // working, 5 artifact chunks, completed
    expect(counts.events).toBe(7);
    expect(counts.largest).toBeLessThan(10_000);
  });

  it("task ids name their conversation, so no lookup is needed, yet reveal nothing", async () => {
    const task = await send("where do I live");
    const keys = await idKeys(env, BASE);
    expect(await verifiedContextOf(keys, { tenant: "", owner: "" }, task.id as string)).toBe(
      task.contextId,
    );
    // Any context id seals, a client-chosen one too (with clientContextIds: true).
    const contextId = "ctx with spaces/and ✓ unicode";
    const id = await sealedTaskId(keys, { tenant: "", owner: "" }, contextId);
    expect(await verifiedContextOf(keys, { tenant: "", owner: "" }, id)).toBe(contextId);
    // Opaque: one base64url token, neither the context id nor its encoding inside.
    expect(id).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(id).not.toContain(btoa("ctx with").slice(0, 8));
    // Another tenant or owner cannot open it.
    expect(await verifiedContextOf(keys, { tenant: "t", owner: "" }, id)).toBeNull();
    expect(await verifiedContextOf(keys, { tenant: "", owner: "bob" }, id)).toBeNull();
  });

  it("the schema is versioned, and asking for it again changes nothing", async () => {
    const task = await send("versioned");
    const stub = contextStub(task.contextId as string);
    const result = await runInDurableObject(stub, (_instance, state) => {
      ensureSchema(state.storage, CONTEXT_SCHEMA);
      ensureSchema(state.storage, CONTEXT_SCHEMA);
      const version = state.storage.sql
        .exec<{ value: string }>("SELECT value FROM meta WHERE key = 'storage_version'")
        .one().value;
      const rows = state.storage.sql.exec<{ n: number }>("SELECT COUNT(*) AS n FROM tasks").one().n;
      return { version, rows };
    });
    expect(result).toEqual({ version: String(schemaVersion(CONTEXT_SCHEMA)), rows: 1 });
  });

  it("a restart mid-task fails the task with a clear reason instead of leaving it working", async () => {
    const task = await send("count 30", {}, { returnImmediately: true });
    const stub = contextStub(task.contextId as string);
    // Simulate the object being torn down while the handler is running.
    await runInDurableObject(stub, (_instance, state) => {
      state.abort("simulated restart");
    }).catch(() => {});
    await sleep(50);
    const { body } = await rpc("GetTask", { id: task.id });
    const after = body.result as Json;
    expect((after.status as Json).state).toBe("TASK_STATE_FAILED");
    expect((after.metadata as Json).error).toBe(RESTART_REASON);
    const changes = (after.metadata as Json)["edgelink/stateHistory"] as Json[];
    expect(changes.map((c) => c.newState)).toEqual(["working", "failed"]);
  });

  it("the tenant index receives every state change through the outbox", async () => {
    const task = await send("index me");
    // The index hears of it within limits.indexFlushMs, off the answer's path ...
    await listUntil({ status: "TASK_STATE_COMPLETED", pageSize: 100 }, ({ tasks }) =>
      tasks.some((t) => t.id === task.id),
    );
    // ... and the acknowledgement is marked with the conversation's next write.
    await send("and me", { contextId: task.contextId as string });
    const stub = contextStub(task.contextId as string);
    const outbox = await runInDurableObject(stub, (_i, state) =>
      state.storage.sql
        .exec<{ n: number }>("SELECT index_pending AS n FROM tasks WHERE id = ?", task.id as string)
        .one(),
    );
    expect(outbox.n).toBe(0);
    const index = indexShardStub(task.contextId as string);
    const row = await runInDurableObject(index, (_i, state) =>
      state.storage.sql
        .exec<{ state: string; context_id: string }>(
          "SELECT state, context_id FROM task_index WHERE task_id = ?",
          task.id as string,
        )
        .one(),
    );
    expect(row).toEqual({ state: "completed", context_id: task.contextId });
  });

  it("evicting an idle object loses nothing", async () => {
    const task = await send("survive eviction");
    const stub = contextStub(task.contextId as string);
    await evictDurableObject(stub);
    const { body } = await rpc("GetTask", { id: task.id });
    expect(body.result).toMatchObject({ id: task.id, status: { state: "TASK_STATE_COMPLETED" } });
  });
});

describe("white-box: streams and recovery", () => {
  it("sends SSE keep-alive comments while a stream is idle", async () => {
    const task = await send("count 3", {}, { returnImmediately: true });
    const stub = contextStub(task.contextId as string);
    const text = await runInDurableObject(stub, async (instance) => {
      // Shadow the agent getter so the interval is short enough for a test.
      const agent = (instance as unknown as { agent: object }).agent;
      Object.defineProperty(instance, "agent", { value: { ...agent, keepAliveMs: 20 } });
      const rpcApi = instance as unknown as ContextRpc;
      const result = await rpcApi.subscribe(
        { tenant: "", contextId: task.contextId as string },
        task.id as string,
        { version: "1.0", binding: "rest" },
      );
      if (!result.ok) throw new Error(result.error.message);
      const reader = result.value.getReader();
      const decoder = new TextDecoder();
      let seen = "";
      const deadline = Date.now() + 500;
      while (!seen.includes(": keep-alive") && Date.now() < deadline) {
        const { value, done } = await reader.read();
        if (done) break;
        seen += decoder.decode(value);
      }
      await reader.cancel();
      return seen;
    });
    expect(text.startsWith("id: ")).toBe(true);
    expect(text).toContain(": keep-alive\n\n");
  });

  it("resumeOnRestart re-runs a task a restart left working", async () => {
    const first = await send("seed the conversation");
    const contextId = first.contextId as string;
    const stub = contextStub(contextId);
    // An id signed like the Worker signs them, so GetTask can reach the orphan.
    const orphanId = await sealedTaskId(
      await idKeys(env, BASE),
      { tenant: "", owner: "" },
      contextId,
    );
    await runInDurableObject(stub, async (instance, state) => {
      const now = new Date().toISOString();
      const message = {
        messageId: "orphan-msg",
        role: "user",
        parts: [{ type: "text", content: "resume me" }],
        contextId,
        taskId: orphanId,
        timestamp: now,
      };
      orphanTaskRow(state.storage.sql, orphanId, contextId);
      new HistoryStore(state.storage).append(itemFromMessage(Message.parse(message)), orphanId);
      const agent = (instance as unknown as { agent: object }).agent;
      Object.defineProperty(instance, "agent", { value: { ...agent, resumeOnRestart: true } });
      await (instance as unknown as { recover(): Promise<void> }).recover();
    });
    const done = await waitForState(orphanId, "TASK_STATE_COMPLETED");
    expect(artifactText(done, "echo")).toBe("You said: resume me");
  });
});
