/**
 * How a task stream hands its frames over: the frames sent in one turn leave as one chunk
 * (an instant answer's whole stream is one write across the object's RPC and the client's
 * connection), a later turn's frames leave at that turn's end, and the keep-alive timer is
 * armed only for a stream still open after the turn that opened it.
 */
import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { HistoryStore } from "../../../src/conversation/history/history-store";
import { EventHub } from "../../../src/conversation/runs/event-hub";
import { openTaskStream } from "../../../src/conversation/runs/task-stream";
import { TaskStore } from "../../../src/conversation/tasks/task-store";
import type { Artifact } from "../../../src/protocol/artifact";
import { Parts } from "../../../src/protocol/part";
import type { StreamFormat } from "../../../src/protocol/wire/stream";
import { contextObjectName } from "../../../src/storage/ids";
import { CONTEXT_SCHEMA } from "../../../src/storage/schema";
import { ensureSchema } from "../../../src/storage/schema-version";
import { parseSse } from "../../support/helpers";
import { taskFixture } from "../../support/task-fixture";

type Json = Record<string, unknown>;

function stubOf(contextId: string) {
  const ns = env.EDGELINK_CONTEXT;
  return ns.get(ns.idFromName(contextObjectName("", contextId)));
}

const chunk = (text: string): Artifact => ({
  artifactId: "a",
  name: null,
  description: null,
  parts: [Parts.text(text)],
  metadata: {},
  kind: "result",
  timestamp: new Date().toISOString(),
  uri: null,
  mediaType: null,
  actionId: null,
});

/** A store with one working task `id`, and a stream of it opened on a fresh hub. */
function opened(state: DurableObjectState, id: string, keepAliveMs = 60_000) {
  ensureSchema(state.storage, CONTEXT_SCHEMA); // white-box: the schema a first write makes
  const store = new TaskStore(state.storage, new HistoryStore(state.storage));
  store.create(taskFixture(id), true);
  const hub = new EventHub();
  const stream = openTaskStream({
    taskId: id,
    format: { version: "1.0", binding: "jsonrpc", rpcId: 1 } as StreamFormat,
    from: { snapshot: true },
    store,
    hub,
    snapshot: () => ({ task: store.read(id) as never, seq: 0 }),
    keepAliveMs,
    bufferBytes: 1024 * 1024,
    pageSize: 10,
  });
  const put = (i: number, last = false) =>
    hub.emit(id, [store.putArtifact(id, chunk(`part ${i}`), { append: i > 0, lastChunk: last })]);
  const end = () => hub.emit(id, store.transition(id, "completed"));
  return { stream, put, end };
}

/** Every chunk of a stream, decoded, until it ends. */
async function chunksOf(stream: ReadableStream<Uint8Array>): Promise<string[]> {
  const out: string[] = [];
  const decoder = new TextDecoder();
  for await (const value of stream) out.push(decoder.decode(value));
  return out;
}

const texts = (frames: { data: Json }[]) =>
  frames
    .map((f) => (f.data.result as Json).artifactUpdate as Json | undefined)
    .filter((a) => a !== undefined)
    .map((a) => (((a.artifact as Json).parts as Json[])[0] as Json).text);

describe("task streams: frames and chunks", () => {
  it("an answer given in the stream's opening turn leaves as one chunk, every frame in order (D4)", async () => {
    const chunks = await runInDurableObject(stubOf("frames-one-turn"), async (_i, state) => {
      const { stream, put, end } = opened(state, "f1");
      for (let i = 0; i < 20; i++) put(i, i === 19);
      end();
      return chunksOf(stream);
    });
    expect(chunks).toHaveLength(1);
    const frames = parseSse(chunks[0] as string);
    // The snapshot, 20 chunks, the final status: ids rising, texts in order.
    expect(frames).toHaveLength(22);
    const ids = frames.slice(1).map((f) => f.id as number);
    expect(ids).toEqual([...ids].sort((a, b) => a - b));
    expect(new Set(ids).size).toBe(ids.length);
    expect(texts(frames)).toEqual(Array.from({ length: 20 }, (_, i) => `part ${i}`));
    const last = ((frames[21] as { data: Json }).data.result as Json).statusUpdate as Json;
    expect((last.status as Json).state).toBe("TASK_STATE_COMPLETED");
  });

  it("each later turn's frames leave at that turn's end, not when the task ends (D4)", async () => {
    const seen = await runInDurableObject(stubOf("frames-turns"), async (_i, state) => {
      const { stream, put, end } = opened(state, "f2");
      const reader = stream.getReader();
      const decoder = new TextDecoder();
      const next = async () => {
        const timeout = new Promise<string>((resolve) => setTimeout(() => resolve("none"), 2000));
        const read = reader.read().then((r) => (r.done ? "done" : decoder.decode(r.value)));
        return Promise.race([read, timeout]);
      };
      const first = await next(); // the snapshot, sent in the opening turn
      put(0);
      put(1);
      const second = await next(); // this turn's two chunks, together
      put(2, true);
      end();
      const third = await next();
      const after = await next();
      return { first, second, third, after };
    });
    expect(parseSse(seen.first)).toHaveLength(1);
    expect(texts(parseSse(seen.second))).toEqual(["part 0", "part 1"]);
    expect(texts(parseSse(seen.third))).toEqual(["part 2"]);
    expect(seen.after).toBe("done");
  });

  it("arms the keep-alive timer only for a stream still open after its opening turn", async () => {
    const armed = await runInDurableObject(stubOf("frames-timer"), async (_i, state) => {
      const real = globalThis.setInterval;
      let count = 0;
      const counting = ((...args: Parameters<typeof setInterval>) => {
        count++;
        return real(...args);
      }) as typeof setInterval;
      globalThis.setInterval = counting;
      try {
        const answered = opened(state, "f3");
        answered.put(0, true);
        answered.end();
        const body = await chunksOf(answered.stream);
        const closedInTurn = count;
        const open = opened(state, "f4", 20);
        const reader = open.stream.getReader();
        const decoder = new TextDecoder();
        let text = "";
        const deadline = Date.now() + 2000;
        while (!text.includes(": keep-alive") && Date.now() < deadline) {
          const { value, done } = await reader.read();
          if (done) break;
          text += decoder.decode(value);
        }
        await reader.cancel();
        return { closedInTurn, stillOpen: count - closedInTurn, body: body.join(""), text };
      } finally {
        globalThis.setInterval = real;
      }
    });
    expect(parseSse(armed.body)).toHaveLength(3);
    expect(armed.closedInTurn).toBe(0);
    expect(armed.stillOpen).toBe(1);
    expect(armed.text).toContain(": keep-alive\n\n");
  });
});
