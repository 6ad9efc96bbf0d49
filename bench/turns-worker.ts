/**
 * The worker bench/instructions.mjs measures: one agent whose turns either run its model
 * (the OpenAI chat adapter replaying the recorded 12-event stream, as in
 * bench/stream-worker.ts) or answer "echo" with no model at all, so the cost of each part
 * of a turn is the difference between two kinds of call:
 *
 *   POST /bench/run {side: "prepare", count}            makes `count` contexts (one echo turn each)
 *   POST /bench/run {side: "run", contexts, method, text}
 *        one call per context: `method` SendMessage or SendStreamingMessage, `text` "echo"
 *        (the handler answers itself), "stream …" (the echo in 20 artifact chunks, as in
 *        bench/echo-worker.ts) or "recorded" (the model turn); answers are read to
 *        the end and must end completed.
 */
import type { Agent } from "../src/agent/definition";
import { runModelAgent } from "../src/agent/model/model-execution";
import { Parts } from "../src/protocol/part";
import {
  type CallOptions,
  type Model,
  ModelRequest,
  type StreamEvent,
} from "../src/providers/base/types";
import { defineAgent } from "../src/worker/app/define-agent";
import { STREAM_PREFIX, streamChunks } from "./stream-chunks.mjs";
import { type StreamInput, streamInput } from "./stream-input";
import { ourModel } from "./stream-ours";

interface Env {
  RECORDED_SSE: string;
}

let recorded: StreamInput | null = null;
const replayModel: Model = {
  provider: ourModel().provider,
  model: ourModel().model,
  capabilities: ourModel().capabilities,
  streamBatches(request: ModelRequest, options: CallOptions = {}): AsyncIterable<StreamEvent[]> {
    recorded ??= streamInput("recorded", (options.env as Env).RECORDED_SSE);
    return ourModel().streamBatches(request, { ...options, fetch: recorded.fetch });
  },
};

const agent = defineAgent<Env>({
  card: {
    name: "Edgelink bench turns",
    description: "Answers echo itself, anything else with its (replayed) model.",
    version: "0.0.0",
  },
  model: replayModel,
  // A handler replaces the model turn, so this one runs it itself for anything but "echo".
  handler: async (ctx) => {
    const first = ctx.message.parts[0];
    const text = first?.type === "text" ? String(first.content) : "";
    const self = agent.agent as unknown as Agent<Env>;
    // Parts of a model turn alone, each then answered like echo (for differences).
    if (text === "part:window") await ctx.conversationWindow({ maxTokens: 100_000 });
    else if (text === "part:provider") {
      const request = ModelRequest.parse({ messages: [{ role: "user", content: "recorded" }] });
      for await (const _ of replayModel.streamBatches(request, { env: ctx.env as object })) {
      }
    } else if (text === "part:provider20") {
      // The provider stream alone, 20 times: its per-stream cost above the noise of a call.
      const request = ModelRequest.parse({ messages: [{ role: "user", content: "recorded" }] });
      for (let i = 0; i < 20; i++) {
        for await (const _ of replayModel.streamBatches(request, { env: ctx.env as object })) {
        }
      }
    } else if (text === "part:provider-think") {
      const request = ModelRequest.parse({ messages: [{ role: "user", content: "recorded" }] });
      for await (const _ of (self.model as Model).streamBatches(request, {
        env: ctx.env as object,
      })) {
      }
    } else if (text === "part:record") {
      ctx.record([
        { type: "message", role: "assistant", content: ["The capital is Mexico City."] },
      ]);
    } else if (text === "part:artifacts") {
      const id = ctx.artifact({ name: "response", parts: [Parts.text("The capital of")] });
      ctx.artifact({ artifactId: id, append: true, lastChunk: true, parts: [Parts.text(" X.")] });
    } else if (text.startsWith(STREAM_PREFIX)) {
      // The streaming scenario's answer (bs, bench/echo-worker.ts): one artifact in 20 chunks.
      const chunks = streamChunks(text);
      let artifactId: string | undefined;
      chunks.forEach((chunk, i) => {
        artifactId = ctx.artifact({
          artifactId,
          name: "result",
          parts: [Parts.text(chunk)],
          append: i > 0,
          lastChunk: i === chunks.length - 1,
        });
      });
      return undefined;
    } else if (text !== "echo") return runModelAgent(ctx, self);
    return "echo";
  },
  limits: { streamBufferBytes: 256 * 1024 * 1024 },
});

let rpcId = 0;
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

interface RunBody {
  side: "prepare" | "run";
  count?: number;
  contexts?: string[];
  method?: "SendMessage" | "SendStreamingMessage";
  text?: string;
}

async function run(body: RunBody, env: Env, ctx: ExecutionContext) {
  if (body.side === "prepare") {
    const contexts: string[] = [];
    for (let i = 0; i < (body.count ?? 1); i++) {
      const answer = await agent.fetch(a2aRequest("SendMessage", null, "echo"), env, ctx);
      const task = (JSON.parse(await answer.text()) as { result: { task: { contextId: string } } })
        .result.task;
      contexts.push(task.contextId);
    }
    return { contexts };
  }
  let completed = 0;
  for (const contextId of body.contexts ?? []) {
    const request = a2aRequest(body.method ?? "SendStreamingMessage", contextId, body.text ?? "");
    const answer = await (await agent.fetch(request, env, ctx)).text();
    if (answer.includes("TASK_STATE_COMPLETED")) completed++;
  }
  return { completed };
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
