import type { ModelCapabilities, Usage } from "./types";

/**
 * What we know about well-known models: context window, output limit and list prices in
 * US dollars per million tokens (decision 6). Looked up by the longest matching prefix, so
 * dated ids (`gpt-4o-mini-2024-07-18`) find their family. A model not listed has unknown
 * prices: its cost estimate is `null`, never a made-up zero.
 */
interface Known {
  contextWindow: number;
  maxOutputTokens: number;
  input: number;
  output: number;
  cachedInput?: number;
  /** Price of tokens written to the prompt cache, where writing costs extra (Anthropic). */
  cacheWrite?: number;
  reasoning?: boolean;
  vision?: boolean;
}

const KNOWN: Record<string, Known> = {
  "gpt-4o-mini": {
    contextWindow: 128_000,
    maxOutputTokens: 16_384,
    input: 0.15,
    output: 0.6,
    cachedInput: 0.075,
    vision: true,
  },
  "gpt-4o": {
    contextWindow: 128_000,
    maxOutputTokens: 16_384,
    input: 2.5,
    output: 10,
    cachedInput: 1.25,
    vision: true,
  },
  "gpt-4.1-nano": {
    contextWindow: 1_047_576,
    maxOutputTokens: 32_768,
    input: 0.1,
    output: 0.4,
    cachedInput: 0.025,
    vision: true,
  },
  "gpt-4.1-mini": {
    contextWindow: 1_047_576,
    maxOutputTokens: 32_768,
    input: 0.4,
    output: 1.6,
    cachedInput: 0.1,
    vision: true,
  },
  "gpt-4.1": {
    contextWindow: 1_047_576,
    maxOutputTokens: 32_768,
    input: 2,
    output: 8,
    cachedInput: 0.5,
    vision: true,
  },
  "gpt-5-nano": {
    contextWindow: 400_000,
    maxOutputTokens: 128_000,
    input: 0.05,
    output: 0.4,
    cachedInput: 0.005,
    reasoning: true,
    vision: true,
  },
  "gpt-5-mini": {
    contextWindow: 400_000,
    maxOutputTokens: 128_000,
    input: 0.25,
    output: 2,
    cachedInput: 0.025,
    reasoning: true,
    vision: true,
  },
  "gpt-5": {
    contextWindow: 400_000,
    maxOutputTokens: 128_000,
    input: 1.25,
    output: 10,
    cachedInput: 0.125,
    reasoning: true,
    vision: true,
  },
  o3: {
    contextWindow: 200_000,
    maxOutputTokens: 100_000,
    input: 2,
    output: 8,
    cachedInput: 0.5,
    reasoning: true,
    vision: true,
  },
  "o4-mini": {
    contextWindow: 200_000,
    maxOutputTokens: 100_000,
    input: 1.1,
    output: 4.4,
    cachedInput: 0.275,
    reasoning: true,
    vision: true,
  },
  "claude-opus-4": {
    contextWindow: 200_000,
    maxOutputTokens: 32_000,
    input: 15,
    output: 75,
    cachedInput: 1.5,
    cacheWrite: 18.75,
    reasoning: true,
    vision: true,
  },
  "claude-sonnet-4": {
    contextWindow: 200_000,
    maxOutputTokens: 64_000,
    input: 3,
    output: 15,
    cachedInput: 0.3,
    cacheWrite: 3.75,
    reasoning: true,
    vision: true,
  },
  "claude-3-7-sonnet": {
    contextWindow: 200_000,
    maxOutputTokens: 64_000,
    input: 3,
    output: 15,
    cachedInput: 0.3,
    cacheWrite: 3.75,
    reasoning: true,
    vision: true,
  },
  "claude-haiku-4": {
    contextWindow: 200_000,
    maxOutputTokens: 64_000,
    input: 1,
    output: 5,
    cachedInput: 0.1,
    cacheWrite: 1.25,
    reasoning: true,
    vision: true,
  },
  "claude-3-5-haiku": {
    contextWindow: 200_000,
    maxOutputTokens: 8_192,
    input: 0.8,
    output: 4,
    cachedInput: 0.08,
    cacheWrite: 1,
    vision: true,
  },
  "gemini-2.5-pro": {
    contextWindow: 1_048_576,
    maxOutputTokens: 65_536,
    input: 1.25,
    output: 10,
    cachedInput: 0.31,
    reasoning: true,
    vision: true,
  },
  "gemini-2.5-flash-lite": {
    contextWindow: 1_048_576,
    maxOutputTokens: 65_536,
    input: 0.1,
    output: 0.4,
    cachedInput: 0.025,
    reasoning: true,
    vision: true,
  },
  "gemini-2.5-flash": {
    contextWindow: 1_048_576,
    maxOutputTokens: 65_536,
    input: 0.3,
    output: 2.5,
    cachedInput: 0.075,
    reasoning: true,
    vision: true,
  },
  "gemini-2.0-flash": {
    contextWindow: 1_048_576,
    maxOutputTokens: 8_192,
    input: 0.1,
    output: 0.4,
    cachedInput: 0.025,
    vision: true,
  },
};

const PREFIXES = Object.keys(KNOWN).sort((a, b) => b.length - a.length);

function lookup(model: string): Known | null {
  const bare = model.includes("/") ? model.slice(model.lastIndexOf("/") + 1) : model;
  const key = PREFIXES.find((prefix) => bare.startsWith(prefix));
  return key ? (KNOWN[key] ?? null) : null;
}

/**
 * Capabilities of a model, from the table above and the adapter's defaults; `overrides`
 * wins (set prices for a model we do not know, or a negotiated rate).
 * @example
 * capabilitiesFor("gpt-4o-mini-2024-07-18").inputPricePerMillion; // 0.15
 */
export function capabilitiesFor(
  model: string,
  overrides: Partial<ModelCapabilities> = {},
): ModelCapabilities {
  const known = lookup(model);
  return {
    streaming: true,
    tools: true,
    parallelToolCalls: true,
    structuredOutput: true,
    vision: known?.vision ?? false,
    reasoning: known?.reasoning ?? false,
    contextWindow: known?.contextWindow ?? null,
    maxOutputTokens: known?.maxOutputTokens ?? null,
    inputPricePerMillion: known?.input ?? null,
    outputPricePerMillion: known?.output ?? null,
    cachedInputPricePerMillion: known?.cachedInput ?? known?.input ?? null,
    cacheWriteInputPricePerMillion: known?.cacheWrite ?? known?.input ?? null,
    ...overrides,
  };
}

/**
 * Cost of one call in US dollars, or `null` when a price is unknown. Prompt tokens
 * read from the cache are charged at the cached rate, those written to it at the
 * cache-write rate, the rest at the input rate.
 * @example
 * estimateCost(capabilitiesFor("gpt-4o-mini"), usage); // e.g. 0.000012
 */
export function estimateCost(capabilities: ModelCapabilities, usage: Usage | null): number | null {
  const { inputPricePerMillion: input, outputPricePerMillion: output } = capabilities;
  if (!usage || input === null || output === null) return null;
  const cached = Math.min(usage.cachedPromptTokens ?? 0, usage.promptTokens);
  const written = Math.min(usage.cacheWritePromptTokens ?? 0, usage.promptTokens - cached);
  const cachedRate = capabilities.cachedInputPricePerMillion ?? input;
  const writeRate = capabilities.cacheWriteInputPricePerMillion ?? input;
  const dollars =
    ((usage.promptTokens - cached - written) * input +
      cached * cachedRate +
      written * writeRate +
      usage.completionTokens * output) /
    1e6;
  return Math.round(dollars * 1e9) / 1e9;
}
