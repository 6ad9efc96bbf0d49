import {
  base64url,
  createLocalJWKSet,
  decodeProtectedHeader,
  flattenedVerify,
  type JSONWebKeySet,
  type JWK,
} from "jose";
import { readBounded } from "../protocol/bounded-body";
import { cardSignaturesOf, cardSigningPayloads } from "../protocol/card/card-signature";
import type { JsonObject } from "../protocol/json";

/** Why a card's signatures were refused. */
export type CardSignatureProblem =
  /** The card has no `signatures`. */
  | "unsigned"
  /** `signatures`, a header or the card itself is not what A2A §8.4 describes. */
  | "malformed"
  /** The keys to verify with could not be had (JWKS unreachable, too large, not a JWKS). */
  | "keys-unavailable"
  /** No signature verifies with a trusted key (unknown `kid`, wrong key, a changed card). */
  | "invalid";

/**
 * A card whose signatures do not prove it (A2A §8.4.3): thrown by `verifyAgentCard`, and
 * by `connect` and the CLI when asked to verify. `problem` says why; `details` has one
 * line per signature tried.
 */
export class CardSignatureError extends Error {
  override name = "CardSignatureError";
  constructor(
    message: string,
    readonly problem: CardSignatureProblem,
    readonly details: string[] = [],
  ) {
    super(message);
  }
}

/**
 * Which keys a card's signatures must verify with. With neither `keys` nor `jwksUrl`, the
 * `jku` each signature names is used, and only when it is on the origin the card was read
 * from, so a card cannot send the client to fetch keys elsewhere. That proves the card is
 * the one its origin signs (not altered by a cache, a registry or a proxy); trusting the
 * origin itself is TLS's part.
 */
export interface VerifyCardOptions {
  /**
   * Keys you trust for this agent (a JWKS or a list of public JWKs): the strongest choice,
   * since nothing the agent serves can change them.
   */
  keys?: JSONWebKeySet | JWK[];
  /** A JWKS URL to fetch the keys from (e.g. one its operator published). */
  jwksUrl?: string | URL;
  /** The fetch for the JWKS (a service binding's, a test's); the global one by default. */
  fetch?: typeof fetch;
  /** Accepted algorithms (default: ES256, ES384, ES512, EdDSA, Ed25519, RS256, PS256). */
  algorithms?: string[];
}

/** The signature that verified. */
export interface CardVerification {
  kid: string;
  alg: string;
  jku?: string;
}

const ALGORITHMS = ["ES256", "ES384", "ES512", "EdDSA", "Ed25519", "RS256", "PS256"];
/**
 * Signatures tried at most, and key sets fetched at most, per card: a rotation needs two
 * or three, and a hostile card must not buy itself unbounded verifications or fetches.
 */
export const MAX_CARD_SIGNATURES = 8;
const MAX_KEY_SETS = 2;
/** A JWKS larger than this is not read; nor is one slower than the timeout. */
export const MAX_JWKS_BYTES = 256 * 1024;
const JWKS_TIMEOUT_MS = 5_000;

/**
 * Verifies an agent card's signatures (A2A §8.4.3): at least one must verify, over the
 * RFC 8785 canonical card without `signatures` (proto defaults left out), with a key you
 * trust. Others may fail (a key retired in a rotation).
 * @param cardUrl Where the card was read from: the only origin whose `jku` is followed
 * when no `keys` or `jwksUrl` is given.
 * @throws CardSignatureError (unsigned, malformed, keys-unavailable or invalid).
 * @example
 * const card = await (await fetch(`${agentUrl}/.well-known/agent-card.json`)).json();
 * const { kid } = await verifyAgentCard(card, { jwksUrl: "https://agent.example.com/.well-known/jwks.json" });
 */
