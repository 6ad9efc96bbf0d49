import type { Context, Env, Hono, MiddlewareHandler } from "hono";
import { bodyLimit } from "hono/body-limit";
import { basePath } from "hono/route";
import type { RouteEntry, RouteGuards } from "../agent/routes";
import type { A2AError } from "../protocol/errors";
import { refusal } from "./auth";
import { jsonMediaProblem } from "./body";

export type { RouteEntry, RouteGuards, RouteHandler, RouteMethod } from "../agent/routes";

/** The guards' middleware an app supplies; its routes pick theirs by declaration. */
export interface RouteKit {
  /** Authentication, installed once before the first route that is not public. */
  readonly auth: MiddlewareHandler;
  /** The rate limit guard for a declaration; null when the app has no rate limits. */
  readonly rateLimit: (from: "path" | "body") => MiddlewareHandler | null;
  /** The body limit of every route that reads a body. */
  readonly maxBodyBytes: number;
  /** The error a body past the limit gets. */
  readonly tooLarge: () => A2AError;
}

const CHOICES: { readonly [K in keyof RouteGuards]: readonly unknown[] } = {
  auth: ["none", "caller", "caller-or-operator"],
  scoping: ["none", "tenant", "owner"],
  contextIds: ["none", "verified", "filter"],
  rateLimit: ["none", "path", "body"],
  body: ["none", "json", "optional-json"],
  cors: ["public", "agent", "none"],
  trace: [true, false],
};
const METHODS = new Set<string>(["GET", "POST", "PUT", "PATCH", "DELETE"]);

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
    if (!allowed.includes(value)) {
      throw new TypeError(
        `${name}: guards.${key} must be declared (${allowed.map((v) => JSON.stringify(v)).join(", ")})`,
      );
    }
  }
  if (entry.guards.body !== "none" && entry.methods.every((m) => m === "GET")) {
    throw new TypeError(`${name}: a GET request has no body`);
  }
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
  return (c, next) => {
    const request = c.req.raw;
    const problem = sendsBody(request) ? jsonMediaProblem(request) : null;
    return problem ? refuse(c, problem) : limit(c, next);
  };
}

/**
 * Mounts the table on `app`: its batches in order, each batch in rounds (every entry's
 * first path, then every second path: a batch's unprefixed routes win over its
 * `/{tenant}` ones), each route behind the middleware its guards declare. Public routes
 * come first; authentication is installed once, before the first route that needs it, so
 * a public route after it is refused here (it would not be public). Call it once per app
 * with the whole table: an app mounts nothing else.
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
    const mounts = batch.map((entry) => ({ entry, chain: chainOf(entry, served, kit) }));
    const rounds = Math.max(0, ...batch.map((e) => e.paths.length));
    for (let round = 0; round < rounds; round++) {
      for (const { entry, chain } of mounts) {
        const path = entry.paths[round];
        if (path === undefined) continue;
        if (entry.guards.auth === "none") {
          if (authed) {
            throw new TypeError(
              `route ${JSON.stringify(entry.id)}: public routes must come before authenticated ones`,
            );
          }
        } else if (!authed) {
          app.use("*", kit.auth);
          authed = true;
        }
        app.on([...entry.methods], path, ...(chain as [MiddlewareHandler]));
      }
    }
  }
}

/** A route's middleware by its declaration, then its handler: built once, at mount. */
function chainOf<S>(entry: RouteEntry<S>, served: S, kit: RouteKit): MiddlewareHandler[] {
  const steps: MiddlewareHandler[] = [];
  if (entry.guards.rateLimit !== "none") {
    const limit = kit.rateLimit(entry.guards.rateLimit);
    if (limit) steps.push(limit);
  }
  if (entry.guards.body !== "none") steps.push(bodyGuard(entry.guards.body, kit));
  steps.push(entry.serve(served) as MiddlewareHandler);
  return steps;
}
