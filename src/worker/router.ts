import type { Result, Router } from "hono/router";
import { TrieRouter } from "hono/router/trie-router";

/** Paths whose match is remembered, at most (the oldest is forgotten first). */
export const REMEMBERED_ROUTES = 128;
/** Longer paths are matched every time, so the memory stays small whatever clients send. */
const REMEMBERED_PATH_CHARS = 256;

/**
 * Hono's trie router, remembering the match of the paths it sees most. Edgelink's routes
 * (the REST routes under an optional tenant) are beyond Hono's regexp router, so its
 * default (SmartRouter) put the trie router in charge anyway; using it alone keeps the
 * other two out of the bundle. Walking its tree was a tenth of the Worker's time per
 * JSON-RPC call, whose path is always `/`. A match depends only on method and path, and
 * Hono only reads it.
 */
export class RememberingRouter<T> implements Router<T> {
  readonly name = "RememberingRouter";
  private readonly inner: Router<T> = new TrieRouter<T>();
  private readonly matches = new Map<string, Result<T>>();

  add(method: string, path: string, handler: T): void {
    this.matches.clear();
    this.inner.add(method, path, handler);
  }

  match(method: string, path: string): Result<T> {
    if (path.length > REMEMBERED_PATH_CHARS) return this.inner.match(method, path);
    const key = `${method} ${path}`;
    let result = this.matches.get(key);
    if (result === undefined) {
      result = this.inner.match(method, path);
      this.matches.set(key, result);
      if (this.matches.size > REMEMBERED_ROUTES) {
        this.matches.delete(this.matches.keys().next().value as string);
      }
    }
    return result;
  }
}
