/**
 * The point of comparison of the streaming benchmark: the Vercel AI SDK (`ai` v7,
 * `@ai-sdk/openai` v4) reading the same replayed stream through its OpenAI chat model,
 * consumed the way its documentation streams text: `streamText(...).textStream`.
 * `experimental_streamTextLowMemory` (single consumer, no replay buffers) is measured
 * beside it, since streamText keeps the whole answer for its promises.
 */
import { createOpenAI } from "@ai-sdk/openai";
import { experimental_streamTextLowMemory, streamText } from "ai";
import type { StreamInput } from "./stream-input";

export type AiSdkVariant = "streamText" | "lowMemory";

/** One model per input, made once (as ours is), reused by every run. */
function modelFor(input: StreamInput) {
  const provider = createOpenAI({
    apiKey: "sk-bench",
    baseURL: "http://bench.invalid/v1",
    fetch: input.fetch,
  });
  return provider.chat("gpt-4o-mini");
}

const models = new WeakMap<StreamInput, ReturnType<typeof modelFor>>();

export interface RunOptions {
  /** Keep the output (for the check run); timed and heap runs only count it. */
  keep?: boolean;
  /** Runs after every text part (the heap probe hooks in here). */
  onDelta?: (deltas: number) => void;
}

/** Streams `input` once through the AI SDK: text parts, characters, and the text if kept. */
export async function aiSdkRun(
  input: StreamInput,
  variant: AiSdkVariant,
  { keep = false, onDelta }: RunOptions = {},
): Promise<{ text: string; deltas: number; chars: number }> {
  let model = models.get(input);
  if (!model) {
    model = modelFor(input);
    models.set(input, model);
  }
  const options = {
    model,
    prompt: "Write a long essay about streaming.",
    maxRetries: 0,
    onError: ({ error }: { error: unknown }) => {
      throw error;
    },
  };
  const result =
    variant === "streamText" ? streamText(options) : experimental_streamTextLowMemory(options);
  const parts: string[] = [];
  let deltas = 0;
  let chars = 0;
  for await (const text of result.textStream) {
    if (keep) parts.push(text);
    chars += text.length;
    deltas++;
    onDelta?.(deltas);
  }
  return { text: parts.join(""), deltas, chars };
}
