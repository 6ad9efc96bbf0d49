/**
 * The memory-turn benchmark's worker (bench/memory-turn.mjs serves it on workerd): the
 * same model-backed agent three times, without memory (`/plain/...`), with recall alone
 * (`/recall/...`) and with recall, extraction and turns recorded (`/memory/...`), each with its own
 * conversation objects; the two with memory share the memory objects. The model answers at
 * once, and answers right only when its request is right: the memory agent's system prompt
 * carries the recalled facts, the plain agent's carries none (the bench fails on any other
 * answer). The extraction model takes EXTRACTION_MS before answering, so a turn that
 * waited for extraction would show it. Callers are one user (`X-User`), as memory needs an
 * owner.
 */
import { defineAgent } from "../src/index";
import { BUNDLE_HEADING } from "../src/memory/base/render";
import { memory } from "../src/memory/index";
import type { Model, ModelRequest, StreamEvent } from "../src/providers/base/types";
import { fakeModel } from "../src/testing/index";

/** Kept equal to bench/memory-turn.mjs's. */
const EXTRACTION_MS = 60;
const ANSWER = "Noted: window seats, and nothing else to report.";
/** Words of every fact the bench stores: a recalled section holds them. */
const REMEMBERED = "The user likes window seats";

const CAPABILITIES = fakeModel([]).capabilities;

/** One answer, streamed as a provider would: start, the text, the end. */
async function* answer(text: string): AsyncIterable<StreamEvent[]> {
  yield [{ type: "message_start", provider: "bench", model: "bench", requestId: null }];
  yield [{ type: "text_delta", text }];
  yield [
    {
      type: "message_end",
      stopReason: "stop",
      providerStopReason: "stop",
      usage: null,
      reasoning: [],
      costEstimate: null,
    },
  ];
}

/**
 * Answers every turn at once: ANSWER when the request holds the recalled memory (a fenced
 * user-role message before the conversation) with the stored facts exactly when
 * `remembers`, another text otherwise. Unlike `fakeModel`
 * it keeps no copy of each request, which would cost the memory agent's longer prompt more.
 */
/** The recalled memory message's text: the first user message, when it is the fence. */
function recalledSection(request: ModelRequest): string {
  for (const item of request.messages as unknown as { role?: string; content?: unknown }[]) {
    if (item.role !== "user") continue;
    const content = item.content;
    const text =
      typeof content === "string"
        ? content
        : Array.isArray(content)
          ? content
              .map((p) =>
                typeof p === "string" ? p : String((p as { text?: unknown }).text ?? ""),
              )
              .join("")
          : "";
    return text.startsWith("<recalled_memory>") ? text : "";
  }
  return "";
}

const answering = (remembers: boolean): Model => ({
  provider: "bench",
  model: "bench",
  capabilities: CAPABILITIES,
  streamBatches(request: ModelRequest) {
    const section = recalledSection(request);
    const recalled = section.includes(BUNDLE_HEADING) && section.includes(REMEMBERED);
    if (recalled === remembers) return answer(ANSWER);
    return answer(remembers ? "WRONG: no memory in the request" : "WRONG: memory in the request");
  },
});

/** Extraction: waits, then adds nothing (the memory stays the same size run after run). */
const extractor = (): Model => ({
  provider: "bench",
  model: "bench-extraction",
  capabilities: CAPABILITIES,
  async *streamBatches(): AsyncIterable<StreamEvent[]> {
    await new Promise((resolve) => setTimeout(resolve, EXTRACTION_MS));
    yield* answer(JSON.stringify({ facts: [], entities: [] }));
  },
});

const auth = {
  authenticate: (request: Request) => {
    const user = request.headers.get("X-User");
    return user ? { subject: user } : null;
  },
};
const card = { name: "Bench", description: "Memory turn benchmark", url: "http://bench/" };

const plain = defineAgent({
  card,
  model: answering(false),
  instructions: "You are a helpful assistant.",
  auth,
  rateLimit: false,
  bindings: { context: "PLAIN_CONTEXT", index: "PLAIN_INDEX" },
});
const remembering = defineAgent({
  card,
  model: answering(true),
  instructions: "You are a helpful assistant.",
  auth,
  rateLimit: false,
  bindings: { context: "MEMORY_CONTEXT", index: "MEMORY_INDEX" },
  // Every turn extracts (the hourly allowance is not what is measured) and is recorded
  // (its message and answer kept as turns, off the answer's path).
  memory: memory({
    extract: { model: extractor() },
    turns: { record: true },
    api: true,
    limits: { extractionCallsPerHour: 100_000 },
  }),
});

/** Recall alone (no extraction), on the same memories (the namespace the other agent binds). */
const recalling = defineAgent({
  card,
  model: answering(true),
  instructions: "You are a helpful assistant.",
  auth,
  rateLimit: false,
  bindings: { context: "RECALL_CONTEXT", index: "RECALL_INDEX" },
  memory: memory(),
});

export const PlainContext = plain.EdgelinkContext;
export const PlainIndex = plain.EdgelinkIndex;
export const MemoryContext = remembering.EdgelinkContext;
export const MemoryIndex = remembering.EdgelinkIndex;
export const RecallContext = recalling.EdgelinkContext;
export const RecallIndex = recalling.EdgelinkIndex;
export const EdgelinkMemory = remembering.EdgelinkMemory;

export default {
  fetch(request: Request, env: object, ctx: ExecutionContext) {
    const url = new URL(request.url);
    const [, which, ...rest] = url.pathname.split("/");
    url.pathname = `/${rest.join("/")}`;
    const forwarded = new Request(url, request);
    if (which === "plain") return plain.fetch(forwarded, env as never, ctx);
    if (which === "memory") return remembering.fetch(forwarded, env as never, ctx);
    if (which === "recall") return recalling.fetch(forwarded, env as never, ctx);
    return new Response("not found", { status: 404 });
  },
};
