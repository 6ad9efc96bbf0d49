import type * as z from "zod";
import {
  type DeclaredEndpoint,
  type Endpoint,
  type EndpointContext,
  type EndpointServer,
  SERVE_ENDPOINT,
} from "../../agent/endpoints";
import { A2AError, invalidParams } from "../../protocol/errors";
import { SSE_HEADERS, SSE_KEEP_ALIVE, sseFrame } from "../../protocol/sse";
import { readJson } from "../body";
import { restErrorBody, toA2AError } from "../errors";

/** Query parameters one request may carry to an endpoint. */
export const MAX_QUERY_PARAMS = 256;

const HTML = "text/html; charset=utf-8";
const METHODS = new Set<string>(["GET", "POST", "PUT", "PATCH", "DELETE"]);
const SOURCES = new Set<string>(["none", "body", "query", "path"]);
const NAME = /^[A-Za-z0-9_.-]{1,64}$/;
/** Path segments of the A2A, chat and inspector routes, unprefixed or after a tenant. */
const RESERVED = new Set([
  ".well-known",
  "message:send",
  "message:stream",
  "tasks",
  "extendedAgentCard",
  "contexts",
  "chat",
  "inspector",
]);

/**
 * Declares an endpoint for `defineAgent({ endpoints })`, with its handler's input
 * typed by its schema (or parser). A bad declaration throws here, when the Worker loads.
 * To type `ctx.env`, annotate the handler's context (`ctx: EndpointContext<Env>`): a type
 * argument given to `endpoint` would stop TypeScript inferring the input.
 *
 * @example
 * ```ts
 * const weather = endpoint({
 *   name: "weather",
 *   method: "GET",
 *   path: "/weather/:city",
 *   source: "path",
 *   input: z.object({ city: z.string().min(2) }),
 *   handler: ({ city }) => ({ city, forecast: "sunny" }),
 * });
 * defineAgent({ card, handler, endpoints: [weather] });
 * ```
 */
export function endpoint<Env = unknown, S extends z.ZodType = z.ZodType<unknown>>(
  spec: Omit<Endpoint<Env, z.output<S>>, "input"> & { input?: S },
): DeclaredEndpoint<Env, z.output<S>>;
export function endpoint<Env = unknown, In = unknown>(
  spec: Endpoint<Env, In> & { input: (raw: unknown) => In | Promise<In> },
): DeclaredEndpoint<Env, In>;
export function endpoint<Env, In>(spec: Endpoint<Env, In>): DeclaredEndpoint<Env, In> {
  check(spec as Endpoint<never>);
  return {
    ...spec,
    [SERVE_ENDPOINT]: (keepAliveMs: number) => server(spec as Endpoint<Env>, keepAliveMs),
  };
}

function check(spec: Endpoint<never>): void {
  const fail = (why: string): never => {
    throw new TypeError(`endpoint${typeof spec?.name === "string" ? ` ${spec.name}` : ""}: ${why}`);
  };
  if (typeof spec !== "object" || spec === null) fail("must be an object");
  if (typeof spec.name !== "string" || !NAME.test(spec.name)) {
    fail("name must be 1-64 letters, digits, '_', '.' or '-'");
  }
  if (!METHODS.has(spec.method)) fail(`method must be one of ${[...METHODS].join(", ")}`);
  if (typeof spec.path !== "string" || !spec.path.startsWith("/") || spec.path.length > 512) {
    fail("path must start with '/' (at most 512 characters)");
  }
  const segments = spec.path.split("/").slice(1);
  if (segments[0] === "" || RESERVED.has(segments[0] ?? "") || RESERVED.has(segments[1] ?? "")) {
    fail(`path ${spec.path} would shadow an A2A route`);
  }
  const source = spec.source ?? "none";
  if (!SOURCES.has(source)) fail(`source must be one of ${[...SOURCES].join(", ")}`);
  if (source === "body" && (spec.method === "GET" || spec.method === "DELETE")) {
    fail(`a ${spec.method} request has no body: use source "query" or "path"`);
  }
  if (source === "path" && !spec.path.includes("/:")) {
    fail('source "path" needs :params in the path');
  }
  if (
    spec.contentType !== undefined &&
    spec.contentType !== "json" &&
    spec.contentType !== "html"
  ) {
    fail('contentType must be "json" or "html"');
  }
  if (spec.mode !== undefined && spec.mode !== "response" && spec.mode !== "stream") {
    fail('mode must be "response" or "stream"');
  }
  if (spec.input !== undefined && typeof spec.input !== "function" && !isSchema(spec.input)) {
    fail("input must be a zod schema or a function");
  }
  if (typeof spec.handler !== "function") fail("handler must be a function");
}

/** A zod schema (checked by shape: a schema from another copy of zod works too). */
function isSchema(value: unknown): value is z.ZodType {
  return (
    typeof value === "object" &&
    value !== null &&
    typeof (value as { safeParseAsync?: unknown }).safeParseAsync === "function"
  );
}

