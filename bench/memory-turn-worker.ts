/**
 * The memory-turn benchmark's worker (bench/memory-turn.mjs serves it on workerd): the
 * same model-backed agent twice, without memory (`/plain/...`) and with it (`/memory/...`,
 * recall and extraction on), each with its own Durable Objects. The model answers at
 * once; the extraction model takes EXTRACTION_MS before answering, so a turn that waited
 * for extraction would show it. Callers are one user (`X-User`), as memory needs an owner.
 */
import { defineAgent } from "../src/index";
import { memory } from "../src/memory/index";
import type { CallOptions, Model, ModelRequest, StreamEvent } from "../src/providers/types";
import { fakeModel } from "../src/testing/index";

const EXTRACTION_MS = 300;
const ANSWER = "Noted: window seats, and nothing else to report.";

/** Answers every turn at once with the same text. */
const answering = (): Model => {
  const model = fakeModel([]);
  return {
    ...model,
    streamBatches: (request: ModelRequest, options?: CallOptions) => {
      model.reply(ANSWER);
      return model.streamBatches(request, options);
    },
  };
};

/** Extraction: waits, then adds nothing (the memory stays the same size run after run). */
const extractor = (): Model => {
  const model = fakeModel([]);
  return {
    ...model,
    async *streamBatches(
      request: ModelRequest,
      options?: CallOptions,
    ): AsyncIterable<StreamEvent[]> {
      await new Promise((resolve) => setTimeout(resolve, EXTRACTION_MS));
      model.reply(JSON.stringify({ facts: [], entities: [] }));
      yield* model.streamBatches(request, options);
    },
  };
};

const auth = {
  authenticate: (request: Request) => {
    const user = request.headers.get("X-User");
    return user ? { subject: user } : null;
  },
};
const card = { name: "Bench", description: "Memory turn benchmark", url: "http://bench/" };

const plain = defineAgent({
  card,
  model: answering(),
  instructions: "You are a helpful assistant.",
  auth,
  rateLimit: false,
  bindings: { context: "PLAIN_CONTEXT", index: "PLAIN_INDEX" },
});
const remembering = defineAgent({
  card,
  model: answering(),
  instructions: "You are a helpful assistant.",
  auth,
  rateLimit: false,
  bindings: { context: "MEMORY_CONTEXT", index: "MEMORY_INDEX" },
  memory: memory({ extract: { model: extractor() }, api: true }),
});

export const PlainContext = plain.EdgelinkContext;
export const PlainIndex = plain.EdgelinkIndex;
export const MemoryContext = remembering.EdgelinkContext;
export const MemoryIndex = remembering.EdgelinkIndex;
export const EdgelinkMemory = remembering.EdgelinkMemory;

export default {
  fetch(request: Request, env: object, ctx: ExecutionContext) {
    const url = new URL(request.url);
    const [, which, ...rest] = url.pathname.split("/");
    url.pathname = `/${rest.join("/")}`;
    const forwarded = new Request(url, request);
    if (which === "plain") return plain.fetch(forwarded, env as never, ctx);
    if (which === "memory") return remembering.fetch(forwarded, env as never, ctx);
    return new Response("not found", { status: 404 });
  },
};
