import { estimateCost } from "./base/pricing";
import {
  type CallOptions,
  type Model,
  type ModelCapabilities,
  ModelRequest,
  type ModelRequestInput,
  type StreamEvent,
} from "./base/types";

/** What `withOverrides` can change: request settings and the capabilities (prices) reported. */
export interface Overrides {
  /** Set on every request, over what the request says (`temperature`, `maxTokens`, ...). */
  settings?: Omit<ModelRequestInput, "messages">;
  /** Replaces reported capabilities, e.g. negotiated prices. */
  capabilities?: Partial<ModelCapabilities>;
}

const Settings = ModelRequest.omit({ messages: true }).partial();

/**
 * A new model that applies `overrides` to every call; the original model is not
 * changed and keeps its own settings. Settings are validated here, once.
 * @example
 * const precise = withOverrides(openai({ model: "gpt-4o-mini" }), { settings: { temperature: 0 } });
 */
export function withOverrides(model: Model, overrides: Overrides): Model {
  // Only the keys the caller gave: partial() still fills defaults of nested objects.
  const given = overrides.settings ?? {};
  const parsed = Settings.parse(given);
  const settings = Object.fromEntries(
    Object.keys(given).map((key) => [key, parsed[key as keyof typeof parsed]]),
  ) as Partial<ModelRequest>;
  const capabilities = { ...model.capabilities, ...overrides.capabilities };
  // Each adapter prices a call from its own capabilities; overridden prices must reach the
  // cost too, not only what the model reports about itself.
  const repriced = PRICE_KEYS.some((key) => overrides.capabilities?.[key] !== undefined);
  return {
    provider: model.provider,
    model: model.model,
    configProblems: (env) => model.configProblems?.(env) ?? [],
    capabilities,
    streamBatches(request: ModelRequest, options?: CallOptions): AsyncIterable<StreamEvent[]> {
      const batches = model.streamBatches({ ...request, ...settings }, options);
      return repriced ? reprice(batches, capabilities) : batches;
    },
  };
}

const PRICE_KEYS = [
  "inputPricePerMillion",
  "outputPricePerMillion",
  "cachedInputPricePerMillion",
  "cacheWriteInputPricePerMillion",
] as const;

async function* reprice(
  batches: AsyncIterable<StreamEvent[]>,
  capabilities: ModelCapabilities,
): AsyncIterable<StreamEvent[]> {
  for await (const batch of batches) {
    yield batch.map((event) =>
      event.type === "message_end"
        ? { ...event, costEstimate: estimateCost(capabilities, event.usage) }
        : event,
    );
  }
}
