import type { JsonObject } from "../../protocol/json";
import { defaultRetryable, ProviderError } from "../base/errors";
import { DEFAULT_STALL_MS, isObject } from "../base/http";
import { capabilitiesFor } from "../base/pricing";
import { decodeBody } from "../base/sse";
import type {
  CallOptions,
  Model,
  ModelCapabilities,
  ModelRequest,
  StreamEvent,
} from "../base/types";
import { toChatCompletionsBody } from "../openai/openai-chat-body";
import { WorkersAiDecoder } from "./workers-ai-decoder";

/**
 * What an adapter needs of the Workers AI binding (`env.AI`): `run`, and the id of the
 * last request when the runtime exposes it.
 */
export interface AiBinding {
  run(model: string, inputs: JsonObject, options?: JsonObject): Promise<unknown>;
  lastRequestId?: string | null;
}

export interface WorkersAIOptions {
  /** A Workers AI model id, e.g. `@cf/meta/llama-3.3-70b-instruct-fp8-fast`. */
  model: string;
  /** The name of the AI binding in the Worker's env. Default `AI`. */
  binding?: string;
  /** AI Gateway options, passed to `run` as `{ gateway }`. */
  gateway?: JsonObject;
  /**
   * What the model can do and costs. By default `structuredOutput` is false (JSON mode does
   * not stream, so schemas go into the instructions) and prices are unknown.
   */
  capabilities?: Partial<ModelCapabilities>;
  /** No answer or no bytes for this long fails the call with a timeout. Default 60 s. */
  stallMs?: number;
}

/**
 * Cloudflare Workers AI through the Worker's AI binding, streamed. The binding comes from
 * the call's env (`CallOptions.env`), so one model definition serves every request.
 * Tool choice can be `auto` or `none` only: forcing a tool is refused before any call
 * (Workers AI answers it with error 8001).
 * @example
 * const model = workersAI({ model: "@cf/meta/llama-3.3-70b-instruct-fp8-fast" });
 * const response = await generate(model, { messages: [{ role: "user", content: "Hi" }] }, { env });
 */
export function workersAI(options: WorkersAIOptions): Model {
  const provider = "workers-ai";
  const { model } = options;
  const bindingName = options.binding ?? "AI";
  const stallMs = options.stallMs ?? DEFAULT_STALL_MS;
  const capabilities = capabilitiesFor(model, { structuredOutput: false, ...options.capabilities });
  return {
    provider,
    model,
    capabilities,
    async *streamBatches(
      request: ModelRequest,
      call: CallOptions = {},
    ): AsyncGenerator<StreamEvent[]> {
      const inputs = workersAiInputs(request, model, capabilities);
      const binding = bindingOf(call.env, bindingName, provider);
      const runOptions = options.gateway ? { gateway: options.gateway } : undefined;
      let result: unknown;
      try {
        result = await within(
          () => binding.run(model, inputs, runOptions),
          provider,
          call.signal,
          stallMs,
        );
      } catch (error) {
        throw workersAiError(provider, error, { requestId: lastRequestId(binding) });
      }
      const requestId = lastRequestId(binding);
      const decoder = new WorkersAiDecoder(
        { provider, model, capabilities, requestId },
        (payload) => workersAiError(provider, payload, { inStream: true, requestId }),
      );
      const body = result instanceof Response ? result.body : result;
      if (body instanceof ReadableStream) {
        yield* decodeBody(body as ReadableStream<Uint8Array>, decoder, {
          provider,
          signal: call.signal,
          stallMs,
          raw: call.raw,
        });
        return;
      }
      // A model that does not stream answers with its whole result at once.
      const out: StreamEvent[] = [];
      decoder.chunk(body, out);
      decoder.done(out);
      if (call.raw) for (const event of out) event.raw = body;
      yield out;
    },
  };
}

/**
 * The inputs of `env.AI.run` for a request: Chat Completions messages and tools
 * in the `workers-ai` flavor. Forcing a tool (`required`, or one by name) is a
 * `config` error; `none` sends no tools; `auto` is the default and is not sent.
 * @example
 * workersAiInputs(request, "@cf/meta/llama-3.3-70b-instruct-fp8-fast", capabilities);
 * // { messages: [...], tools: [...], stream: true, max_tokens: 256 }
 */
export function workersAiInputs(
  request: ModelRequest,
  model: string,
  capabilities: ModelCapabilities,
): JsonObject {
  const provider = "workers-ai";
  const choice = request.toolChoice;
  if (request.tools.length > 0 && choice !== undefined && choice !== "auto" && choice !== "none") {
    throw new ProviderError({
      provider,
      kind: "config",
      message: `Workers AI cannot force a tool call (tool choice ${JSON.stringify(choice)}; it answers error 8001): use "auto" or another provider`,
    });
  }
  const effective: ModelRequest = {
    ...request,
    tools: choice === "none" ? [] : request.tools,
    toolChoice: undefined,
  };
  const inputs = toChatCompletionsBody(effective, model, "workers-ai", { provider, capabilities });
  const format = inputs.response_format;
  // Workers AI wants the schema itself under `json_schema`, not OpenAI's `{name, schema}`.
  if (isObject(format) && isObject(format.json_schema)) {
    inputs.response_format = { type: "json_schema", json_schema: format.json_schema.schema ?? {} };
  }
  return inputs;
}

