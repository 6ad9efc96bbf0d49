/**
 * The provider streams of the streaming benchmark (bench/stream.mjs): a recorded OpenAI
 * chat stream (its bytes are handed in), or a synthetic one of N content deltas shaped
 * like the recorded ones; the bytes cut into network chunks of 1-4 KiB at arbitrary byte
 * offsets (inside UTF-8 characters too); and a `fetch` that answers every call with a
 * fresh Response replaying those chunks, one chunk per read. Both sides of every
 * comparison get the same chunk list. Web APIs only: it runs in Node and in workerd.
 */

export interface StreamInput {
  label: string;
  /** Provider SSE events in the body (`data:` lines), [DONE] included. */
  events: number;
  bytes: number;
  chunks: Uint8Array[];
  /** The text the content deltas add up to, to check every pipeline's output. */
  text: string;
  fetch: typeof fetch;
}

/** A small deterministic PRNG (mulberry32), so every run and runtime sees the same stream. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// Tokens as a tokenizer cuts English prose: mostly " word", some punctuation, line breaks,
// and a few multi-byte characters so that chunk boundaries fall inside them.
const WORDS = (
  "the of and to in is that for it as with was on be by this are from at or an which " +
  "stream model token event agent request response server client durable object storage " +
  "batch network read write append artifact task message context history provider usage " +
  "latency throughput memory chunk frame delta parser decoder encoder worker runtime"
).split(" ");
const PIECES = [
  ",",
  ".",
  ":",
  "\n\n",
  "\n",
  " -",
  " (",
  ")",
  " é",
  "ü",
  " —",
  " 日本",
  "語",
  " 🙂",
];
const ALNUM = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

/**
 * A chat completion stream of `deltas` content deltas, framed as OpenAI sends it with
 * `stream_options.include_usage`: a role chunk, the deltas, a finish chunk, a usage chunk
 * with empty choices, and `[DONE]`. Every chunk carries the same envelope fields as the
 * recorded ones (id, created, model, service_tier, system_fingerprint, obfuscation).
 */
export function syntheticStream(deltas: number, seed = 7): { body: string; text: string } {
  const rand = random(seed);
  const id = "chatcmpl-BenchSynthetic0000000000000";
  const head = `{"id":"${id}","object":"chat.completion.chunk","created":1754688929,"model":"gpt-4o-mini-2024-07-18","service_tier":"default","system_fingerprint":"fp_560af6e559","choices":[{"index":0,"delta":`;
  const obfuscation = (length: number) => {
    let s = "";
    for (let i = 0; i < length; i++) s += ALNUM[Math.floor(rand() * ALNUM.length)];
    return s;
  };
  const lines: string[] = [];
  const text: string[] = [];
  const chunk = (delta: string, finish: string | null) =>
    `data: ${head}${delta},"logprobs":null,"finish_reason":${finish === null ? "null" : `"${finish}"`}}],"usage":null,"obfuscation":"${obfuscation(4 + Math.floor(rand() * 12))}"}\n\n`;
  lines.push(chunk('{"role":"assistant","content":"","refusal":null}', null));
  for (let i = 0; i < deltas; i++) {
    const r = rand();
    const token =
      r < 0.82
        ? ` ${WORDS[Math.floor(rand() * WORDS.length)]}`
        : (PIECES[Math.floor(rand() * PIECES.length)] as string);
    text.push(token);
    lines.push(chunk(`{"content":${JSON.stringify(token)}}`, null));
  }
  lines.push(chunk("{}", "stop"));
  lines.push(
    `data: {"id":"${id}","object":"chat.completion.chunk","created":1754688929,"model":"gpt-4o-mini-2024-07-18","service_tier":"default","system_fingerprint":"fp_560af6e559","choices":[],"usage":{"prompt_tokens":31,"completion_tokens":${deltas},"total_tokens":${31 + deltas},"prompt_tokens_details":{"cached_tokens":0,"audio_tokens":0},"completion_tokens_details":{"reasoning_tokens":0,"audio_tokens":0,"accepted_prediction_tokens":0,"rejected_prediction_tokens":0}},"obfuscation":"${obfuscation(8)}"}\n\n`,
  );
  lines.push("data: [DONE]\n\n");
  return { body: lines.join(""), text: text.join("") };
}

/** The text the content deltas of an OpenAI chat SSE body add up to. */
export function contentOf(body: string): string {
  let text = "";
  for (const line of body.split("\n")) {
    if (!line.startsWith("data: {")) continue;
    const chunk = JSON.parse(line.slice(6)) as {
      choices?: { delta?: { content?: string | null } }[];
    };
    text += chunk.choices?.[0]?.delta?.content ?? "";
  }
  return text;
}

/** Cuts `bytes` into chunks of `min`..`max` bytes (views, not copies). */
export function networkChunks(bytes: Uint8Array, seed = 11, min = 1024, max = 4096): Uint8Array[] {
  const rand = random(seed);
  const chunks: Uint8Array[] = [];
  for (let at = 0; at < bytes.length; ) {
    const size = min + Math.floor(rand() * (max - min + 1));
    chunks.push(bytes.subarray(at, Math.min(bytes.length, at + size)));
    at += size;
  }
  return chunks;
}

/**
 * A `fetch` whose every answer is a 200 event stream replaying `chunks`, one per read
 * (pulled on demand, as a socket delivers them). The request is not looked at.
 */
export function replayFetch(chunks: readonly Uint8Array[]): typeof fetch {
  return (async () => {
    let i = 0;
    const body = new ReadableStream<Uint8Array>(
      {
        pull(controller) {
          const chunk = chunks[i++];
          if (chunk === undefined) controller.close();
          else controller.enqueue(chunk);
        },
      },
      { highWaterMark: 0 },
    );
    return new Response(body, {
      status: 200,
      headers: {
        "content-type": "text/event-stream; charset=utf-8",
        "x-request-id": "req_bench_replay",
      },
    });
  }) as typeof fetch;
}

/** A stream input from an SSE body. */
export function streamInput(label: string, body: string, text = contentOf(body)): StreamInput {
  const bytes = new TextEncoder().encode(body);
  const chunks = networkChunks(bytes);
  return {
    label,
    events: body.split("\n").filter((line) => line.startsWith("data:")).length,
    bytes: bytes.length,
    chunks,
    text,
    fetch: replayFetch(chunks),
  };
}

/** The synthetic stream of `deltas` content deltas as a stream input. */
export function syntheticInput(deltas: number): StreamInput {
  const { body, text } = syntheticStream(deltas);
  return streamInput(`synthetic ${deltas.toLocaleString("en-US")} deltas`, body, text);
}
