import files from "virtual:provider-fixtures";

/**
 * A fake provider at the HTTP level. It answers `fetch` calls with scripted responses:
 * recorded fixture bodies replayed byte for byte with their recorded status and headers,
 * split into network chunks at random byte boundaries (inside UTF-8 characters too), or
 * faults (an error status, a hang before the first byte, a cut mid-stream). Every request
 * is recorded so tests can check what an adapter sent.
 */

/** Bytes of a fixture under `test/fixtures/providers/`, e.g. `anthropic/text-short.sse`. */
export function fixtureBytes(path: string): Uint8Array {
  const base64 = files[path];
  if (base64 === undefined) throw new Error(missingFixture(path));
  return Uint8Array.from(atob(base64), (c) => c.charCodeAt(0));
}

function missingFixture(path: string): string {
  return `fake provider: no fixture "${path}" in test/fixtures/providers (${Object.keys(files).length} files there)`;
}

export function fixtureText(path: string): string {
  return new TextDecoder().decode(fixtureBytes(path));
}

export function fixtureJson<T = Record<string, unknown>>(path: string): T {
  return JSON.parse(fixtureText(path)) as T;
}

/** Every fixture path, e.g. to check that each one is covered by a test. */
export function fixturePaths(): string[] {
  return Object.keys(files).sort();
}

/** The recorded request of a fixture (`<name>.request.json`): method, uri and body. */
export interface RecordedRequest {
  method: string;
  uri: string;
  body: Record<string, unknown>;
}

/** Status and headers recorded with a fixture (`<name>.response-meta.json`). */
export function recordedMeta(name: string): { status: number; headers: Headers } {
  const meta = fixtureJson<{
    status: { code: number };
    response_headers: Record<string, string[]>;
  }>(`${name}.response-meta.json`);
  const headers = new Headers();
  for (const [key, values] of Object.entries(meta.response_headers)) {
    // Framing headers describe the recorded transfer, not this one.
    if (["content-length", "transfer-encoding", "content-encoding", "connection"].includes(key))
      continue;
    for (const value of values) headers.append(key, value);
  }
  return { status: meta.status.code, headers };
}

/** One scripted answer. */
export type FakeReply =
  /** Replays `<name>.sse` / `.json` with the recorded status and headers when recorded. */
  | {
      fixture: string;
      status?: number;
      headers?: Record<string, string>;
      cutAfterBytes?: number;
      delayMs?: number;
    }
  /** Any body (a string, or bytes), optionally cut after some bytes (the connection drops). */
  | {
      status: number;
      body: string | Uint8Array;
      headers?: Record<string, string>;
      cutAfterBytes?: number;
      delayMs?: number;
    }
  /** Never answers until the request is aborted. */
  | { hang: true }
  /** Sends the first bytes, then stalls forever. */
  | { stallAfterBytes: number; body: string | Uint8Array; status?: number }
  /** The connection fails before any response. */
  | { networkError: string };

export interface SeenRequest {
  url: string;
  method: string;
  headers: Headers;
  body: Record<string, unknown>;
}

/** A deterministic random source (mulberry32), so a failing split can be reproduced. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Splits bytes at random boundaries into chunks of 1..maxChunk bytes. */
export function randomChunks(bytes: Uint8Array, random: () => number, maxChunk = 64): Uint8Array[] {
  const chunks: Uint8Array[] = [];
  let at = 0;
  while (at < bytes.length) {
    const size = 1 + Math.floor(random() * maxChunk);
    chunks.push(bytes.slice(at, at + size));
    at += size;
  }
  return chunks;
}

export class FakeProvider {
  readonly requests: SeenRequest[] = [];
  readonly #replies: FakeReply[] = [];
  readonly #random: () => number;
  readonly #maxChunk: number;
  /** Bodies currently being streamed; a cancel from the client shows up here. */
  canceledStreams = 0;

