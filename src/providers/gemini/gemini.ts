import { ProviderError } from "../base/errors";
import {
  DEFAULT_STALL_MS,
  endpointProblems,
  envString,
  type HttpProviderOptions,
  joinUrl,
  postJson,
  requestIdOf,
  requireKey,
} from "../base/http";
import { jsonArrayFramer } from "../base/json-array-framer";
import { capabilitiesFor } from "../base/pricing";
import { decodeOpened, type OpenedBody } from "../base/sse";
import type {
  CallOptions,
  Model,
  ModelCapabilities,
  ModelRequest,
  StreamEvent,
} from "../base/types";
import { GeminiDecoder } from "./gemini-decoder";
import { type GeminiSchemaMode, geminiRequestBody } from "./gemini-request";

export { decodeGenerateContent, GeminiDecoder, stopReasonOf, usageOf } from "./gemini-decoder";
export { type GeminiSchemaMode, geminiRequestBody } from "./gemini-request";

export const GEMINI_BASE_URL = "https://generativelanguage.googleapis.com";

/**
 * How the answer travels:
 * - `sse` (default): `streamGenerateContent?alt=sse`, server-sent events.
 * - `json-array`: `streamGenerateContent` without `alt=sse`; the body is one JSON array
 *   whose elements arrive as they are generated (some proxies only pass this one).
 * - `none`: `generateContent`, one JSON answer, decoded into the same events at the end.
 */
export type GeminiTransport = "sse" | "json-array" | "none";

export interface GeminiOptions extends HttpProviderOptions {
  transport?: GeminiTransport;
  /** Schema fields for tools and structured output; see `GeminiSchemaMode`. */
  schemaMode?: GeminiSchemaMode;
  /** Overrides what `capabilitiesFor` knows of the model (prices, limits). */
  capabilities?: Partial<ModelCapabilities>;
}

/**
 * A Google Gemini model (Gemini Developer API). The key is `apiKey`, or the
 * `GEMINI_API_KEY` (else `GOOGLE_API_KEY`) secret; the base URL is `baseUrl`, or
 * `GEMINI_BASE_URL`, or Google's endpoint (point it at an AI Gateway to route through one).
 * @example
 * const model = gemini({ model: "gemini-2.5-flash" });
 * const response = await generate(model, {
 *   messages: [{ role: "user", content: "Capital of France?" }],
 * }, { env });
 * response.text; // "The capital of France is Paris."
 */
export function gemini(options: GeminiOptions): Model {
  const provider = "gemini";
  const model = options.model;
  const transport = options.transport ?? "sse";
  const stallMs = options.stallMs ?? DEFAULT_STALL_MS;
  const capabilities = capabilitiesFor(model, options.capabilities);
  return {
    provider,
    model,
    capabilities,
    configProblems: (env) =>
      endpointProblems(
        {
          provider,
          model,
          explicitKey: options.apiKey ?? envString(env, "GOOGLE_API_KEY"),
          keyVariable: "GEMINI_API_KEY",
          baseUrl: options.baseUrl ?? envString(env, "GEMINI_BASE_URL") ?? GEMINI_BASE_URL,
          versioned: false,
        },
        env,
      ),
    streamBatches(request: ModelRequest, call: CallOptions = {}): AsyncGenerator<StreamEvent[]> {
      // Sent by the first read, as a generator's body would be: nothing before iterating.
      const open = async (): Promise<OpenedBody> => {
        const apiKey = requireKey(
          provider,
          options.apiKey ??
            envString(call.env, "GEMINI_API_KEY") ??
            envString(call.env, "GOOGLE_API_KEY"),
          call.env,
          "GEMINI_API_KEY",
        );
        const base = options.baseUrl ?? envString(call.env, "GEMINI_BASE_URL") ?? GEMINI_BASE_URL;
        const response = await postJson({
          provider,
          url: joinUrl(base, endpointPath(model, transport)),
          headers: { "x-goog-api-key": apiKey, ...options.headers },
          body: geminiRequestBody(request, options.schemaMode),
          options: call,
          stallMs,
        });
        if (!response.body) {
          throw new ProviderError({
            provider,
            kind: "stream",
            message: "the response has no body",
          });
        }
        const decoder = new GeminiDecoder({
          provider,
          model,
          capabilities,
          requestId: requestIdOf(response.headers),
        });
        return { body: response.body, decoder };
      };
      return decodeOpened(open, {
        provider,
        signal: call.signal,
        stallMs,
        raw: call.raw,
        ...(transport === "sse" ? {} : { framer: jsonArrayFramer }),
      });
    },
  };
}

/**
 * `v1beta/models/{model}:{method}`; a model given as a resource name (`models/x`,
 * `tunedModels/y`) is used as it is.
 */
function endpointPath(model: string, transport: GeminiTransport): string {
  const resource = model.includes("/") ? model : `models/${model}`;
  if (transport === "none") return `v1beta/${resource}:generateContent`;
  return `v1beta/${resource}:streamGenerateContent${transport === "sse" ? "?alt=sse" : ""}`;
}
