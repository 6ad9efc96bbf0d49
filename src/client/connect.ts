import * as z from "zod";
import {
  majorMinor,
  type PeerCard,
  type PeerCardInput,
  type PeerInterface,
  parsePeerCard,
} from "../protocol/card/peer-card";
import type { JsonObject } from "../protocol/json";
import { A2AClient } from "./a2a-client";
import { type ApiKeyPlacement, type Auth, applyAuth } from "./auth";
import { verifyAgentCard } from "./card-verify";
import { isObj } from "./convert";
import {
  A2AConnectionError,
  CredentialPolicyError,
  errorFromHttp,
  invalidResponse,
  UnsupportedOperationError,
} from "./errors";
import type { Binding, Version } from "./operations";
import {
  type CredentialScope,
  credentialScope,
  redirectMode,
  redirectTarget,
  requireTrusted,
} from "./origins";
import { DEFAULT_RESUME } from "./resume";
import { messageOf, readText, Transport } from "./transport";
import type { ConnectOptions } from "./types";

/** Where the card says an API key goes (its first apiKey scheme). */
function apiKeyPlacement(card: PeerCard): ApiKeyPlacement | undefined {
  for (const scheme of Object.values(card.securitySchemes ?? {})) {
    const v1 = scheme.apiKeySecurityScheme;
    const s = (isObj(v1) ? v1 : scheme) as JsonObject;
    const location = isObj(v1) ? s.location : s.type === "apiKey" ? s.in : undefined;
    if (
      typeof s.name === "string" &&
      (location === "header" || location === "query" || location === "cookie")
    ) {
      return { name: s.name, in: location };
    }
  }
  return undefined;
}

const SPOKEN: readonly string[] = ["1.0", "0.3"];

/** A URL's origin; a relative or broken one has none (it never equals a real origin). */
const originOf = (url: string | undefined): string | null =>
  url !== undefined && URL.canParse(url) ? new URL(url).origin : null;

/**
 * The interface `connect` uses: one this client speaks, of the given binding if one is
 * given, on the origin of the card's first interface (the agent's own, the one a registry
 * checked) before any other, and v1 before v0.3 on that origin. A card listing another
 * origin's v1.0 beside its own v0.3 so does not pull the client off the agent's origin.
 * Throws when the card has none.
 * @example
 * ```ts
 * const { url, protocolBinding } = chooseInterface(card, "HTTP+JSON");
 * ```
 */
export function chooseInterface(card: PeerCard, binding?: Binding): PeerInterface {
  const usable = card.supportedInterfaces.filter((i) => {
    const version = majorMinor(i.protocolVersion);
    if (!SPOKEN.includes(version)) return false;
    if (binding && i.protocolBinding !== binding) return false;
    // v0.3's HTTP+JSON used other paths and proto shapes; v0.3 is spoken over JSON-RPC.
    if (version === "0.3") return i.protocolBinding === "JSONRPC";
    return i.protocolBinding === "JSONRPC" || i.protocolBinding === "HTTP+JSON";
  });
  const home = originOf(card.supportedInterfaces[0]?.url);
  const preferred = (list: PeerInterface[]) =>
    list.find((i) => majorMinor(i.protocolVersion) === "1.0") ?? list[0];
  const chosen = preferred(usable.filter((i) => originOf(i.url) === home)) ?? preferred(usable);
  if (chosen) return chosen;
  const offered = card.supportedInterfaces
    .map((i) => `${i.protocolBinding} ${i.protocolVersion}`)
    .join(", ");
  throw new UnsupportedOperationError({
    message: `${card.name} offers no interface this client speaks${binding ? ` over ${binding}` : ""} (it offers ${offered}; the client speaks JSONRPC and HTTP+JSON 1.0, and JSONRPC 0.3)`,
    code: -32004,
    httpStatus: 0,
  });
}

/**
 * An API key goes in a URL (where proxies and logs keep it) only when the operator said
 * so: a card asking for `in: query` is refused otherwise.
 */
function refuseQueryKey(
  auth: Auth | undefined,
  placement: ApiKeyPlacement | undefined,
  card: PeerCard,
  url: string,
): void {
  if (!auth || !("apiKey" in auth) || auth.name || placement?.in !== "query") return;
  if (auth.in === "query") return;
  throw new CredentialPolicyError(
    `${card.name}'s card asks for the API key in the query string (${placement.name}), where URLs are logged; pass auth: { apiKey, in: "query" } to allow it, or a name to send it in a header`,
    url,
  );
}

