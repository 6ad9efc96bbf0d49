// The contextWindow option, read when the agent is defined; the model turn applies it
// (model/turn-history.ts).

/**
 * How much of the conversation a model turn sends (`defineAgent({ contextWindow })`).
 * Every field is optional; the defaults fit the history to the model's context window.
 * @example
 * defineAgent({ model, summarizer, contextWindow: { keepRecentTurns: 4, maxItems: 500 } });
 */
export interface ContextWindowOptions {
  /**
   * Estimated tokens of history a turn may send. Default: the model's
   * `capabilities.contextWindow` minus the reserved output and the estimated system
   * prompt and tool schemas.
   */
  maxTokens?: number;
  /** Items a turn may send. Default: no item limit. */
  maxItems?: number;
  /** The window assumed when the model's context window is unknown. Default 32,768. */
  fallbackContextWindow?: number;
  /**
   * Tokens kept free for the answer. Default: the request's `maxTokens`, else the model's
   * `maxOutputTokens` up to a quarter of its window, else 4,096.
   */
  reserveOutputTokens?: number;
  /** User turns kept verbatim when the older part is summarized. Default 3. */
  keepRecentTurns?: number;
  /** Length budget handed to the summarizer. Default 512. */
  summaryMaxTokens?: number;
  /**
   * Over budget, summarize the older part with the agent's `summarizer` into a running
   * summary before truncating. Default true (without a summarizer it only truncates).
   */
  summarize?: boolean;
  /** History rows read per page, newest first. Default 64. */
  pageSize?: number;
}

/** The options with their defaults applied; `null` is "derived per turn" or "no limit". */
export interface ContextWindowSettings {
  maxTokens: number | null;
  maxItems: number | null;
  fallbackContextWindow: number;
  reserveOutputTokens: number | null;
  keepRecentTurns: number;
  summaryMaxTokens: number;
  summarize: boolean;
  pageSize: number;
}

export const DEFAULT_CONTEXT_WINDOW = 32_768;
export const DEFAULT_RESERVED_OUTPUT = 4_096;

/** Validates `contextWindow`; a bad value is a definition error naming the field. */
export function resolveContextWindow(options: ContextWindowOptions = {}): ContextWindowSettings {
  const int = (name: keyof ContextWindowOptions, min: number): number | null => {
    const value = options[name];
    if (value === undefined) return null;
    if (typeof value !== "number" || !Number.isInteger(value) || value < min) {
      throw new TypeError(`contextWindow.${name} must be an integer >= ${min}`);
    }
    return value;
  };
  if (options.summarize !== undefined && typeof options.summarize !== "boolean") {
    throw new TypeError("contextWindow.summarize must be a boolean");
  }
  return {
    maxTokens: int("maxTokens", 1),
    maxItems: int("maxItems", 1),
    fallbackContextWindow: int("fallbackContextWindow", 1) ?? DEFAULT_CONTEXT_WINDOW,
    reserveOutputTokens: int("reserveOutputTokens", 0),
    keepRecentTurns: int("keepRecentTurns", 1) ?? 3,
    summaryMaxTokens: int("summaryMaxTokens", 1) ?? 512,
    summarize: options.summarize ?? true,
    pageSize: int("pageSize", 1) ?? 64,
  };
}
