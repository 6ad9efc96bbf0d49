import { AllProvidersFailedError, asProviderError, ProviderError } from "./base/errors";
import { membersProblems } from "./base/http";
import type {
  CallOptions,
  Model,
  ModelCapabilities,
  ModelRequest,
  StreamEvent,
} from "./base/types";
import { attempt, isContent, recoveredEvent, release } from "./opening";

/** How a router picks among its models. */
export type RouteStrategy =
  | "fallback"
  | "round_robin"
  | "capability"
  | "custom"
  | "fastest"
  | "cheapest";

/** A custom strategy's answer: the model to use and why. */
export interface RouteChoice {
  model: Model;
  reason: string;
}

/** Picks a model for a request; it may return any model, a fallback included. */
export type RouteChooser = (
  request: ModelRequest,
  models: readonly Model[],
) => RouteChoice | Promise<RouteChoice>;

/** What a router decided for one call, for logs. */
export interface Route {
  strategy: RouteStrategy;
  /** The models in the order they will be tried (all of them at once for `fastest`). */
  order: readonly Model[];
  reason: string;
}

export interface RouterOptions {
  strategy: RouteStrategy;
  models: readonly Model[];
  /** Required for the `custom` strategy. */
  choose?: RouteChooser;
  /** Shown as the router's `model`; default lists the members. */
  name?: string;
  /** Told the route of every call before it starts. */
  onRoute?: (route: Route) => void;
}

/**
 * Sends each call to one of several models.
 * - `fallback`: in the given order; the first to open its stream wins.
 * - `round_robin`: like fallback, but each call starts one model further, wrapping around;
 *   concurrent calls take distinct starts.
 * - `capability`: only models whose capabilities cover the request (tools, structured
 *   output, images), in order; none → a `config` error naming what is missing.
 * - `custom`: `choose(request, models)` picks the one model to use.
 * - `fastest`: starts every model at once; the first to send content wins, the others are
 *   canceled.
 * - `cheapest`: by input + output price per million tokens, unknown prices last, then in
 *   order, falling back like `fallback`.
 *
 * A router only moves on while nothing reached the consumer: a model that fails to
 * open its stream is logged as an `error` event (`recovered: true`) at the start of the
 * stream that does open; a failure after that is thrown as it came. When every candidate
 * fails, one `AllProvidersFailedError` lists each failure. Its capabilities are what
 * at least one member can do; prices are left unknown, as the member is chosen per call
 * (the member's own `message_end` carries the real cost).
 * @example
 * const model = router({ strategy: "capability", models: [workersAI({ model: "@cf/meta/llama-3.1-8b-instruct" }), openai({ model: "gpt-4o" })] });
 */
export function router(options: RouterOptions): Model {
  const { strategy, models, choose } = options;
  if (models.length === 0) throw new TypeError("a router needs at least one model");
  if (strategy === "custom" && typeof choose !== "function")
    throw new TypeError('the "custom" strategy needs a choose(request, models) function');
  const name =
    options.name ?? `${strategy}(${models.map((m) => `${m.provider}/${m.model}`).join(",")})`;
  let turn = 0;

  const plan = async (request: ModelRequest): Promise<Route> => {
    switch (strategy) {
      case "fallback":
        return { strategy, order: models, reason: "in order" };
      case "round_robin": {
        // Taken before any await: concurrent calls each get their own start.
        const start = turn++ % models.length;
        return {
          strategy,
          order: [...models.slice(start), ...models.slice(0, start)],
          reason: `turn ${start}`,
        };
      }
      case "capability":
        return capable(strategy, models, request);
      case "custom": {
        const choice = await (choose as RouteChooser)(request, models);
        return { strategy, order: [choice.model], reason: choice.reason };
      }
      case "cheapest":
        return { strategy, order: byPrice(models), reason: "by price" };
      case "fastest":
        return { strategy, order: models, reason: "all at once" };
    }
  };

  return {
    provider: "router",
    model: name,
    capabilities: unionCapabilities(models),
    configProblems: (env) => membersProblems(models, env),
    async *streamBatches(
      request: ModelRequest,
      call: CallOptions = {},
    ): AsyncGenerator<StreamEvent[]> {
      const route = await plan(request);
      options.onRoute?.(route);
      if (strategy === "fastest") yield* race(route.order, request, call);
      else yield* inOrder(route.order, request, call);
    },
  };
}

/** Each model in turn until one opens its stream. */
async function* inOrder(
  order: readonly Model[],
  request: ModelRequest,
  call: CallOptions,
): AsyncGenerator<StreamEvent[]> {
  const failures: ProviderError[] = [];
  const recovered: StreamEvent[] = [];
  for (const model of order) {
    const result = yield* attempt(() => model.streamBatches(request, call), recovered);
    if (result.opened) return;
    if (isCancel(result.error, call)) throw result.error;
    const failure = asProviderError(model.provider, result.error, call.signal);
    failures.push(failure);
    recovered.push(recoveredEvent(failure, model.model));
  }
  throw new AllProvidersFailedError("router", failures);
}

type Opening =
  | {
      ok: true;
      index: number;
      iterator: AsyncIterator<StreamEvent[]>;
      held: StreamEvent[];
      done: boolean;
    }
  | { ok: false; index: number; error: unknown };