/** Serves one endpoint's requests. */
function server<Env>(spec: Endpoint<Env>, keepAliveMs: number): EndpointServer<Env> {
  return async (c) => {
    const params = c.req.param();
    const input = await parseInput(spec, await rawInput(spec, c.req.raw, params));
    const ctx: EndpointContext<Env> = {
      request: c.req.raw,
      env: c.env,
      params,
      caller: c.get("principal"),
      waitUntil: (promise) => c.executionCtx.waitUntil(promise),
    };
    const result = await spec.handler(input, ctx);
    if (result instanceof Response) return result;
    return spec.mode === "stream" ? streamed(spec, result, keepAliveMs) : answered(spec, result);
  };
}

async function rawInput(
  spec: Endpoint<never>,
  request: Request,
  params: Record<string, string>,
): Promise<unknown> {
  switch (spec.source ?? "none") {
    case "body":
      return readJson(request);
    case "path":
      return { ...params };
    case "query":
      return queryObject(new URL(request.url).searchParams);
    default:
      return undefined;
  }
}

/** The query string as an object: a name given once is a string, repeated an array. */
function queryObject(search: URLSearchParams): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  let count = 0;
  for (const [name, value] of search) {
    if (++count > MAX_QUERY_PARAMS) {
      throw new A2AError("InvalidParams", `At most ${MAX_QUERY_PARAMS} query parameters`, {}, [
        { field: "query", description: `more than ${MAX_QUERY_PARAMS} parameters` },
      ]);
    }
    const seen = Object.hasOwn(out, name) ? out[name] : undefined;
    // Defined as own data properties: a `__proto__` parameter is a name like any other.
    Object.defineProperty(out, name, {
      value: seen === undefined ? value : Array.isArray(seen) ? [...seen, value] : [seen, value],
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return out;
}

async function parseInput(spec: Endpoint<never>, raw: unknown): Promise<unknown> {
  const source = spec.source ?? "none";
  if (spec.input === undefined) return raw;
  if (isSchema(spec.input)) {
    const parsed = await spec.input.safeParseAsync(raw);
    if (!parsed.success) throw invalidParams(parsed.error.issues, source);
    return parsed.data;
  }
  try {
    return await spec.input(raw);
  } catch (error) {
    if (error instanceof A2AError) throw error;
    const why = error instanceof Error ? error.message : String(error);
    throw new A2AError("InvalidParams", `Invalid ${source}: ${why}`, {}, [
      { field: source, description: why },
    ]);
  }
}

function answered(spec: Endpoint<never>, result: unknown): Response {
  if (result === undefined) return new Response(null, { status: 204 });
  if (spec.contentType === "html") {
    return new Response(htmlText(spec, result), { headers: { "Content-Type": HTML } });
  }
  return Response.json(result);
}

function htmlText(spec: Endpoint<never>, value: unknown): string {
  if (typeof value !== "string") {
    throw new TypeError(`endpoint ${spec.name}: an html endpoint answers strings`);
  }
  return value;
}

/**
 * The handler's iterable as it yields, pulled only when the client reads (backpressure):
 * SSE `data:` frames for JSON, with a keep-alive comment while the handler is quiet, or
 * raw HTML chunks. A failure after the first byte cannot change the status any more: for
 * JSON it ends the stream with an `error` event in the A2A error shape.
 */
function streamed(spec: Endpoint<never>, result: unknown, keepAliveMs: number): Response {
  const iterator = iteratorOf(spec, result);
  const html = spec.contentType === "html";
  const encoder = new TextEncoder();
  let pending: Promise<IteratorResult<unknown>> | null = null;
  const stream = new ReadableStream<Uint8Array>({
    async pull(controller) {
      let timer: ReturnType<typeof setTimeout> | undefined;
      try {
        // One step at a time: a step still running when the keep-alive fired is awaited
        // by the next pull, never asked for twice.
        pending ??= Promise.resolve(iterator.next());
        const step = html
          ? await pending
          : await Promise.race([
              pending,
              new Promise<"quiet">((resolve) => {
                timer = setTimeout(() => resolve("quiet"), keepAliveMs);
              }),
            ]);
        if (step === "quiet") {
          controller.enqueue(encoder.encode(SSE_KEEP_ALIVE));
          return;
        }
        pending = null;
        if (step.done) {
          controller.close();
          return;
        }
        const chunk = html ? htmlText(spec, step.value) : sseFrame(step.value);
        controller.enqueue(encoder.encode(chunk));
      } catch (error) {
        pending = null;
        if (html) throw error;
        const failure = restErrorBody(toA2AError(error));
        controller.enqueue(encoder.encode(sseFrame(failure, undefined, "error")));
        controller.close();
      } finally {
        if (timer !== undefined) clearTimeout(timer);
      }
    },
    async cancel() {
      await iterator.return?.();
    },
  });
  return new Response(stream, { headers: html ? { "Content-Type": HTML } : SSE_HEADERS });
}

function iteratorOf(
  spec: Endpoint<never>,
  result: unknown,
): AsyncIterator<unknown> | Iterator<unknown> {
  const value = result as Partial<AsyncIterable<unknown> & Iterable<unknown>> | null;
  const make: unknown = value?.[Symbol.asyncIterator] ?? value?.[Symbol.iterator];
  if (typeof result === "string" || typeof make !== "function") {
    throw new TypeError(`endpoint ${spec.name}: a stream endpoint returns an (async) iterable`);
  }
  return (make as (this: unknown) => AsyncIterator<unknown> | Iterator<unknown>).call(value);
}
