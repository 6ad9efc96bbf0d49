import type { A2AClient } from "../client/a2a-client";
import { connect } from "../client/connect";
import type { JsonObject } from "../protocol/json";
import type { DelegateTarget } from "./delegation";

/** The stored form of a target: `url:`, `card:` or `binding:`. */
export function describeTarget(target: DelegateTarget, env: unknown): string {
  if (typeof target === "string" || target instanceof URL) return `url:${new URL(target).href}`;
  // A binding is found by identity among env's values: a service binding is an RPC stub
  // that claims to have every property, so its shape says nothing.
  const name = Object.entries((env ?? {}) as Record<string, unknown>).find(
    ([, value]) => value === target,
  )?.[0];
  if (name) return `binding:${name}`;
  if (Object.getPrototypeOf(target) !== Object.prototype) {
    throw new TypeError(
      "delegate: a service binding target must be one of this Worker's env bindings (pass env.NAME)",
    );
  }
  const binding = (target as { binding?: unknown }).binding;
  if (typeof binding === "string") return `binding:${binding}`;
  const card = JSON.stringify(target);
  if (card.length > 64 * 1024) throw new TypeError("delegate: the agent card is over 64 KiB");
  return `card:${card}`;
}

function isFetcher(target: unknown): target is Fetcher {
  return (
    typeof target === "object" &&
    target !== null &&
    typeof (target as { fetch?: unknown }).fetch === "function"
  );
}

/** Connects to a stored target (a binding is looked up in env again: it survives restarts). */
export function connectTarget(
  stored: string,
  env: unknown,
  options: {
    headers?: Record<string, string>;
    trustedOrigins?: readonly string[];
    signal?: AbortSignal;
    /** For a URL or card target (a binding has its own). */
    fetch?: typeof fetch;
  } = {},
): Promise<A2AClient> {
  if (stored.startsWith("binding:")) {
    const name = stored.slice("binding:".length);
    const binding = (env as Record<string, unknown> | undefined)?.[name];
    if (!isFetcher(binding)) {
      throw new TypeError(`delegate: env.${name} is not a service binding of this Worker`);
    }
    // The host is arbitrary: a service binding delivers whatever URL it is given.
    return connect(`https://${name.toLowerCase()}.binding/`, {
      ...options,
      fetch: (input, init) => binding.fetch(input as RequestInfo, init),
      // Whatever origin the peer's card names, the binding delivers to that one Worker.
      trustedOrigins: "any",
    });
  }
  if (stored.startsWith("card:"))
    return connect(JSON.parse(stored.slice(5)) as JsonObject, options);
  return connect(stored.slice(4), options);
}
