import { ProviderError, type ProviderErrorInit } from "../../src/providers/base/errors";
import type {
  CallOptions,
  Model,
  ModelCapabilities,
  ModelRequest,
  StreamEvent,
} from "../../src/providers/base/types";

/**
 * A fake `Model` for wrapper logic: each call plays the next script, step by step. A step
 * is a batch to yield, an error to throw, a side effect to run (advance a fake clock, wait
 * for a test's signal) or a hang until the call is aborted. Calls are recorded.
 */
export type Step =
  | StreamEvent[]
  | { fail: Error }
  | { run: () => void | Promise<void> }
  | { hang: true };

export interface ScriptedCall {
  request: ModelRequest;
  options: CallOptions;
}

export const CAPABILITIES: ModelCapabilities = {
  streaming: true,
  tools: false,
  parallelToolCalls: false,
  structuredOutput: false,
  vision: false,
  reasoning: false,
  contextWindow: null,
  maxOutputTokens: null,
  inputPricePerMillion: null,
  outputPricePerMillion: null,
  cachedInputPricePerMillion: null,
};

export class ScriptedModel implements Model {
  readonly provider: string;
  readonly model: string;
  readonly capabilities: ModelCapabilities;
  readonly calls: ScriptedCall[] = [];
  /** Calls that ended early: the consumer stopped, or the call was aborted. */
  closedEarly = 0;
  readonly #scripts: Step[][];

  constructor(init: {
    provider?: string;
    model?: string;
    capabilities?: Partial<ModelCapabilities>;
    scripts?: Step[][];
  }) {
    this.provider = init.provider ?? "scripted";
    this.model = init.model ?? "m1";
    this.capabilities = { ...CAPABILITIES, ...init.capabilities };
    this.#scripts = [...(init.scripts ?? [])];
  }

  /** Queues scripts for the next calls. */
  script(...scripts: Step[][]): this {
    this.#scripts.push(...scripts);
    return this;
  }

  async *streamBatches(
    request: ModelRequest,
    options: CallOptions = {},
  ): AsyncGenerator<StreamEvent[]> {
    this.calls.push({ request, options });
    const script = this.#scripts.shift();
    if (!script)
      throw new Error(`${this.provider}/${this.model}: no script for call ${this.calls.length}`);
    let finished = false;
    try {
      for (const step of script) {
        if (options.signal?.aborted) throw aborted(this.provider);
        if (Array.isArray(step)) yield step;
        else if ("fail" in step) throw step.fail;
        else if ("run" in step) await step.run();
        else await hang(this.provider, options.signal);
      }
      finished = true;
    } finally {
      if (!finished) this.closedEarly++;
    }
  }
}

function aborted(provider: string): ProviderError {
  return new ProviderError({ provider, kind: "aborted", message: "the call was canceled" });
}

function hang(provider: string, signal: AbortSignal | undefined): Promise<never> {
  return new Promise((_, reject) => {
    if (signal?.aborted) reject(aborted(provider));
    signal?.addEventListener("abort", () => reject(aborted(provider)), { once: true });
  });
}

/** A whole answer: `message_start`, one batch per piece of text, `message_end`. */
export function textScript(
  pieces: string[],
  from: { provider?: string; model?: string } = {},
): Step[] {
  return [
    [start(from.provider ?? "scripted", from.model ?? "m1")],
    ...pieces.map((text): StreamEvent[] => [{ type: "text_delta", text }]),
    [end()],
  ];
}

export function start(provider = "scripted", model = "m1"): StreamEvent {
  return { type: "message_start", provider, model, requestId: null };
}

export function end(): StreamEvent {
  return {
    type: "message_end",
    stopReason: "stop",
    providerStopReason: "stop",
    usage: null,
    reasoning: [],
    costEstimate: null,
  };
}

/** A typed failure, e.g. `failure({ status: 503 })` or `failure({ kind: "network" })`. */
export function failure(
  init: Partial<ProviderErrorInit> & { status?: number } = {},
): ProviderError {
  const kind = init.kind ?? (init.status === undefined ? "network" : "http");
  return new ProviderError({
    provider: "scripted",
    message: `${kind} ${init.status ?? ""} failure`.trim(),
    ...init,
    kind,
  });
}

/** A promise a test resolves by hand, to order concurrent steps. */
export function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve = () => {};
  const promise = new Promise<void>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}