  constructor(options: { seed?: number; maxChunk?: number } = {}) {
    this.#random = seededRandom(options.seed ?? 1);
    this.#maxChunk = options.maxChunk ?? 64;
  }

  /** Queues answers, used in order by the next calls. */
  reply(...replies: FakeReply[]): this {
    // A misspelt fixture fails the test here, not as a network error deep in an adapter.
    for (const reply of replies) {
      if ("fixture" in reply && files[reply.fixture] === undefined) {
        throw new Error(missingFixture(reply.fixture));
      }
    }
    this.#replies.push(...replies);
    return this;
  }

  get pending(): number {
    return this.#replies.length;
  }

  /** A `fetch` to hand to an adapter (`CallOptions.fetch`). */
  readonly fetch: typeof fetch = async (input, init) => {
    const request = new Request(input, init);
    const text = await request.text();
    this.requests.push({
      url: request.url,
      method: request.method,
      headers: request.headers,
      body: text ? (JSON.parse(text) as Record<string, unknown>) : {},
    });
    const reply = this.#replies.shift();
    if (!reply)
      throw new Error(`fake provider: no reply scripted for ${request.method} ${request.url}`);
    return this.#answer(reply, request.signal);
  };

  async #answer(reply: FakeReply, signal: AbortSignal): Promise<Response> {
    if ("networkError" in reply) throw new TypeError(reply.networkError);
    if ("hang" in reply) {
      return new Promise<Response>((_, reject) => {
        const fail = () => reject(signal.reason ?? new Error("aborted"));
        if (signal.aborted) fail();
        else signal.addEventListener("abort", fail, { once: true });
      });
    }
    if ("stallAfterBytes" in reply) {
      const bytes = toBytes(reply.body).slice(0, reply.stallAfterBytes);
      const body = new ReadableStream<Uint8Array>({
        start: (controller) => controller.enqueue(bytes),
        cancel: () => {
          this.canceledStreams++;
        },
      });
      return new Response(body, {
        status: reply.status ?? 200,
        headers: { "content-type": "text/event-stream" },
      });
    }
    let bytes: Uint8Array;
    let status: number;
    const headers = new Headers();
    if ("fixture" in reply) {
      const name = reply.fixture.replace(/\.(sse|json)$/, "");
      bytes = fixtureBytes(reply.fixture);
      const metaPath = `${name}.response-meta.json`;
      if (files[metaPath] !== undefined) {
        const meta = recordedMeta(name);
        status = meta.status;
        for (const [key, value] of meta.headers) headers.set(key, value);
      } else {
        status = 200;
        headers.set(
          "content-type",
          reply.fixture.endsWith(".sse") ? "text/event-stream" : "application/json",
        );
      }
      if (reply.status !== undefined) status = reply.status;
    } else {
      bytes = toBytes(reply.body);
      status = reply.status;
    }
    for (const [key, value] of Object.entries(reply.headers ?? {})) headers.set(key, value);
    const cut = reply.cutAfterBytes;
    const chunks = randomChunks(
      cut === undefined ? bytes : bytes.slice(0, cut),
      this.#random,
      this.#maxChunk,
    );
    const delayMs = reply.delayMs ?? 0;
    const body = new ReadableStream<Uint8Array>({
      pull: async (controller) => {
        if (delayMs > 0) await new Promise((r) => setTimeout(r, delayMs));
        const chunk = chunks.shift();
        if (chunk) controller.enqueue(chunk);
        else if (cut !== undefined) controller.error(new TypeError("Network connection lost."));
        else controller.close();
      },
      cancel: () => {
        this.canceledStreams++;
      },
    });
    return new Response(body, { status, headers });
  }
}

function toBytes(body: string | Uint8Array): Uint8Array {
  return typeof body === "string" ? new TextEncoder().encode(body) : body;
}

/** Reads a stream's events to the end, for assertions. */
export async function collectBatches<T>(iterable: AsyncIterable<T[]>): Promise<T[]> {
  const out: T[] = [];
  for await (const batch of iterable) out.push(...batch);
  return out;
}