async function fetchCard(
  target: string,
  fetchFn: typeof fetch,
  headers: Headers,
  auth: Auth | undefined,
  signal: AbortSignal | undefined,
  scope: CredentialScope,
): Promise<{ card: PeerCard; url: string; json: unknown }> {
  const base = target.replace(/\/+$/, "");
  const candidates = /\.json($|\?)/.test(base)
    ? [base]
    : [`${base}/.well-known/agent-card.json`, `${base}/.well-known/agent.json`];
  const problems: string[] = [];
  for (const url of candidates) {
    const h = new Headers(headers);
    h.set("Accept", "application/json");
    const u = new URL(url);
    await applyAuth(auth, h, u, { refresh: false, cardApiKey: undefined });
    const get = async (href: string, init: RequestInit) => {
      try {
        return await fetchFn(href, { ...init, signal: signal ?? null });
      } catch (error) {
        if (signal?.aborted) throw error;
        throw new A2AConnectionError(`could not reach ${u.origin}: ${messageOf(error)}`, url, {
          cause: error,
        });
      }
    };
    let response = await get(u.href, { headers: h, redirect: redirectMode(scope) });
    let cardUrl = url;
    if (scope.carries && response.redirected) {
      // A fetch that followed although told not to: say so rather than go on quietly.
      await response.body?.cancel().catch(() => {});
      throw new CredentialPolicyError(
        `${url} redirected to ${response.url} and the fetch in use followed it with credentials; pass a fetch that honours redirect: "manual"`,
        response.url,
      );
    }
    const next = scope.carries ? redirectTarget(response, u.href) : null;
    if (next !== null) {
      // The card is public: read it where the redirect leads, without credentials. Its
      // endpoint then has to be on a trusted origin to get them (checked by connect).
      await response.body?.cancel().catch(() => {});
      const plain = new Headers({ Accept: "application/json" });
      response = await get(url, { headers: plain, redirect: "follow" });
      cardUrl = response.url || next || url;
    }
    const text = await readText(response, url);
    if (!response.ok) {
      // Only "not here" sends the search to the next place: any other error is the agent's
      // answer (a misconfigured Worker's 503, a gateway's 401), with its own message.
      if (response.status !== 404) throw errorFromHttp(response.status, text);
      problems.push(`${url}: HTTP ${response.status}`);
      continue;
    }
    try {
      const json: unknown = JSON.parse(text);
      return { card: parsePeerCard(json), url: cardUrl, json };
    } catch (error) {
      const detail =
        error instanceof z.ZodError
          ? error.issues.map((i) => `${i.path.join(".") || "(root)"}: ${i.message}`).join("; ")
          : "not JSON";
      problems.push(`${url}: not an agent card (${detail})`);
    }
  }
  throw invalidResponse(`no agent card found: ${problems.join("; ")}`);
}

/**
 * Connects to an A2A agent: reads its card (`/.well-known/agent-card.json`, then the
 * v0.3 `/.well-known/agent.json`), picks JSON-RPC or HTTP+JSON from the card's
 * `supportedInterfaces` (or the `binding` you force), and speaks v1.0 — or v0.3 to an
 * agent that offers only v0.3.
 * @example
 * const agent = await connect("https://agent.example.com", { auth: { bearer: "s3cret" } });
 * const result = await agent.send("hello");
 * console.log(answerOf(result));
 * @example
 * // Another Worker of the same account, through a service binding (no network hop):
 * const peer = await connect("https://peer.internal", { fetch: env.PEER.fetch.bind(env.PEER) });
 */
export async function connect(
  target: string | URL | PeerCardInput | JsonObject,
  options: ConnectOptions = {},
): Promise<A2AClient> {
  const fetchFn = options.fetch ?? ((input, init) => fetch(input, init));
  const headers = new Headers(options.headers);
  // Headers the operator adds are treated as credentials too (they often are).
  const carries = options.auth !== undefined || [...headers.keys()].length > 0;
  let card: PeerCard;
  let cardUrl: string | undefined;
  let scope: CredentialScope | undefined;
  let raw: unknown = target;
  if (typeof target === "string" || target instanceof URL) {
    scope = credentialScope(carries, String(target), options.trustedOrigins);
    const found = await fetchCard(
      String(target),
      fetchFn,
      headers,
      options.auth,
      options.signal,
      scope,
    );
    card = found.card;
    cardUrl = found.url;
    raw = found.json;
  } else {
    try {
      card = parsePeerCard(target);
    } catch (error) {
      throw invalidResponse(`not an agent card: ${(error as Error).message}`);
    }
  }
  // Before anything is sent to the agent: a card that does not verify is never used.
  if (options.verifyCard) {
    const verify = options.verifyCard === true ? {} : options.verifyCard;
    await verifyAgentCard(raw, { fetch: fetchFn, ...verify }, cardUrl);
  }
  const chosen = chooseInterface(card, options.binding);
  const endpoint = { ...chosen, url: cardUrl ? new URL(chosen.url, cardUrl).href : chosen.url };
  // A card the operator handed over names its endpoint as the operator's own choice; a
  // fetched one must point where the operator connected (or at a trusted origin).
  scope ??= credentialScope(carries, endpoint.url, options.trustedOrigins);
  requireTrusted(scope, endpoint.url, `the endpoint ${card.name}'s card names`);
  const cardApiKey = apiKeyPlacement(card);
  refuseQueryKey(options.auth, cardApiKey, card, endpoint.url);
  const transport = new Transport({
    url: endpoint.url,
    binding: endpoint.protocolBinding as Binding,
    version: majorMinor(endpoint.protocolVersion) as Version,
    tenant: endpoint.tenant || undefined,
    fetch: fetchFn,
    headers,
    auth: options.auth,
    cardApiKey,
    scope,
    extensions: options.extensions ?? [],
  });
  return new A2AClient(card, endpoint, transport, options.resume ?? DEFAULT_RESUME);
}