/** Every model at once; the first to send content wins and the others are canceled. */
async function* race(
  models: readonly Model[],
  request: ModelRequest,
  call: CallOptions,
): AsyncGenerator<StreamEvent[]> {
  const controllers = models.map(() => new AbortController());
  const cancelAll = () => {
    for (const c of controllers) c.abort(call.signal?.reason);
  };
  if (call.signal?.aborted) cancelAll();
  else call.signal?.addEventListener("abort", cancelAll, { once: true });
  const iterators: AsyncIterator<StreamEvent[]>[] = [];
  try {
    const open = async (index: number): Promise<Opening> => {
      const held: StreamEvent[] = [];
      try {
        const model = models[index] as Model;
        const signal = (controllers[index] as AbortController).signal;
        const iterator = model.streamBatches(request, { ...call, signal })[Symbol.asyncIterator]();
        iterators[index] = iterator;
        for (;;) {
          const step = await iterator.next();
          if (step.done) return { ok: true, index, iterator, held, done: true };
          held.push(...step.value);
          if (step.value.some(isContent)) return { ok: true, index, iterator, held, done: false };
        }
      } catch (error) {
        return { ok: false, index, error };
      }
    };
    const pending = new Map(models.map((_, i) => [i, open(i)]));
    const failures: ProviderError[] = [];
    const recovered: StreamEvent[] = [];
    let won: Extract<Opening, { ok: true }> | undefined;
    while (pending.size && !won) {
      const settled = await Promise.race(pending.values());
      pending.delete(settled.index);
      if (settled.ok) {
        won = settled;
        break;
      }
      const model = models[settled.index] as Model;
      if (isCancel(settled.error, call)) throw settled.error;
      const failure = asProviderError(model.provider, settled.error, call.signal);
      failures.push(failure);
      recovered.push(recoveredEvent(failure, model.model));
    }
    if (!won) throw new AllProvidersFailedError("router", failures);
    const winner = won.iterator;
    for (const [index] of pending) (controllers[index] as AbortController).abort();
    yield release(won.held, recovered);
    if (won.done) return;
    for (;;) {
      const step = await winner.next();
      if (step.done) return;
      yield step.value;
    }
  } finally {
    call.signal?.removeEventListener("abort", cancelAll);
    // Losers, and a winner the consumer left early, must not keep their upstream open.
    for (const c of controllers) c.abort();
    for (const iterator of iterators) iterator?.return?.().catch(() => {});
  }
}

function isCancel(error: unknown, call: CallOptions): boolean {
  return (
    call.signal?.aborted === true || (error instanceof ProviderError && error.kind === "aborted")
  );
}

/** The models that can serve the request, or a `config` error naming what is missing. */
function capable(strategy: RouteStrategy, models: readonly Model[], request: ModelRequest): Route {
  const needs = requirements(request);
  const order = models.filter((m) => needs.every((need) => m.capabilities[need]));
  if (order.length === 0) {
    const missing = needs.filter((need) => !models.some((m) => m.capabilities[need]));
    const what = missing.length ? missing : needs;
    throw new ProviderError({
      provider: "router",
      kind: "config",
      message: `no model supports this request: it needs ${what.join(" and ")}${missing.length ? "" : " together"}`,
      retryable: false,
    });
  }
  return { strategy, order, reason: needs.length ? `needs ${needs.join(", ")}` : "no needs" };
}

type Need = "tools" | "structuredOutput" | "vision";

function requirements(request: ModelRequest): Need[] {
  const needs: Need[] = [];
  if (request.tools.length > 0) needs.push("tools");
  if (request.outputSchema !== undefined) needs.push("structuredOutput");
  const hasImage = request.messages.some(
    (item) =>
      item.type === "message" &&
      item.content.some((part) => typeof part === "object" && part.type === "image"),
  );
  if (hasImage) needs.push("vision");
  return needs;
}

/** Cheapest first by input + output price; unknown prices last; ties keep their order. */
function byPrice(models: readonly Model[]): Model[] {
  const price = (m: Model) => {
    const { inputPricePerMillion: input, outputPricePerMillion: output } = m.capabilities;
    return input === null || output === null ? Number.POSITIVE_INFINITY : input + output;
  };
  return models
    .map((model, index) => ({ model, index, price: price(model) }))
    .sort((a, b) => a.price - b.price || a.index - b.index)
    .map((entry) => entry.model);
}

/** What at least one member can do; limits are the largest known, prices unknown. */
function unionCapabilities(models: readonly Model[]): ModelCapabilities {
  const any = (key: keyof ModelCapabilities) => models.some((m) => m.capabilities[key] === true);
  const largest = (key: "contextWindow" | "maxOutputTokens") => {
    const known = models.map((m) => m.capabilities[key]).filter((v): v is number => v !== null);
    return known.length ? Math.max(...known) : null;
  };
  return {
    streaming: any("streaming"),
    tools: any("tools"),
    parallelToolCalls: any("parallelToolCalls"),
    structuredOutput: any("structuredOutput"),
    vision: any("vision"),
    reasoning: any("reasoning"),
    contextWindow: largest("contextWindow"),
    maxOutputTokens: largest("maxOutputTokens"),
    inputPricePerMillion: null,
    outputPricePerMillion: null,
    cachedInputPricePerMillion: null,
  };
}
