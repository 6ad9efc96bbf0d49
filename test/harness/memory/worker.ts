/**
 * A model-backed agent with long-term memory on, for the `memory` test project: its
 * provider calls go to a fake provider at the HTTP wire that tests script through
 * `harness`; its memory objects are the real ones (EDGELINK_MEMORY).
 */
import { z } from "zod";
import { defineAgent, tool } from "../../../src/index";
import { memory } from "../../../src/memory/index";
import type { CallOptions, Model, ModelRequest } from "../../../src/providers/base/types";
import { openai } from "../../../src/providers/openai/openai-chat";
import { handlerAgent } from "./handler-worker";

export const harness: {
  /** Answers every provider call; set by each test. */
  fetch: typeof fetch | null;
} = { fetch: null };

const wire: typeof fetch = (input, init) => {
  if (!harness.fetch) throw new Error("no provider fetch set for this test");
  return harness.fetch(input, init);
};

/** The real OpenAI adapter, its calls sent to the test's fake provider. */
const real = openai({ model: "gpt-4o-mini", apiKey: "sk-test", baseUrl: "https://fake.test/v1" });
const model: Model = {
  provider: real.provider,
  model: real.model,
  capabilities: real.capabilities,
  streamBatches: (request: ModelRequest, options: CallOptions = {}) =>
    real.streamBatches(request, { ...options, fetch: wire }),
};

const worker = defineAgent({
  card: {
    name: "Memory test agent",
    description: "Answers with a model and remembers its users.",
    url: "http://agent.test/",
    skills: [{ id: "chat", name: "Chat", description: "Answers questions", tags: ["chat"] }],
  },
  model,
  instructions: "You are a helpful assistant.",
  tools: {
    get_weather: tool({
      description: "The weather in a city",
      input: z.object({ city: z.string() }),
      run: ({ city }) => `Sunny in ${city}`,
    }),
  },
  // Callers are who the X-User header says, in the X-Tenant header's tenant.
  auth: {
    authenticate: (request) => {
      const user = request.headers.get("X-User");
      return user ? { subject: user, tenant: request.headers.get("X-Tenant") ?? "" } : null;
    },
  },
  inspector: true,
  memory: memory({
    extract: true,
    tools: true,
    api: { operatorSecret: "MEMORY_OPERATOR_KEY" },
    limits: { extractionCallsPerHour: 50 },
  }),
});

export const { EdgelinkContext, EdgelinkIndex, EdgelinkMemory } = worker;
/** Requests with `X-Agent: handler` go to the handler-written agent (handler-worker.ts). */
export default {
  fetch: (request: Request, env: object, ctx: ExecutionContext) =>
    request.headers.get("X-Agent") === "handler"
      ? handlerAgent.fetch(request, env as never, ctx)
      : worker.fetch(request, env as never, ctx),
};
export { HandlerContext, HandlerIndex } from "./handler-worker";
// The store's own tests configure their objects through a harness (test/harness/memory/store-worker.ts).
export { StoreTestMemory } from "./store-worker";
