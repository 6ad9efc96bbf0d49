/**
 * The model-backed agent the `llm` test project serves. Tests choose its model (a real
 * adapter pointed at the fake provider, a fallback, ...) through `harness`: the Durable
 * Objects run in the same isolate as the tests, so they see the same module state.
 */
import { z } from "zod";
import { defineAgent, tool } from "../../../src/index";
import { capabilitiesFor } from "../../../src/providers/base/pricing";
import type {
  CallOptions,
  Model,
  ModelRequest,
  StreamEvent,
} from "../../../src/providers/base/types";

export const harness: {
  model: Model | null;
  /** Replaces `fetch` for every provider call (the fake provider's). */
  fetch: typeof fetch | null;
  /** Every request the agent sent to its model, as the adapter saw it. */
  requests: ModelRequest[];
  toolRuns: string[];
  /** While set, `get_capital` waits for its signal to abort, then records the reason. */
  holdTools: boolean;
  toolAborts: string[];
  /** While set, `get_capital` throws this message. */
  toolThrows: string | null;
  /** While set, `get_capital` answers this instead (e.g. a large output). */
  toolOutput: ((country: string) => string) | null;
} = {
  model: null,
  fetch: null,
  requests: [],
  toolRuns: [],
  holdTools: false,
  toolAborts: [],
  toolThrows: null,
  toolOutput: null,
};

/** Delegates to whatever model the current test set, with the fake provider's fetch. */
const switchable: Model = {
  provider: "test",
  model: "switchable",
  get capabilities() {
    return harness.model?.capabilities ?? capabilitiesFor("switchable");
  },
  streamBatches(request: ModelRequest, options: CallOptions = {}): AsyncIterable<StreamEvent[]> {
    if (!harness.model) throw new Error("no model set for this test");
    harness.requests.push(structuredClone(request));
    return harness.model.streamBatches(request, {
      ...options,
      ...(harness.fetch ? { fetch: harness.fetch } : {}),
    });
  },
};

const worker = defineAgent({
  card: {
    name: "LLM test agent",
    description: "Answers with a model; its provider is a fake replaying recorded streams.",
    url: "http://agent.test/",
    skills: [{ id: "chat", name: "Chat", description: "Answers questions", tags: ["chat"] }],
  },
  model: switchable,
  instructions: "You are a helpful assistant.",
  modelSettings: { temperature: 0 },
  tools: {
    get_capital: tool({
      description: "The capital of a country",
      input: z.object({ country: z.string() }),
      run: async ({ country }, { signal }) => {
        harness.toolRuns.push(country);
        if (harness.toolThrows !== null) throw new Error(harness.toolThrows);
        if (harness.toolOutput) return harness.toolOutput(country);
        if (harness.holdTools) {
          await new Promise((resolve) => signal.addEventListener("abort", resolve, { once: true }));
          const reason = signal.reason as { message?: string } | undefined;
          harness.toolAborts.push(reason?.message ?? String(reason));
        }
        return country === "UK" || country === "United Kingdom" ? "London" : "Paris";
      },
    }),
    fixed_version: tool({
      description: "Return a fixed test version string",
      input: z.object({}),
      run: () => {
        harness.toolRuns.push("fixed_version");
        return "0.32a0";
      },
    }),
    get_country: tool({
      description: "",
      input: z.object({}),
      run: () => {
        harness.toolRuns.push("get_country");
        return "Mexico";
      },
    }),
  },
  push: {},
});

/**
 * What the conversation objects handed to `waitUntil` and has not finished: index windows,
 * runs, deliveries. The file's last test must not end with any of it under way: its next
 * step would reach the Vitest process (each Durable Object call imports the Worker's
 * module through it) after the runner closed (`settle.ts` waits for it).
 */
export const background = new Set<Promise<unknown>>();

// Its instances are concrete; the type's abstract members are the framework's own.
const Conversation = worker.EdgelinkContext as new (
  ctx: DurableObjectState,
  env: Record<string, unknown>,
) => DurableObject;

/** The agent's conversation object, its background work recorded in `background`. */
export class EdgelinkContext extends Conversation {
  constructor(ctx: DurableObjectState, env: Record<string, unknown>) {
    // The platform's object itself (the base class refuses a wrapper), its `waitUntil`
    // shadowed on this instance only.
    const waitUntil = ctx.waitUntil.bind(ctx);
    Object.defineProperty(ctx, "waitUntil", {
      configurable: true,
      value: (work: Promise<unknown>) => {
        const held = work.catch(() => {});
        background.add(held);
        void held.finally(() => background.delete(held));
        waitUntil(work);
      },
    });
    super(ctx, env);
  }
}
export const { EdgelinkIndex } = worker;
export default worker;
