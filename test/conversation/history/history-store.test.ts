import { env, evictDurableObject, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { HistoryStore } from "../../../src/conversation/history/history-store";
import { type Item, MessageItem } from "../../../src/history/items";
import { A2AError } from "../../../src/protocol/errors";
import { contextObjectName } from "../../../src/storage/ids";
import { CHUNK_CHARS } from "../../../src/storage/row-limit";
import { CONTEXT_SCHEMA } from "../../../src/storage/schema";
import { ensureSchema } from "../../../src/storage/schema-version";
import { artifactText, rest, rpc, send, userMessage } from "../../support/helpers";

type Json = Record<string, unknown>;

function stubOf(contextId: string) {
  const ns = env.EDGELINK_CONTEXT;
  return ns.get(ns.idFromName(contextObjectName("", contextId)));
}

const userText = (text: string): Item =>
  MessageItem.parse({ type: "message", role: "user", content: text });

describe("conversation history in the context object", () => {
  it("every turn of a context is visible to the next task (ctx.conversation)", async () => {
    const first = await send("apples");
    await send("pears", { contextId: first.contextId });
    const recap = await send("recap", { contextId: first.contextId });
    expect(artifactText(recap)).toBe("Earlier in this conversation you said: apples / pears");
    const fresh = await send("recap");
    expect(artifactText(fresh)).toBe("This is the start of our conversation.");
  });

  it("GetTask history comes from the store, task by task", async () => {
    const asked = await send("hello");
    await send("Kim", { taskId: asked.id });
    const other = await send("something else", { contextId: asked.contextId });
    const got = (await rpc("GetTask", { id: asked.id })).body.result as Json;
    const texts = (got.history as Json[]).map((m) => (m.parts as Json[])[0]?.text);
    expect(texts).toEqual(["hello", "Hi! What's your name?", "Kim"]);
    const otherTask = (await rpc("GetTask", { id: other.id })).body.result as Json;
    expect((otherTask.history as Json[]).length).toBe(1);
  });

  it("pages the history with an opaque token (REST and JSON-RPC)", async () => {
    const first = await send("one");
    await send("two", { contextId: first.contextId });
    await send("three", { contextId: first.contextId });
    const path = `/contexts/${encodeURIComponent(first.contextId as string)}/history`;
    const page1 = await rest("GET", `${path}?pageSize=2`);
    expect(page1.status).toBe(200);
    expect(page1.body.totalSize).toBe(3);
    const items1 = page1.body.items as { content: string[]; id: string }[];
    expect(items1.map((i) => i.content[0])).toEqual(["one", "two"]);
    expect(items1[0]?.id).toMatch(/^msg_/);
    const page2 = await rest("GET", `${path}?pageSize=2&pageToken=${page1.body.nextPageToken}`);
    expect((page2.body.items as { content: string[] }[]).map((i) => i.content[0])).toEqual([
      "three",
    ]);
    expect(page2.body.nextPageToken).toBe("");

    const viaRpc = (await rpc("GetContextHistory", { contextId: first.contextId, pageSize: 1 }))
      .body.result as Json;
    expect((viaRpc.items as Json[]).length).toBe(1);
    expect(viaRpc.nextPageToken).not.toBe("");
  });

  it("compacts with the recent strategy as a control call (E6, E9, E10)", async () => {
    const first = await send("alpha");
    for (const word of ["beta", "gamma", "delta"]) {
      await send(word, { contextId: first.contextId });
    }
    const path = `/contexts/${encodeURIComponent(first.contextId as string)}/history`;
    const compacted = await rest("POST", `${path}:compact`, { strategy: "recent", maxMessages: 2 });
    expect(compacted.status).toBe(200);
    expect(compacted.body).toMatchObject({
      strategy: "recent",
      beforeMessages: 4,
      afterMessages: 2,
      removed: 2,
      summaryCreated: false,
    });
    const after = await rest("GET", path);
    expect((after.body.items as { content: string[] }[]).map((i) => i.content[0])).toEqual([
      "gamma",
      "delta",
    ]);
    // The compacted turns are gone from their tasks' A2A history too: one store.
    const firstTask = (await rpc("GetTask", { id: first.id })).body.result as Json;
    expect(firstTask.history).toEqual([]);

    const viaRpc = await rpc("CompactContextHistory", {
      contextId: first.contextId,
      strategy: "tokens",
      maxTokens: 1,
      preserveRecent: 1,
    });
    expect(viaRpc.body.result).toMatchObject({ strategy: "tokens" });
  });

  it("bad compaction requests and unknown contexts are clear errors that change nothing", async () => {
    const first = await send("keep me");
    const path = `/contexts/${encodeURIComponent(first.contextId as string)}/history`;
    const unknown = await rest("POST", `${path}:compact`, { strategy: "shrink" });
    expect(unknown.status).toBe(400);
    expect(JSON.stringify(unknown.body)).toContain('"field":"strategy"');
    const tooSmall = await rest("POST", `${path}:compact`, { maxMessages: 1 });
    expect(tooSmall.status).toBe(400);
    expect(JSON.stringify(tooSmall.body)).toContain('"field":"maxMessages"');
    const summary = await rest("POST", `${path}:compact`, {
      strategy: "summary",
      preserveRecent: -1,
    });
    expect(summary.status).toBe(400);
    expect(JSON.stringify(summary.body)).toContain('"field":"preserveRecent"');
    expect(((await rest("GET", path)).body.items as Json[]).length).toBe(1);

    // A context id this agent issued but no conversation was written under (a direct
    // reply stores nothing) is not found; a client-chosen one is refused by default.
    const pong = await rpc("SendMessage", { message: userMessage("ping") });
    const issued = ((pong.body.result as Json).message as Json).contextId as string;
    const missing = await rest("GET", `/contexts/${issued}/history`);
    expect(missing.status).toBe(404);
    expect(JSON.stringify(missing.body)).toContain("CONTEXT_NOT_FOUND");
    const missingRpc = await rpc("CompactContextHistory", { contextId: issued });
    expect(missingRpc.body.error).toMatchObject({ code: -32050 });
    const chosen = await rest("GET", "/contexts/no-such-context/history");
    expect(chosen.status).toBe(400);
    expect(JSON.stringify(chosen.body)).toContain("contextId");
    const badToken = await rest("GET", `${path}?pageToken=@@`);
    expect(badToken.status).toBe(400);
  });

  it("summary compaction replaces older turns with one flagged summary (E8)", async () => {
    const first = await send("first topic");
    for (const word of ["second", "third", "fourth", "fifth"]) {
      await send(word, { contextId: first.contextId });
    }
    const path = `/contexts/${encodeURIComponent(first.contextId as string)}/history`;
    const result = await rest("POST", `${path}:compact`, {
      strategy: "summary",
      preserveRecent: 2,
    });
    expect(result.status).toBe(200);
    expect(result.body).toMatchObject({ strategy: "summary", summaryCreated: true });
    const items = (await rest("GET", path)).body.items as {
      role: string;
      content: string[];
      extra: Json;
    }[];
    expect(items[0]?.role).toBe("assistant");
    expect(items[0]?.extra.summary).toBe(true);
    expect(items[0]?.content[0]).toBe(
      "Summary of the earlier conversation:\nSummary of 7 words: user: first topic user: second user: third",
    );
    expect(items.slice(1).map((i) => i.content[0])).toEqual(["fourth", "fifth"]);
  });

  it("history survives object restarts: append, compact, read", async () => {
    const first = await send("remember this");
    const contextId = first.contextId as string;
    await send("and this", { contextId });
    await evictDurableObject(stubOf(contextId));
    await send("and finally this", { contextId });
    const path = `/contexts/${encodeURIComponent(contextId)}/history`;
    const texts = async () =>
      ((await rest("GET", path)).body.items as { content: string[] }[]).map((i) => i.content[0]);
    expect(await texts()).toEqual(["remember this", "and this", "and finally this"]);
    await evictDurableObject(stubOf(contextId));
    const compacted = await rest("POST", `${path}:compact`, { maxMessages: 2 });
    expect(compacted.body).toMatchObject({ removed: 1, afterMessages: 2 });
    await evictDurableObject(stubOf(contextId));
    expect(await texts()).toEqual(["and this", "and finally this"]);
  });
});

describe("HistoryStore rows", () => {
  it("an append writes the same rows at any length (O(1))", async () => {
    const rows = await runInDurableObject(stubOf("o1-appends"), (_i, state) => {
      ensureSchema(state.storage, CONTEXT_SCHEMA); // white-box: the schema a first write makes
      const store = new HistoryStore(state.storage);
      const first = store.append(userText("x"));
      for (let i = 0; i < 500; i++) store.append(userText(`m${i}`));
      const later = store.append(userText("y"));
      return { first, later, count: store.count() };
    });
    expect(rows.later).toBe(rows.first);
    expect(rows.count).toBe(502);
  });

  it("an item too big for one row is chunked and read back whole", async () => {
    const big = "é".repeat(CHUNK_CHARS * 2 + 10);
    const result = await runInDurableObject(stubOf("chunked"), (_i, state) => {
      ensureSchema(state.storage, CONTEXT_SCHEMA); // white-box: the schema a first write makes
      const store = new HistoryStore(state.storage);
      store.append(userText("before"));
      store.append(userText(big));
      store.append(userText("after"));
      const chunks = state.storage.sql
        .exec<{ n: number }>("SELECT COUNT(*) AS n FROM history_chunks")
        .one().n;
      const back = store.all().map((r) => (r.item as unknown as { content: string[] }).content[0]);
      return { chunks, lengths: back.map((t) => t?.length), ends: [back[0], back[2]] };
    });
    expect(result.chunks).toBe(3);
    expect(result.lengths).toEqual([6, big.length, 5]);
    expect(result.ends).toEqual(["before", "after"]);
  });

  it("an item over the cap is refused and nothing is written", async () => {
    const outcome = await runInDurableObject(stubOf("capped"), (_i, state) => {
      ensureSchema(state.storage, CONTEXT_SCHEMA); // white-box: the schema a first write makes
      const store = new HistoryStore(state.storage, 1000);
      store.append(userText("small"));
      let error: unknown = null;
      try {
        store.append(userText("x".repeat(2000)));
      } catch (e) {
        error = e;
      }
      return {
        kind: error instanceof A2AError ? error.kind : String(error),
        message: error instanceof Error ? error.message : "",
        count: store.count(),
      };
    });
    expect(outcome.kind).toBe("InvalidParams");
    expect(outcome.message).toMatch(/exceeds the limit of 1000 bytes/);
    expect(outcome.count).toBe(1);
  });

  it("applies a diff: removals, an insertion between survivors, a rewrite", async () => {
    const order = await runInDurableObject(stubOf("diffs"), (_i, state) => {
      ensureSchema(state.storage, CONTEXT_SCHEMA); // white-box: the schema a first write makes
      const store = new HistoryStore(state.storage);
      for (const t of ["a", "b", "c", "d"]) store.append({ ...userText(t), id: t });
      store.apply({
        removed: ["b"],
        added: [{ item: { ...userText("between"), id: "x" }, afterId: "c" }],
        changed: [{ ...userText("D!"), id: "d" }],
      });
      return store.all().map((r) => (r.item as unknown as { content: string[] }).content[0]);
    });
    expect(order).toEqual(["a", "c", "between", "D!"]);
  });
});
