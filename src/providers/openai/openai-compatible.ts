import { DEFAULT_STALL_MS, endpointProblems, joinUrl, requireKey } from "../base/http";
import { capabilitiesFor } from "../base/pricing";
import type { Model, ModelCapabilities } from "../base/types";
import { chatCompletionsModel } from "./openai-chat";

export interface OpenAICompatibleOptions {
  /** The provider's name in events and errors, e.g. `groq`, `ollama`. */
  name: string;
  /** The API root that `/chat/completions` hangs off, e.g. `https://api.groq.com/openai/v1`. */
  baseUrl: string;
  model: string;
  /** The API key. Local servers (Ollama, vLLM) often need none. */
  apiKey?: string;
  /** The env secret holding the key, e.g. `GROQ_API_KEY`; a missing secret is a `config` error. */
  apiKeyEnv?: string;
  /** Extra headers on every request (OpenRouter's `HTTP-Referer` / `X-Title`, ...). */
  headers?: Record<string, string>;
  /** What the model can do and costs; unknown models have unknown prices. */
  capabilities?: Partial<ModelCapabilities>;
  /** No bytes for this long fails the call with a timeout. Default 60 s. */
  stallMs?: number;
}

/**
 * Any server that speaks OpenAI Chat Completions: vLLM, Ollama (`/v1`), Groq, OpenRouter,
 * DeepSeek, LM Studio, llama.cpp, Together, Fireworks... The same body and decoder as
 * `openai`, in the `compatible` flavor: instructions are always `system`, the limit is
 * `max_tokens`, `metadata` is not sent. The decoder copes with each server's quirks
 * (comments, whole tool calls, tool indexes from 1, `reasoning_content`, errors inside the
 * stream, no `[DONE]` after a finish reason).
 * @example
 * const groq = openaiCompatible({
 *   name: "groq",
 *   baseUrl: "https://api.groq.com/openai/v1",
 *   model: "llama-3.3-70b-versatile",
 *   apiKeyEnv: "GROQ_API_KEY",
 * });
 * const local = openaiCompatible({ name: "ollama", baseUrl: "http://localhost:11434/v1", model: "qwen3" });
 */
export function openaiCompatible(options: OpenAICompatibleOptions): Model {
  const { name, apiKeyEnv } = options;
  return chatCompletionsModel({
    provider: name,
    model: options.model,
    flavor: "compatible",
    capabilities: capabilitiesFor(options.model, options.capabilities),
    stallMs: options.stallMs ?? DEFAULT_STALL_MS,
    url: () => joinUrl(options.baseUrl, "chat/completions"),
    configProblems: (env) =>
      endpointProblems(
        {
          provider: name,
          model: options.model,
          explicitKey: options.apiKey,
          keyVariable: apiKeyEnv,
          baseUrl: options.baseUrl,
          // Compatible APIs put their version anywhere, or nowhere (DeepSeek's base has none).
          versioned: false,
        },
        env,
      ),
    headers: (call) => {
      const key =
        options.apiKey ??
        (apiKeyEnv === undefined ? undefined : requireKey(name, undefined, call.env, apiKeyEnv));
      return {
        ...(key === undefined ? {} : { authorization: `Bearer ${key}` }),
        ...options.headers,
      };
    },
  });
}
