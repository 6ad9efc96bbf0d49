/**
 * Turns texts into vectors for semantic recall. Optional: without one, recall ranks by
 * text match alone. `id` names the model, so vectors of another model are never compared.
 * @example
 * const embedder = workersAiEmbedder(env.AI, "@cf/baai/bge-small-en-v1.5", 384);
 */
export interface Embedder {
  id: string;
  dimensions: number;
  embed(texts: string[]): Promise<Float32Array[]>;
}

/** Texts in one embedding call: more are sent in several. */
export const EMBED_BATCH = 32;

/** The part of a Workers AI binding an embedder uses. */
export interface WorkersAiBinding {
  run(model: string, input: { text: string[] }): Promise<unknown>;
}

function checkVectors(
  raw: unknown,
  count: number,
  dimensions: number,
  who: string,
): Float32Array[] {
  if (!Array.isArray(raw) || raw.length !== count) {
    throw new Error(`${who}: expected ${count} vectors`);
  }
  return raw.map((row, i) => {
    if (!Array.isArray(row) || row.length !== dimensions || !row.every(Number.isFinite)) {
      throw new Error(`${who}: vector ${i} is not ${dimensions} finite numbers`);
    }
    return Float32Array.from(row as number[]);
  });
}

async function batched(
  texts: string[],
  one: (batch: string[]) => Promise<Float32Array[]>,
): Promise<Float32Array[]> {
  const out: Float32Array[] = [];
  for (let i = 0; i < texts.length; i += EMBED_BATCH) {
    out.push(...(await one(texts.slice(i, i + EMBED_BATCH))));
  }
  return out;
}

/**
 * An embedder on a Workers AI binding (`[ai] binding = "AI"`), e.g. the BGE models, whose
 * answer is `{ data: number[][] }`.
 * @example
 * const embedder = workersAiEmbedder(env.AI, "@cf/baai/bge-base-en-v1.5", 768);
 */
export function workersAiEmbedder(
  binding: WorkersAiBinding,
  model: string,
  dimensions: number,
): Embedder {
  const who = `embedder ${model}`;
  return {
    id: `workers-ai:${model}`,
    dimensions,
    embed: (texts) =>
      batched(texts, async (batch) => {
        const answer = (await binding.run(model, { text: batch })) as { data?: unknown };
        return checkVectors(answer?.data, batch.length, dimensions, who);
      }),
  };
}

export interface OpenAiEmbedderOptions {
  /** E.g. https://api.openai.com/v1: `/embeddings` is appended. */
  baseURL: string;
  apiKey: string;
  model: string;
  dimensions: number;
  /** Replaces the global fetch (tests, a service binding). */
  fetch?: typeof fetch;
}

/** Largest embeddings answer read, in bytes: a hostile endpoint cannot exhaust memory. */
const MAX_ANSWER_BYTES = 16 * 1024 * 1024;

/**
 * An embedder on any OpenAI-compatible `/embeddings` endpoint (OpenAI, Azure, Ollama,
 * vLLM, ...).
 * @example
 * const embedder = openAiEmbedder({
 *   baseURL: "https://api.openai.com/v1",
 *   apiKey: env.OPENAI_API_KEY,
 *   model: "text-embedding-3-small",
 *   dimensions: 1536,
 * });
 */
export function openAiEmbedder(options: OpenAiEmbedderOptions): Embedder {
  const url = `${options.baseURL.replace(/\/+$/, "")}/embeddings`;
  const who = `embedder ${options.model}`;
  return {
    id: `openai:${options.model}`,
    dimensions: options.dimensions,
    embed: (texts) =>
      batched(texts, async (batch) => {
        const response = await (options.fetch ?? fetch)(url, {
          method: "POST",
          headers: {
            "content-type": "application/json",
            authorization: `Bearer ${options.apiKey}`,
          },
          body: JSON.stringify({ model: options.model, input: batch, encoding_format: "float" }),
        });
        if (!response.ok) {
          await response.body?.cancel();
          throw new Error(`${who}: HTTP ${response.status}`);
        }
        const length = Number(response.headers.get("content-length") ?? "0");
        if (length > MAX_ANSWER_BYTES) {
          await response.body?.cancel();
          throw new Error(`${who}: answer too large`);
        }
        const text = await response.text();
        if (text.length > MAX_ANSWER_BYTES) throw new Error(`${who}: answer too large`);
        const answer = JSON.parse(text) as {
          data?: Array<{ index?: number; embedding?: unknown }>;
        };
        if (!Array.isArray(answer.data)) throw new Error(`${who}: no data`);
        // The endpoint may answer out of order; `index` says which input each vector is.
        const rows = [...answer.data].sort((a, b) => (a.index ?? 0) - (b.index ?? 0));
        return checkVectors(
          rows.map((row) => row.embedding),
          batch.length,
          options.dimensions,
          who,
        );
      }),
  };
}

/** Cosine similarity of two vectors of one length (0 when either is all zeros). */
export function cosine(a: Float32Array, b: Float32Array): number {
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    const x = a[i] as number;
    const y = b[i] as number;
    dot += x * y;
    na += x * x;
    nb += y * y;
  }
  return na === 0 || nb === 0 ? 0 : dot / Math.sqrt(na * nb);
}

/** A vector as the bytes stored in SQLite (a Float32 blob). */
export function vectorBlob(vector: Float32Array): ArrayBuffer {
  return vector.buffer.slice(
    vector.byteOffset,
    vector.byteOffset + vector.byteLength,
  ) as ArrayBuffer;
}

/** A stored blob as a vector; null when it is not `dimensions` floats. */
export function blobVector(
  blob: ArrayBuffer | null | undefined,
  dimensions: number,
): Float32Array | null {
  if (!blob || blob.byteLength !== dimensions * 4) return null;
  return new Float32Array(blob.slice(0));
}

/**
 * The part of a Vectorize index binding the memory uses, so a fake can stand in for it.
 * One index serves every memory: each memory keeps its vectors in its own namespace.
 */
export interface VectorIndex {
  upsert(
    vectors: Array<{ id: string; values: number[] | Float32Array; namespace?: string }>,
  ): Promise<unknown>;
  query(
    vector: number[] | Float32Array,
    options: { topK: number; namespace?: string },
  ): Promise<{ matches: Array<{ id: string; score: number }> }>;
  deleteByIds(ids: string[]): Promise<unknown>;
}
