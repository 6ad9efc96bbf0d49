import type { Context, Env, Hono, MiddlewareHandler } from "hono";
import { bodyLimit } from "hono/body-limit";
import { basePath, matchedRoutes } from "hono/route";
import { TrieRouter } from "hono/router/trie-router";
import type { RouteEntry, RouteGuards, RouteHandler, RouteMethod } from "../agent/routes";
import type { A2AError } from "../protocol/errors";
import { refusal } from "./auth";
import { jsonMediaProblem } from "./body";
import { type ContextVerifier, scopeGuard } from "./route-scope";

export type {
  ContextIdGuard,
  RouteEntry,
  RouteGuards,
  RouteHandler,
  RouteMethod,
} from "../agent/routes";

/** The guards' middleware an app supplies; its routes pick theirs by declaration. */
export interface RouteKit {
  /** Authentication, the first step of every route that is not public. */
  readonly auth: MiddlewareHandler;
  /** The rate limit guard for a declaration; null when the app has no rate limits. */
  readonly rateLimit: (from: "path" | "body") => MiddlewareHandler | null;
  /** The body limit of every route that reads a body. */
  readonly maxBodyBytes: number;
  /** The error a body past the limit gets. */
  readonly tooLarge: () => A2AError;
  /** How the app verifies the context ids its routes declare; null when none may. */
  readonly contextIds: ContextVerifier | null;
}

