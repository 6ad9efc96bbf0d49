import type * as z from "zod";
import type { Principal } from "./access/auth";

/** The methods an endpoint may answer. */
export type EndpointMethod = "GET" | "POST" | "PUT" | "PATCH" | "DELETE";

/**
 * Where an endpoint's input comes from: nothing, the JSON body, the query string (one
 * value per name as a string, a repeated name as an array of strings) or the path's
 * `:params`.
 */
export type EndpointSource = "none" | "body" | "query" | "path";

/** What an endpoint's handler gets besides its input. */
export interface EndpointContext<Env = unknown> {
  request: Request;
  env: Env;
  /** The path's `:params`, decoded. */
  params: Record<string, string>;
  /** Who called: the principal the agent's `auth` accepted (anonymous without auth). */
  caller: Principal;
  /** Keeps the Worker alive for work after the response (the platform's `waitUntil`). */
  waitUntil(promise: Promise<unknown>): void;
}

/**
 * A route of your own served beside the A2A endpoints, behind the same authentication,
 * CORS and body limit. Declare it with `endpoint()` so the handler's input is typed
 * by its `input` schema.
 */
export interface Endpoint<Env = unknown, In = unknown> {
  /** Unique among the agent's endpoints; names the endpoint in errors. */
  name: string;
  method: EndpointMethod;
  /** A Hono path, `/weather/:city` say; it may not shadow an A2A route. */
  path: string;
  /** Where the input comes from. Default "none". */
  source?: EndpointSource;
  /**
   * Parses the input: a zod schema (a client's bad input is a 400 naming each bad field)
   * or a function (what it throws is a 400 with its message). Without one the handler
   * gets the raw input.
   */
  input?: z.ZodType<In> | ((raw: unknown) => In | Promise<In>);
  /** "json" (the default) or "html": what the answer, or each streamed chunk, is. */
  contentType?: "json" | "html";
  /**
   * "response" (the default): the handler returns the answer. "stream": it returns an
   * (async) iterable, sent as it yields: Server-Sent Events of JSON for "json", chunked
   * HTML text for "html". The client's pace drives the iteration; a client that leaves
   * ends it (the iterator's `return` runs).
   */
  mode?: "response" | "stream";
  /**
   * Answers the request. A `Response` is sent as it is (an error status of your choosing,
   * say); `undefined` is 204 in response mode. What it throws is a 500 that names only a
   * log reference.
   */
  handler(input: In, ctx: EndpointContext<Env>): unknown;
}

/**
 * How an endpoint declared with `endpoint()` is served; the serving code lives with
 * `endpoint()` in the server layer, so a Worker without endpoints does not bundle it.
 */
export const SERVE_ENDPOINT: unique symbol = Symbol("edgelink.endpoint");

/** An endpoint as `endpoint()` returns it: checked, and ready to be served. */
export interface DeclaredEndpoint<Env = unknown, In = unknown> extends Endpoint<Env, In> {
  readonly [SERVE_ENDPOINT]: (keepAliveMs: number) => EndpointServer<Env>;
}

/** Serves one request to an endpoint (the Hono context it gets, loosely typed here). */
export type EndpointServer<Env> = (c: {
  req: { raw: Request; param(): Record<string, string> };
  env: Env;
  get(key: "principal"): Principal;
  executionCtx: { waitUntil(promise: Promise<unknown>): void };
}) => Promise<Response>;

/** Checks `endpoints` at definition: each from `endpoint()`, names and routes unique. */
export function checkEndpoints<Env>(
  list: readonly DeclaredEndpoint<Env>[] | undefined,
): DeclaredEndpoint<Env>[] {
  if (list === undefined) return [];
  if (!Array.isArray(list)) throw new TypeError("endpoints must be an array");
  const seen = new Set<string>();
  for (const [i, spec] of list.entries()) {
    if (typeof spec?.[SERVE_ENDPOINT] !== "function") {
      throw new TypeError(`endpoints[${i}]: declare it with endpoint()`);
    }
    for (const key of [`name ${spec.name}`, `route ${spec.method} ${spec.path}`]) {
      if (seen.has(key)) throw new TypeError(`endpoints[${i}]: the ${key} is declared twice`);
      seen.add(key);
    }
  }
  return [...list];
}
