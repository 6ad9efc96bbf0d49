import type { Agent } from "../agent/definition";
import { logEvent } from "../telemetry/log";

/** Hosts of local development (`wrangler dev`, tests): an open agent there is expected. */
const LOCAL_HOSTS = new Set(["localhost", "127.0.0.1", "[::1]"]);

/**
 * Whether a request URL is of a local host, parsing a URL only when its origin (the text
 * before the path) changed: an isolate in development serves one origin, and would
 * otherwise parse every request's URL to learn again that it is local.
 */
let lastOrigin = "";
let lastLocal = false;
export function isLocalUrl(url: string): boolean {
  const end = url.indexOf("/", url.indexOf("//") + 2);
  const origin = end < 0 ? url : url.slice(0, end);
  if (origin !== lastOrigin) {
    lastLocal = LOCAL_HOSTS.has(new URL(url).hostname);
    lastOrigin = origin;
  }
  return lastLocal;
}

// Per isolate: one warning per agent, however many requests the isolate serves.
const warned = new WeakSet<object>();

/**
 * Warns once, on the first request from a non-local host, that an agent without `auth`
 * is open to anyone who can reach it: an open agent should be a decision, not an oversight.
 * A step of the app's first middleware (not a layer of its own), given each request's URL.
 */
export function openWarning<Env extends object>(agent: Agent<Env>): (url: string) => void {
  return (url) => {
    if (agent.auth || warned.has(agent) || isLocalUrl(url)) return;
    const { hostname, origin } = new URL(url);
    if (LOCAL_HOSTS.has(hostname)) return;
    warned.add(agent);
    logEvent(
      "warn",
      `edgelink: agent "${agent.card.name}" is served at ${origin} without auth: anyone who can reach it can send it messages and read its tasks. Close it with the auth option of defineAgent, e.g. auth: { apiKeys: { secret: "AGENT_API_KEYS" } } (see docs/security-defaults.md).`,
    );
  };
}