const CHOICES: { readonly [K in keyof RouteGuards]: readonly unknown[] } = {
  auth: ["none", "caller", "caller-or-operator"],
  scoping: ["none", "tenant", "owner"],
  contextIds: ["none"],
  rateLimit: ["none", "path", "body"],
  body: ["none", "json", "optional-json"],
  cors: ["public", "agent", "none"],
  trace: [true, false],
};
const METHODS = new Set<string>(["GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]);
const WHERE = new Set<string>(["path", "query", "body"]);
const USES = new Set<string>(["write", "read", "filter"]);

/** A context-id declaration's problem, or null when it is one (see `ContextIdGuard`). */
function contextIdProblem(value: unknown): string | null {
  if (value === "none") return null;
  const guard = value as Record<string, unknown> | null;
  if (typeof guard !== "object" || guard === null) return "must be declared";
  if (!WHERE.has(guard.in as string)) return "in must be path, query or body";
  if (typeof guard.name !== "string" || guard.name === "") return "name must name the id";
  if (!USES.has(guard.use as string)) return "use must be write, read or filter";
  return null;
}

/**
 * Throws a TypeError naming the route and the guard when an entry does not declare every
 * guard with a known value (the type check says so first; this holds for JavaScript and
 * for entries built at run time, such as declared endpoints).
 */
export function checkRoute(entry: RouteEntry<never>): void {
  const name = `route ${JSON.stringify(entry?.id)}`;
  if (typeof entry?.id !== "string" || entry.id === "") {
    throw new TypeError(`${name}: needs an id`);
  }
  if (!Array.isArray(entry.methods) || entry.methods.length === 0) {
    throw new TypeError(`${name}: needs methods`);
  }
  for (const m of entry.methods) {
    if (!METHODS.has(m)) throw new TypeError(`${name}: unknown method ${String(m)}`);
  }
  if (!Array.isArray(entry.paths) || entry.paths.length === 0) {
    throw new TypeError(`${name}: needs paths`);
  }
  if (typeof entry.serve !== "function") throw new TypeError(`${name}: needs serve`);
  const guards = entry.guards as Partial<RouteGuards> | undefined;
  for (const [key, allowed] of Object.entries(CHOICES)) {
    const value = guards?.[key as keyof RouteGuards];
    if (key === "contextIds") {
      const problem = contextIdProblem(value);
      if (problem) {
        throw new TypeError(`${name}: guards.contextIds ${problem} ("none", or { in, name, use })`);
      }
      continue;
    }
    if (!allowed.includes(value)) {
      throw new TypeError(
        `${name}: guards.${key} must be declared (${allowed.map((v) => JSON.stringify(v)).join(", ")})`,
      );
    }
  }
  if (entry.guards.body !== "none" && entry.methods.every((m) => m === "GET")) {
    throw new TypeError(`${name}: a GET request has no body`);
  }
  const ids = entry.guards.contextIds;
  if (ids !== "none" && entry.guards.scoping === "none") {
    throw new TypeError(`${name}: context ids are verified for a caller's scope (guards.scoping)`);
  }
  if (
    ids !== "none" &&
    ids.in === "path" &&
    !entry.paths.every((p) => p.includes(`:${ids.name}`))
  ) {
    throw new TypeError(`${name}: guards.contextIds names :${ids.name}, which a path lacks`);
  }
  if (ids !== "none" && ids.in === "body" && entry.guards.body === "none") {
    throw new TypeError(`${name}: guards.contextIds is in a body the route does not read`);
  }
}

/** The table entry a matched handler belongs to (Hono wraps a mounted app's handlers). */
const entries = new WeakMap<object, RouteEntry<never>>();

/**
 * The route of the table a request is about to be served by (its first matched handler
 * that is a route's), and the path pattern it matched; null when none matched.
 */
export function routeOf(c: Context): { entry: RouteEntry<never>; pattern: string } | null {
  for (const route of matchedRoutes(c)) {
    const handler = route.handler as unknown as Record<string, unknown>;
    const entry = entries.get(handler) ?? entries.get(handler.__COMPOSED_HANDLER as object);
    if (entry) return { entry, pattern: route.path };
  }
  return null;
}

/** Whether the request carries a body (an empty one counts as none). */
function sendsBody(request: Request): boolean {
  return request.body !== null && request.headers.get("Content-Length") !== "0";
}

/**
 * The body guard of a declaration: the media type (before a byte is read), then Hono's
 * body limit, in one middleware so a body route has no more steps than before. A body
 * past the limit is refused for its size first (413), whatever its media type says.
 */
function bodyGuard(kind: "json" | "optional-json", kit: RouteKit): MiddlewareHandler {
  const limit = bodyLimit({
    maxSize: kit.maxBodyBytes,
    onError: (c) => refusal(c.req.raw, kit.tooLarge(), {}, basePath(c)),
  });
  const refuse = (c: Context, problem: A2AError) =>
    limit(c, () => Promise.resolve(refusal(c.req.raw, problem, {}, basePath(c))) as never);
  if (kind === "json") {
    return (c, next) => {
      const problem = jsonMediaProblem(c.req.raw);
      return problem ? refuse(c, problem) : limit(c, next);
    };
  }
  // A declared media type is checked even without a body: an HTML form always declares
  // one, so a cross-site form with no fields cannot reach the route either.
  return (c, next) => {
    const request = c.req.raw;
    const declared = sendsBody(request) || request.headers.has("Content-Type");
    const problem = declared ? jsonMediaProblem(request) : null;
    return problem ? refuse(c, problem) : limit(c, next);
  };
}

/**
 * Mounts the table on `app`: its batches in order, each batch in rounds (every entry's
 * first path, then every second path: a batch's unprefixed routes win over its
 * `/{tenant}` ones), each route as one layer of the guards it declares and its handler.
 * Public routes come first: one after an authenticated route is refused here, so the
 * table reads in the order its routes are matched. Call it once per app with the whole
 * table: an app mounts nothing else.
 */
export function mountRoutes<S, E extends Env>(
  app: Hono<E>,
  batches: readonly (readonly RouteEntry<S>[])[],
  served: S,
  kit: RouteKit,
): void {
  const ids = new Set<string>();
  for (const entry of batches.flat()) {
    checkRoute(entry as RouteEntry<never>);
    if (ids.has(entry.id)) throw new TypeError(`route ${JSON.stringify(entry.id)}: id is taken`);
    ids.add(entry.id);
  }
  // Gates first: a feature that is off answers not found before any credential is asked.
  for (const entry of batches.flat()) {
    if (!entry.gate) continue;
    const gate = entry.gate(served);
    for (const path of entry.paths) app.use(path, gate);
  }
  let authed = false;
  for (const batch of batches) {
    const mounts = batch.map((entry) => ({ entry, layer: layerOf(entry, served, kit) }));
    const rounds = Math.max(0, ...batch.map((e) => e.paths.length));
    for (let round = 0; round < rounds; round++) {
      for (const { entry, layer } of mounts) {
        const path = entry.paths[round];
        if (path === undefined) continue;
        if (entry.guards.auth === "none") {
          if (authed) {
            throw new TypeError(
              `route ${JSON.stringify(entry.id)}: public routes must come before authenticated ones`,
            );
          }
        } else authed = true;
        // A route taking every method takes any method (PROPFIND is answered too).
        if (entry.methods.length === ALL_METHODS.length) app.all(path, layer as never);
        else app.on([...entry.methods], path, layer);
        entries.set(layer, entry as RouteEntry<never>);
      }
    }
  }
}

/**
 * A route's guards by its declaration (authentication first, unless public), then its
 * handler, as one Hono handler built once at mount. Each step gets the next as `next`
 * and returns what it returns (every guard here does), so a request that passes its
 * guards takes no promise of theirs and one Hono layer instead of one per guard.
 */
function layerOf<S>(entry: RouteEntry<S>, served: S, kit: RouteKit): MiddlewareHandler {
  const steps: MiddlewareHandler[] = [];
  if (entry.guards.auth !== "none") steps.push(kit.auth);
  if (entry.guards.rateLimit !== "none") {
    const limit = kit.rateLimit(entry.guards.rateLimit);
    if (limit) steps.push(limit);
  }
  if (entry.guards.body !== "none") steps.push(bodyGuard(entry.guards.body, kit));
  const scope = scopeGuard(entry, kit.contextIds);
  if (scope) steps.push(scope);
  steps.push(entry.serve(served) as MiddlewareHandler);
  return oneLayer(steps);
}

/**
 * `steps` run in order as one handler: each one's `next` is the step after it. Whatever
 * a step answers is the context's response as soon as it is made, as in Hono's own chain,
 * so a step that awaits `next()` without returning it (any Hono middleware may) still
 * finds the response in `c.res`. A step that returns `next()` as it is (every guard of
 * Edgelink's) passes the handler's promise on untouched: no promise of its own.
 */
export function oneLayer(steps: readonly MiddlewareHandler[]): MiddlewareHandler {
  if (steps.length === 1) return steps[0] as MiddlewareHandler;
  type Answer = Response | undefined | Promise<Response | undefined>;
  /** A step, typed as Edgelink's steps answer: a response, nothing, or a promise of either. */
  const run = steps as readonly ((c: Context, next: () => Promise<void>) => Answer)[];
  const layer = (c: Context, next: () => Promise<void>) => {
    const answered = (res: Response | undefined) => {
      if (res instanceof Response && !c.finalized) c.res = res;
      return res;
    };
    /** The promise of an answer already made the response: passed on as it is. */
    let settled: Answer;
    const at = (i: number): Answer => {
      const step = run[i] as (typeof run)[number];
      const res: Answer =
        i < run.length - 1 ? step(c, () => at(i + 1) as Promise<void>) : step(c, next);
      if (!(res instanceof Promise)) return answered(res);
      if (res !== settled) settled = res.then(answered);
      return settled;
    };
    return at(0);
  };
  // Hono takes a handler's Response whether or not it comes in a promise.
  return layer as MiddlewareHandler;
}

const ALL_METHODS: readonly RouteMethod[] = ["GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"];

/**
 * The table's last entry: every request no route served. A path the table serves under
 * other methods is answered `methodNotAllowed` with them (405, `Allow`); any other path
 * under the app, `notFound` (404). Mounted last, after authentication, so its guards are
 * a caller's.
 */
export function fallbackRoute<S>(options: {
  readonly id: string;
  /** The app's mounted routes (Hono's `app.routes`), read at the first request. */
  readonly routesOf: (served: S) => readonly { method: string; path: string }[];
  readonly trace: boolean;
  readonly cors: RouteGuards["cors"];
  readonly notFound: (c: Context) => Response;
  readonly methodNotAllowed: (c: Context, allow: string[]) => Response;
}): RouteEntry<S> {
  return {
    id: options.id,
    methods: ALL_METHODS,
    paths: ["/*"],
    guards: {
      auth: "caller",
      scoping: "none",
      contextIds: "none",
      rateLimit: "none",
      body: "none",
      cors: options.cors,
      trace: options.trace,
    },
    summary: "Any other method (405 with Allow) or path (404) under the app",
    serve: (servedBy) => {
      // Built at the first request: every route is mounted by then.
      let served: TrieRouter<readonly string[]> | null = null;
      const answer = (c: Context): Response => {
        if (!served) {
          served = new TrieRouter();
          const byPath = new Map<string, Set<string>>();
          for (const route of options.routesOf(servedBy)) {
            if (route.method === "ALL" || route.path === "/*") continue;
            const methods = byPath.get(route.path) ?? new Set<string>();
            methods.add(route.method);
            if (route.method === "GET") methods.add("HEAD");
            byPath.set(route.path, methods);
          }
          for (const [path, methods] of byPath) served.add("ALL", path, [...methods]);
        }
        // The path within the app, wherever it is mounted.
        const base = basePath(c);
        const path = base === "/" ? c.req.path : c.req.path.slice(base.length) || "/";
        const allow = new Set<string>();
        for (const [methods] of served.match("ALL", path)[0]) for (const m of methods) allow.add(m);
        if (allow.size === 0 || allow.has(c.req.method)) return options.notFound(c);
        return options.methodNotAllowed(c, [...allow]);
      };
      // Routes of an app this one is mounted in, registered after it, are served first: the
      // fallback answers only for a request none of them took.
      const fallback: MiddlewareHandler = async (c, next) => {
        const index = c.req.routeIndex;
        const later = matchedRoutes(c).some((r, i) => i > index && r.method !== "ALL");
        if (!later) return answer(c);
        await next();
        if (!c.finalized) c.res = answer(c);
      };
      return fallback as unknown as RouteHandler;
    },
  };
}
