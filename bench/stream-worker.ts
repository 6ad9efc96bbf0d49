/**
 * The workerd side of the streaming benchmark (bench/stream.mjs). One Edgelink agent whose
 * model is the real OpenAI chat adapter, with a `fetch` that replays a provider stream; the
 * user message names which one ("recorded", "synthetic:100000"). Beside the agent, one
 * route runs a pipeline inside this Worker and returns its times:
 *
 *   POST /bench/run {side, input, ...}
 *     side "ours"     pipeline (1), bench/stream-ours.ts, in this isolate (reps × group)
 *     side "aisdk"    the AI SDK's streamText, bench/stream-aisdk.ts, likewise
 *     side "prepare"  makes `count` contexts, each with one small untimed turn, so their
 *                     Durable Objects and databases exist and are warm
 *     side "agent"    pipeline (2), once per prepared context: SendStreamingMessage into the
 *                     agent's Durable Object (adapter → batches → one artifact append per
 *                     network read in the task's SQLite event log → the SSE bytes the
 *                     client gets), read to its last byte here
 *
 * Times come from performance.now(), which in local workerd moves in whole milliseconds, so
 * short streams are timed in groups; bench/stream.mjs also reads workerd's CPU from /proc.
 * The recorded fixture's bytes arrive as the RECORDED_SSE text binding.
 */

import type { CallOptions, Model, ModelRequest, StreamEvent } from "../src/providers/base/types";
import { defineAgent } from "../src/worker/app/define-agent";
import { aiSdkRun } from "./stream-aisdk";
import { type StreamInput, streamInput, syntheticInput } from "./stream-input";
import { ourModel, oursRun, textOfFrames } from "./stream-ours";

interface Env {
  RECORDED_SSE: string;
}

const inputs = new Map<string, StreamInput>();
/** "recorded" or "synthetic:N", made once per isolate. */
function inputFor(key: string, env: Env): StreamInput {
  let input = inputs.get(key);
  if (!input) {
    const synthetic = /^synthetic:(\d+)$/.exec(key);
    if (synthetic) input = syntheticInput(Number(synthetic[1]));
    else if (key === "recorded") input = streamInput("recorded", env.RECORDED_SSE);
    else throw new Error(`unknown input ${key}`);
    inputs.set(key, input);
  }
  return input;
}

/** The last user text of a request: the name of the stream to replay. */
function streamKey(request: ModelRequest): string {
  for (let i = request.messages.length - 1; i >= 0; i--) {
    const item = request.messages[i];
    if (item?.type === "message" && item.role === "user") {
      const first = item.content[0];
      if (typeof first === "string") return first.trim();
    }
  }
  throw new Error("no user message");
}

/**
 * The adapter with its transport swapped for the replay; everything else is the adapter's.
 * "warm KEY" builds KEY's input in this isolate (outside any timed turn) and replays the
 * recorded stream.
 */
const replayModel: Model = {
  provider: ourModel().provider,
  model: ourModel().model,
  capabilities: ourModel().capabilities,
  streamBatches(request: ModelRequest, options: CallOptions = {}): AsyncIterable<StreamEvent[]> {
    const env = options.env as Env;
    let key = streamKey(request);
    if (key.startsWith("warm ")) {
      inputFor(key.slice(5), env);
      key = "recorded";
    }
    return ourModel().streamBatches(request, { ...options, fetch: inputFor(key, env).fetch });
  },
};

const agent = defineAgent<Env>({
  card: {
    name: "Edgelink bench stream",
    description: "Streams a replayed provider answer for the streaming benchmark.",
    version: "0.0.0",
  },
  model: replayModel,
  // The replayed body never waits for I/O, so a whole answer runs as one turn and its SSE
  // frames queue until the turn ends (100k deltas: about 6 MB). The default 1 MiB bound
  // for a client that does not read would drop this reader, which reads as fast as it
  // can once the turn yields; the bench measures CPU, not backpressure.
  limits: { streamBufferBytes: 256 * 1024 * 1024 },
});

let rpcId = 0;
/** An A2A request; a null `contextId` names none, so the agent issues one. */
function a2aRequest(method: string, contextId: string | null, text: string): Request {
  return new Request("http://bench.local/", {
    method: "POST",
    headers: { "Content-Type": "application/json", "A2A-Version": "1.0" },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: ++rpcId,
      method,
      params: {
        message: {
          messageId: crypto.randomUUID(),
          role: "ROLE_USER",
          ...(contextId === null ? {} : { contextId }),
          parts: [{ text }],
        },
      },
    }),
  });
}

interface AgentCheck {
  frames: number;
  artifactFrames: number;
  finalState: string | null;
  textMatches: boolean;
}