export async function verifyAgentCard(
  card: unknown,
  options: VerifyCardOptions = {},
  cardUrl?: string,
): Promise<CardVerification> {
  if (!card || typeof card !== "object" || Array.isArray(card)) {
    throw new CardSignatureError("the agent card is not a JSON object", "malformed");
  }
  const json = card as JsonObject;
  let signatures: ReturnType<typeof cardSignaturesOf>;
  let payloads: string[];
  try {
    signatures = cardSignaturesOf(json);
    payloads = cardSigningPayloads(json).map((bytes) => base64url.encode(bytes));
  } catch (error) {
    throw new CardSignatureError(
      `the agent card cannot be verified: ${(error as Error).message}`,
      "malformed",
    );
  }
  if (signatures.length === 0) {
    throw new CardSignatureError("the agent card is not signed (it has no signatures)", "unsigned");
  }
  const algorithms = options.algorithms ?? ALGORITHMS;
  const fetchFn = options.fetch ?? ((input, init) => fetch(input, init));
  const sets = new Map<string, Promise<ReturnType<typeof createLocalJWKSet>>>();
  const keySet = (url: string) => {
    let set = sets.get(url);
    if (!set && sets.size >= MAX_KEY_SETS) {
      return Promise.reject(new Error(`the card names more than ${MAX_KEY_SETS} key sets`));
    }
    if (!set) {
      set = fetchJwks(url, fetchFn).then(createLocalJWKSet);
      sets.set(url, set);
    }
    return set;
  };
  const trusted = options.keys
    ? createLocalJWKSet(Array.isArray(options.keys) ? { keys: options.keys } : options.keys)
    : null;
  const details: string[] = [];
  let unavailable = 0;
  if (signatures.length > MAX_CARD_SIGNATURES) {
    details.push(
      `only the first ${MAX_CARD_SIGNATURES} of ${signatures.length} signatures are tried`,
    );
  }
  const tried = signatures.slice(0, MAX_CARD_SIGNATURES);
  for (const [i, sig] of tried.entries()) {
    const at = `signatures[${i}]`;
    let header: ReturnType<typeof decodeProtectedHeader>;
    try {
      header = decodeProtectedHeader({ protected: sig.protected, payload: "", signature: "" });
    } catch {
      details.push(`${at}: the protected header is not base64url JSON`);
      continue;
    }
    const kid = typeof header.kid === "string" ? header.kid : "";
    const alg = typeof header.alg === "string" ? header.alg : "";
    if (!kid) {
      details.push(`${at}: the protected header names no kid`);
      continue;
    }
    let keys: ReturnType<typeof createLocalJWKSet>;
    try {
      if (trusted) keys = trusted;
      else if (options.jwksUrl) keys = await keySet(String(options.jwksUrl));
      else keys = await keySet(sameOriginJku(header.jku, cardUrl, json));
    } catch (error) {
      unavailable++;
      details.push(`${at} (kid ${kid}): ${(error as Error).message}`);
      continue;
    }
    // The specification's payload first, then the official SDKs' (empties left out).
    let failure: unknown;
    for (const payload of payloads) {
      try {
        await flattenedVerify(
          {
            protected: sig.protected,
            payload,
            signature: sig.signature,
            ...(sig.header ? { header: sig.header } : {}),
          },
          keys,
          { algorithms },
        );
        return { kid, alg, ...(typeof header.jku === "string" ? { jku: header.jku } : {}) };
      } catch (error) {
        failure ??= error;
      }
    }
    details.push(`${at} (kid ${kid}, ${alg}): ${(failure as Error).message}`);
  }
  if (unavailable === tried.length) {
    throw new CardSignatureError(
      `the keys to verify the agent card could not be had: ${details.join("; ")}`,
      "keys-unavailable",
      details,
    );
  }
  throw new CardSignatureError(
    `no signature of the agent card verifies: ${details.join("; ")}`,
    "invalid",
    details,
  );
}

/** A signature's `jku`, when it is on the card's own origin. */
function sameOriginJku(jku: unknown, cardUrl: string | undefined, card: JsonObject): string {
  if (typeof jku !== "string" || !URL.canParse(jku)) {
    throw new Error("it names no jku, and no keys or jwksUrl were given");
  }
  const interfaces = Array.isArray(card.supportedInterfaces) ? card.supportedInterfaces : [];
  const first = interfaces[0];
  const declared =
    first && typeof first === "object" && !Array.isArray(first) ? first.url : undefined;
  const origin = cardUrl ?? (typeof declared === "string" ? declared : undefined);
  if (!origin || !URL.canParse(origin) || new URL(origin).origin !== new URL(jku).origin) {
    throw new Error(`its jku ${jku} is not on the card's own origin; pass keys or jwksUrl`);
  }
  return jku;
}

/** A JWKS, fetched without redirects, within a time and a size. */
async function fetchJwks(url: string, fetchFn: typeof fetch): Promise<JSONWebKeySet> {
  let response: Response;
  try {
    response = await fetchFn(url, {
      headers: { Accept: "application/json" },
      redirect: "manual",
      signal: AbortSignal.timeout(JWKS_TIMEOUT_MS),
    });
  } catch (error) {
    throw new Error(`the JWKS at ${url} could not be fetched (${(error as Error).message})`);
  }
  if (!response.ok) {
    await response.body?.cancel().catch(() => {});
    throw new Error(`the JWKS at ${url} answered HTTP ${response.status}`);
  }
  let text: string | null;
  try {
    text = await readBounded(response, MAX_JWKS_BYTES);
  } catch (error) {
    throw new Error(`the JWKS at ${url} could not be read (${(error as Error).message})`);
  }
  if (text === null) throw new Error(`the JWKS at ${url} is larger than ${MAX_JWKS_BYTES} bytes`);
  try {
    const set = JSON.parse(text) as { keys?: unknown };
    if (Array.isArray(set.keys)) return set as JSONWebKeySet;
  } catch {}
  throw new Error(`the document at ${url} is not a JWKS`);
}
