/**
 * Edgelink's side of the streaming benchmark, pipeline (1): provider bytes → the OpenAI
 * chat adapter (src/providers/openai/openai-chat.ts) → normalized StreamEvent batches (one per
 * network read) → for each batch's text, the A2A v1 TaskArtifactUpdateEvent built as the
 * agent builds it (src/conversation/runs/task-run.ts: `Artifact.parse`, first chunk names the
 * artifact, later ones append) → JSON-RPC frame and SSE bytes through the server's own
 * renderer (src/protocol/wire/stream.ts `renderEvent` + `sseFrame`, as src/conversation/runs/task-stream.ts
 * sends them) → TextEncoder. No SQLite here: pipeline (2) runs the real agent in workerd.
 */
import { Artifact } from "../src/protocol/artifact";
import type { TaskEvent } from "../src/protocol/events";
import { Parts } from "../src/protocol/part";
import { sseFrame } from "../src/protocol/sse";
import { renderEvent, type StreamFormat } from "../src/protocol/wire/stream";
import { type Model, ModelRequest } from "../src/providers/base/types";
import { openai } from "../src/providers/openai/openai-chat";
import type { StreamInput } from "./stream-input";

export const PROMPT = "Write a long essay about streaming.";

const FORMAT: StreamFormat = { version: "1.0", binding: "jsonrpc", rpcId: 1 };
const TASK_ID = "0f8c2a57-5c3e-4d55-9d3b-6a2b1f0e9c41";
const CONTEXT_ID = "7d4b1e02-93aa-4f6e-8d0c-2c5e7a9b3f18";

let shared: Model | null = null;
/** The adapter, made once as an agent definition makes it. */
export function ourModel(): Model {
  shared ??= openai({
    model: "gpt-4o-mini",
    apiKey: "sk-bench",
    baseUrl: "http://bench.invalid/v1",
  });
  return shared;
}

export interface OursResult {
  /** Provider events that carried text. */
  deltas: number;
  batches: number;
  frames: number;
  bytes: number;
  /** The SSE frames, when kept (the check run). */
  sse: Uint8Array[];
}

/**
 * Streams `input` once through pipeline (1). `onDelta` runs after every batch with the
 * text deltas seen so far (the heap probe hooks in there).
 */
export async function oursRun(
  input: StreamInput,
  { keep = false, onDelta }: { keep?: boolean; onDelta?: (deltas: number) => void } = {},
): Promise<OursResult> {
  const encoder = new TextEncoder();
  const request = ModelRequest.parse({ messages: [{ role: "user", content: PROMPT }] });
  const out: OursResult = { deltas: 0, batches: 0, frames: 0, bytes: 0, sse: [] };
  let artifactId: string | null = null;
  let seq = 1;
  for await (const batch of ourModel().streamBatches(request, { fetch: input.fetch })) {
    out.batches++;
    let text = "";
    for (const event of batch) {
      if (event.type === "text_delta") {
        text += event.text;
        out.deltas++;
      }
    }
    if (text === "") continue;
    const artifact = Artifact.parse({
      artifactId: artifactId ?? crypto.randomUUID(),
      name: artifactId === null ? "response" : null,
      description: null,
      parts: [Parts.text(text)],
      metadata: {},
      kind: "result",
    });
    const event: TaskEvent = {
      kind: "artifact-update",
      taskId: TASK_ID,
      contextId: CONTEXT_ID,
      artifact,
      append: artifactId !== null,
      lastChunk: false,
    };
    artifactId = artifact.artifactId;
    const bytes = encoder.encode(sseFrame(renderEvent(event, FORMAT), ++seq));
    out.frames++;
    out.bytes += bytes.length;
    if (keep) out.sse.push(bytes);
    onDelta?.(out.deltas);
  }
  return out;
}

/** The text the artifact-update frames of a run carry, read back from the SSE bytes. */
export function textOfFrames(frames: readonly Uint8Array[]): string {
  const decoder = new TextDecoder();
  let text = "";
  for (const frame of frames) {
    const data = /^data: (.*)$/m.exec(decoder.decode(frame))?.[1];
    const json = JSON.parse(data ?? "null") as {
      result?: { artifactUpdate?: { artifact?: { parts?: { text?: string }[] } } };
    };
    for (const part of json.result?.artifactUpdate?.artifact?.parts ?? []) text += part.text ?? "";
  }
  return text;
}
