import type { Context, MiddlewareHandler } from "hono";

/**
 * The route table's shapes: every HTTP route a Worker mounts is one `RouteEntry`, its
 * guards declared. Types only, here so that features below the Worker (long-term memory)
 * can declare routes; `src/worker/route-table.ts` checks and mounts them.
 */

/** The HTTP methods a route may take. */
export type RouteMethod = "GET" | "POST" | "PUT" | "PATCH" | "DELETE" | "OPTIONS";

/**
 * What a route needs before its handler runs. Every route the Worker mounts declares all
 * of these; `mountRoutes` applies the ones that are middleware and refuses an entry
 * missing any, so no route is mounted unguarded by omission.
 */
export interface RouteGuards {
  /**
   * `none`: public, answered before authentication; `caller`: the agent's authentication
   * (401 without a valid credential); `caller-or-operator`: the same, or an operator key
   * the route checks itself (refused, never read as a caller, when wrong).
   */
  readonly auth: "none" | "caller" | "caller-or-operator";
  /**
   * Whose data the route reaches: `none` (no stored data), `tenant` (the caller's tenant:
   * another tenant is 403), `owner` (the caller's own within its tenant: another owner's
   * ids are not found).
   */
  readonly scoping: "none" | "tenant" | "owner";
  /**
   * Where a route's requests name a context id, verified by the route table for the caller
   * (see `ContextIdGuard`); `none`: the route takes no context id (a handler that asks for
   * one anyway is refused, as a route mounted without its guard).
   */
  readonly contextIds: "none" | ContextIdGuard;
  /**
   * `path`: counted against the caller's and the path's tenant's limits before the body
   * is read; `body`: the caller's first, the tenant's once the body names it; `none`.
   */
  readonly rateLimit: "none" | "path" | "body";
  /**
   * `json`: a JSON body is required (415 for another media type, 413 past the app's body
   * limit); `optional-json`: the same when a body is sent; `none`: no body is read.
   */
  readonly body: "none" | "json" | "optional-json";
  /**
   * `public`: readable cross-origin by anyone; `agent`: as the agent's `cors` option allows
   * (not at all without it); `none`: never (an app without CORS).
   */
  readonly cors: "public" | "agent" | "none";
  /** Whether the request's server span (OpenTelemetry) covers the route. */
  readonly trace: boolean;
}

/**
 * Where a route's requests name a context id, and what one that is not the caller's gets.
 * `in: "path"` and `in: "query"` are verified before the handler runs; `in: "body"` when
 * the binding reads the field `name` (the body is parsed once, by its handler).
 */
export interface ContextIdGuard {
  readonly in: "path" | "query" | "body";
  /** The path parameter, query parameter or body field (dotted) that names it. */
  readonly name: string;
  /** How refusals name it, when not `name` (`query.contextId`). */
  readonly field?: string;
  /**
   * `write`: refused (400, naming the field); `read`: not found (404); `filter`: it matches
   * nothing (an empty page, never another caller's data).
   */
  readonly use: "write" | "read" | "filter";
}

/** A request handler that answers. */
// biome-ignore lint/suspicious/noExplicitAny: a route's handler takes its app's own context.
export type RouteHandler = (c: Context<any>) => Response | Promise<Response>;

/**
 * One route of the table: its methods and paths (Hono patterns), what it needs, and how
 * its handler is made once, at mount time, from what the app serves (`S`).
 */
export interface RouteEntry<S> {
  /** Unique within an app; names the route in docs and errors. */
  readonly id: string;
  readonly methods: readonly RouteMethod[];
  readonly paths: readonly string[];
  readonly guards: RouteGuards;
  /** One line for the docs. */
  readonly summary: string;
  /**
   * For a route that exists only while a feature is on: answered not found, before any
   * other guard, while it is off.
   */
  readonly gate?: (served: S) => MiddlewareHandler;
  readonly serve: (served: S) => RouteHandler;
}