/** Reads an agent's SSE answer back: its artifact text, frame counts and last state. */
function checkAgentStream(bytes: Uint8Array[], expected: string): AgentCheck {
  const decoder = new TextDecoder();
  let body = "";
  for (const chunk of bytes) body += decoder.decode(chunk, { stream: true });
  body += decoder.decode();
  let text = "";
  let frames = 0;
  let artifactFrames = 0;
  let finalState: string | null = null;
  for (const block of body.split("\n\n")) {
    const data = /^data: (.*)$/m.exec(block)?.[1];
    if (!data) continue;
    frames++;
    const result = (JSON.parse(data) as { result?: Record<string, Record<string, unknown>> })
      .result;
    const update = result?.artifactUpdate as
      | { artifact?: { parts?: { text?: string }[] } }
      | undefined;
    if (update) {
      artifactFrames++;
      for (const part of update.artifact?.parts ?? []) text += part.text ?? "";
    }
    const status = result?.statusUpdate?.status as { state?: string } | undefined;
    if (status?.state) finalState = status.state;
  }
  return { frames, artifactFrames, finalState, textMatches: text === expected };
}

/**
 * Makes a context with one small untimed turn, so its object and database are warm; its
 * id is the one the agent issued (it refuses ids a client chooses, by default).
 */
async function prepareContext(key: string, env: Env, ctx: ExecutionContext): Promise<string> {
  const warm = await agent.fetch(a2aRequest("SendMessage", null, `warm ${key}`), env, ctx);
  const body = await warm.text();
  if (!warm.ok || !body.includes("TASK_STATE_COMPLETED")) {
    throw new Error(`warm-up turn failed: ${warm.status} ${body.slice(0, 300)}`);
  }
  return (JSON.parse(body) as { result: { task: { contextId: string } } }).result.task.contextId;
}

/** One timed SendStreamingMessage whose answer replays `key`, read to its last byte. */
async function agentRun(
  key: string,
  contextId: string,
  env: Env,
  ctx: ExecutionContext,
  check: boolean,
): Promise<{ ms: number; bytes: number; check?: AgentCheck }> {
  const kept: Uint8Array[] = [];
  let bytes = 0;
  const start = performance.now();
  const response = await agent.fetch(a2aRequest("SendStreamingMessage", contextId, key), env, ctx);
  const reader = (response.body as ReadableStream<Uint8Array>).getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    bytes += value.byteLength;
    if (check) kept.push(value);
  }
  const ms = performance.now() - start;
  if (!check) return { ms, bytes };
  return { ms, bytes, check: checkAgentStream(kept, inputFor(key, env).text) };
}

interface RunBody {
  /** `prepare` makes `count` warm contexts for `agent`, which streams once in each. */
  side: "ours" | "aisdk" | "agent" | "prepare";
  input: string;
  reps?: number;
  /** Runs per timed sample (ours, aisdk): a short stream takes less than workerd's 1 ms tick. */
  group?: number;
  count?: number;
  contexts?: string[];
  check?: boolean;
}

async function run(body: RunBody, env: Env, ctx: ExecutionContext) {
  const input = inputFor(body.input, env);
  const ms: number[] = [];
  const info: Record<string, unknown> = { events: input.events, bytes: input.bytes };
  if (body.side === "prepare") {
    const contexts: string[] = [];
    for (let i = 0; i < (body.count ?? 1); i++)
      contexts.push(await prepareContext(body.input, env, ctx));
    return { contexts };
  }
  if (body.side === "agent") {
    for (const [i, contextId] of (body.contexts ?? []).entries()) {
      const r = await agentRun(body.input, contextId, env, ctx, Boolean(body.check) && i === 0);
      ms.push(r.ms);
      info.sseBytes = r.bytes;
      if (r.check) info.check = r.check;
    }
    return { ms, info };
  }
  if (body.check) {
    if (body.side === "ours") {
      const r = await oursRun(input, { keep: true });
      info.check = {
        frames: r.frames,
        batches: r.batches,
        sseBytes: r.bytes,
        textMatches: textOfFrames(r.sse) === input.text,
      };
    } else {
      const r = await aiSdkRun(input, "streamText", { keep: true });
      info.check = { deltas: r.deltas, textMatches: r.text === input.text };
    }
  }
  const group = body.group ?? 1;
  for (let i = 0; i < (body.reps ?? 1); i++) {
    const start = performance.now();
    for (let j = 0; j < group; j++) {
      if (body.side === "ours") await oursRun(input);
      else await aiSdkRun(input, "streamText");
    }
    ms.push((performance.now() - start) / group);
  }
  return { ms, info };
}

export const { EdgelinkContext, EdgelinkIndex } = agent;

export default {
  async fetch(request: Request, env: Env, ctx: ExecutionContext): Promise<Response> {
    const url = new URL(request.url);
    if (url.pathname !== "/bench/run") return agent.fetch(request, env, ctx);
    try {
      return Response.json(await run((await request.json()) as RunBody, env, ctx));
    } catch (error) {
      const message = error instanceof Error ? `${error.message}\n${error.stack}` : String(error);
      return Response.json({ error: message }, { status: 500 });
    }
  },
};
