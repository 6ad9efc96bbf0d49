/**
 * Turns off permessage-deflate on the WebSockets Miniflare opens from the Vitest process.
 *
 * `@cloudflare/vitest-plugin` talks to each workerd test runner over one WebSocket that
 * Miniflare opens with the `ws` package, whose client offers compression by default. Every
 * module the runner imports crosses it, so the Vitest process spent about a seventh of its
 * CPU deflating them (and workerd inflating them) over a loopback socket where compression
 * buys nothing. Neither the plugin nor Miniflare exposes the option, and workerd's
 * `no_web_socket_compression` flag does not reach the socket (Miniflare's own entry Worker
 * accepts it), so the `ws` class Miniflare requires is swapped for one that does not offer
 * compression. It must run before Miniflare is first loaded: `vitest.config.ts` calls it
 * before importing the plugin.
 */
import { createRequire } from "node:module";

/** Swaps the `ws` export Miniflare resolves for a subclass without compression; idempotent. */
export function withoutWebSocketDeflate() {
  // Resolve `ws` as Miniflare does (from its own folder), so it is the same module.
  const fromMiniflare = createRequire(createRequire(import.meta.url).resolve("miniflare"));
  const path = fromMiniflare.resolve("ws");
  if (fromMiniflare.cache[fromMiniflare.resolve("miniflare")]) {
    console.warn("no-websocket-deflate: Miniflare is already loaded; its WebSockets still deflate");
    return;
  }
  /** @type {any} */
  const WebSocket = fromMiniflare("ws");
  if (WebSocket.deflateOff) return;
  class WebSocketWithoutDeflate extends WebSocket {
    /** @param {unknown} address @param {unknown} [protocols] @param {object} [options] */
    constructor(address, protocols, options) {
      // ws accepts (address, options) as well as (address, protocols, options).
      const optionsOnly =
        options === undefined &&
        typeof protocols === "object" &&
        protocols !== null &&
        !Array.isArray(protocols);
      if (optionsOnly) super(address, { ...protocols, perMessageDeflate: false });
      else super(address, protocols, { ...options, perMessageDeflate: false });
    }
  }
  // The module's other exports (WebSocketServer, createWebSocketStream, ...) hang off the
  // class as its own properties; bundlers copy only own properties, so copy them across.
  for (const name of Object.getOwnPropertyNames(WebSocket)) {
    if (
      !(name in { length: 0, name: 0, prototype: 0 }) &&
      !Object.hasOwn(WebSocketWithoutDeflate, name)
    ) {
      Object.defineProperty(
        WebSocketWithoutDeflate,
        name,
        /** @type {PropertyDescriptor} */ (Object.getOwnPropertyDescriptor(WebSocket, name)),
      );
    }
  }
  Object.defineProperty(WebSocketWithoutDeflate, "deflateOff", { value: true });
  const cached = fromMiniflare.cache[path];
  if (cached) cached.exports = WebSocketWithoutDeflate;
}