function bindingOf(env: object | undefined, name: string, provider: string): AiBinding {
  const value = (env as Record<string, unknown> | undefined)?.[name];
  if (isObject(value) && typeof value.run === "function") return value as unknown as AiBinding;
  throw new ProviderError({
    provider,
    kind: "config",
    message: `no Workers AI binding "${name}" in env: add [ai] binding = "${name}" to wrangler.toml, and pass env in the call options`,
  });
}

function lastRequestId(binding: AiBinding): string | null {
  const id = binding.lastRequestId;
  return typeof id === "string" && id !== "" ? id : null;
}

/**
 * Calls `start` unless already canceled, and waits for it within the stall time and the
 * caller's signal; a stream that arrives after we gave up is canceled.
 */
async function within<T>(
  start: () => Promise<T>,
  provider: string,
  signal: AbortSignal | undefined,
  stallMs: number,
): Promise<T> {
  if (signal?.aborted) {
    throw new ProviderError({
      provider,
      kind: "aborted",
      message: "the call was canceled",
      cause: signal.reason,
    });
  }
  const run = start();
  let timer: ReturnType<typeof setTimeout> | undefined;
  let onAbort: (() => void) | undefined;
  let abandoned = false;
  const guard = new Promise<never>((_, reject) => {
    if (stallMs > 0) {
      timer = setTimeout(
        () =>
          reject(
            new ProviderError({
              provider,
              kind: "timeout",
              message: `no answer from the AI binding within ${stallMs} ms`,
            }),
          ),
        stallMs,
      );
    }
    if (signal) {
      onAbort = () =>
        reject(
          new ProviderError({
            provider,
            kind: "aborted",
            message: "the call was canceled",
            cause: signal.reason,
          }),
        );
      signal.addEventListener("abort", onAbort, { once: true });
    }
  });
  try {
    return await Promise.race([run, guard]);
  } catch (error) {
    abandoned = true;
    throw error;
  } finally {
    if (timer !== undefined) clearTimeout(timer);
    if (onAbort) signal?.removeEventListener("abort", onAbort);
    if (abandoned) {
      run.then(
        (late) => {
          if (late instanceof ReadableStream) late.cancel().catch(() => {});
        },
        () => {},
      );
    }
  }
}

/** Workers AI internal codes → HTTP status (developers.cloudflare.com/workers-ai/platform/errors). */
const STATUS_OF_CODE: Record<number, number> = {
  3003: 400,
  3039: 400,
  5004: 400,
  5006: 400,
  5007: 400,
  8001: 400,
  3023: 403,
  3041: 403,
  5016: 403,
  5018: 403,
  3042: 404,
  5005: 405,
  5019: 405,
  3007: 408,
  3008: 408,
  3006: 413,
  3036: 429,
  3040: 429,
  4006: 429,
  3043: 500,
};

/** The daily free allocation is used up: a 429 that no retry within the day cures. */
const EXHAUSTED = new Set([3036, 4006]);

const TRANSIENT = /capacity|overload|internal server|temporar|try again/i;

/**
 * A `ProviderError` from a Workers AI failure: a thrown binding error (`"3040: Capacity
 * temporarily exceeded"`, an `AiError`), a REST error envelope `{errors:[{message,code}]}`,
 * or an error sent inside the stream. With a code or status it is an `http` error (inside
 * the stream, a `stream` error); without, a `network` error. Invalid input (5006, 8001)
 * and other 4xx are final; capacity and server errors are retryable.
 * @example
 * workersAiError("workers-ai", new Error("3040: Capacity temporarily exceeded, please try again."));
 * // kind "http", status 429, code "3040", retryable true
 */
export function workersAiError(
  provider: string,
  source: unknown,
  options: { inStream?: boolean; requestId?: string | null } = {},
): ProviderError {
  if (source instanceof ProviderError) return source;
  const { message, code, status } = describe(source);
  const numeric = code === null ? Number.NaN : Number(code);
  const kind = options.inStream ? "stream" : code !== null || status !== null ? "http" : "network";
  let retryable: boolean;
  if (EXHAUSTED.has(numeric)) retryable = false;
  else if (kind === "network") retryable = true;
  else retryable = (status !== null && defaultRetryable("http", status)) || TRANSIENT.test(message);
  return new ProviderError({
    provider,
    kind,
    message: `${provider}: ${message}`,
    status,
    code,
    requestId: options.requestId ?? null,
    retryable,
    cause: source,
  });
}

interface Described {
  message: string;
  code: string | null;
  status: number | null;
}

function describe(source: unknown): Described {
  if (isObject(source) && !(source instanceof Error)) {
    if (Array.isArray(source.errors) && source.errors.length > 0) return describe(source.errors[0]);
    if (source.error != null) return describe(source.error);
  }
  const fields: Record<string, unknown> = isObject(source) ? source : {};
  let message: string;
  if (source instanceof Error) message = source.message;
  else if (typeof source === "string") message = source;
  else message = typeof fields.message === "string" ? fields.message : JSON.stringify(source);
  // The binding throws `"<internal code>: <description>"`, sometimes behind `AiError: ` prefixes.
  const prefixed = /^(?:\s*\w*Error:)*\s*(\d{4})\s*:/.exec(message);
  const rawCode = fields.code ?? prefixed?.[1];
  const code =
    typeof rawCode === "number" || (typeof rawCode === "string" && rawCode !== "")
      ? String(rawCode)
      : null;
  const status =
    typeof fields.status === "number"
      ? fields.status
      : code === null
        ? null
        : (STATUS_OF_CODE[Number(code)] ?? null);
  return { message, code, status };
}
