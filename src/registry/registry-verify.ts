import { createLocalJWKSet, decodeProtectedHeader, type JSONWebKeySet, jwtVerify } from "jose";
import { CardSignatureError, verifyAgentCard } from "../client/card-verify";
import { REGISTRATION_PROOF_TYPE } from "../client/registration-proof";
import { readBounded } from "../protocol/bounded-body";
import { type CardFacts, cardFacts, type RegistryLimits } from "../protocol/card/registry";
import { A2AError, invalidParams } from "../protocol/errors";
import type { JsonObject } from "../protocol/json";
import { hostVerdict } from "../push/url-policy";

/**
 * How a registry checks that a registration is the agent's own: it reads the card the
 * agent serves at `<url>/.well-known/agent-card.json` and lists only a card that matches
 * it. When the served card is signed, the registrant must also prove it holds the key:
 * a short-lived JWT signed with one of the card's keys, naming this registry and the
 * registrant. Such a proof also takes a URL back from whoever holds it without one.
 */
export interface RegistryVerifyOptions<Env> {
  /**
   * The fetch that reads agents' cards and key sets. Default: the global `fetch`. Give a
   * service binding's (`(request, env) => env.AGENTS.fetch(request)`) or a test's.
   */
  fetch?: (request: Request, env: Env) => Promise<Response>;
  /**
   * Accept agents at `http://localhost`, `127.0.0.1` and `[::1]` (local development).
   * Default: on when the registry itself is served from one of those, off when deployed.
   */
  allowLocalhost?: boolean;
  /** How long one read of a card or a key set may take. Default 5000 ms. */
  timeoutMs?: number;
}

/** What a registration proved, for the registry object's ownership rules. */
export interface RegistrationVerdict {
  facts: CardFacts;
  /**
   * The card to list: the one the agent's URL serves, never the registrant's copy (which
   * matched it on name and URL only, and could add interfaces on other origins).
   */
  card: JsonObject;
  /** True when the registrant proved it holds the card's signing key. */
  keyProven: boolean;
}

/** A registration proof is a compact JWT; longer ones are refused unread. */
export const MAX_PROOF_CHARS = 8 * 1024;
/** The longest a proof may live (`exp - iat`), and how old its `iat` may be. */
const PROOF_MAX_AGE_SECONDS = 600;
const LOCAL_DEV_HOSTS = new Set(["localhost", "127.0.0.1", "[::1]"]);

const isObject = (v: unknown): v is JsonObject =>
  typeof v === "object" && v !== null && !Array.isArray(v);

/** The URL, if an agent may be listed at it (https, a public host, no credentials). */
function agentUrl(url: string, allowLocalhost: boolean): URL {
  const refuse = (why: string) =>
    invalidParams([{ path: ["url"], message: `cannot be verified: ${why}` }], "card");
  const parsed = new URL(url);
  if (parsed.username || parsed.password) throw refuse("it holds credentials");
  const local = allowLocalhost && LOCAL_DEV_HOSTS.has(parsed.hostname);
  if (parsed.protocol !== "https:" && !(local && parsed.protocol === "http:")) {
    throw refuse(`the registry reads cards over https only, got ${parsed.protocol}`);
  }
  if (!local) {
    const why = hostVerdict(parsed.hostname);
    if (why) throw refuse(`${parsed.hostname} is ${why}; the registry reads public agents only`);
  }
  return parsed;
}

/** Where the agent at `url` serves its card: beside its endpoints. */
export function servedCardUrl(url: URL): string {
  return `${url.origin}${url.pathname.replace(/\/+$/, "")}/.well-known/agent-card.json`;
}

/**
 * Reads a JSON document an agent serves: GET, no redirects, within the time and size
 * given. Failures are the registrant's 4xx, naming `card.url`.
 */
async function readJsonAt(
  url: string,
  maxBytes: number,
  fetchFn: (request: Request) => Promise<Response>,
  timeoutMs: number,
): Promise<unknown> {
  const refuse = (why: string) =>
    invalidParams([{ path: ["url"], message: `cannot be verified: ${url} ${why}` }], "card");
  let response: Response;
  try {
    response = await fetchFn(
      new Request(url, {
        headers: { Accept: "application/json" },
        redirect: "manual",
        signal: AbortSignal.timeout(timeoutMs),
      }),
    );
  } catch (error) {
    throw refuse(`could not be read (${(error as Error).message})`);
  }
  if (response.status !== 200) {
    await response.body?.cancel().catch(() => {});
    throw refuse(
      response.status >= 300 && response.status < 400
        ? `answered a redirect (${response.status}); the registry follows none`
        : `answered HTTP ${response.status}`,
    );
  }
  let text: string | null;
  try {
    text = await readBounded(response, maxBytes);
  } catch (error) {
    throw refuse(`could not be read (${(error as Error).message})`);
  }
  if (text === null) throw refuse(`is larger than ${maxBytes} bytes`);
  try {
    return JSON.parse(text);
  } catch {
    throw refuse("is not JSON");
  }
}

/**
 * Verifies a registration before it is stored: the URL may be read, the card it serves
 * matches the registered one (name and URL; and when the served card is signed, the
 * registered card is signed by the same keys), and a signed card comes with a proof.
 * What is listed is the served card, so the registrant adds nothing of its own.
 * @throws A2AError: InvalidParams (400, naming the field) for what could not be read or
 * does not match; PermissionDenied (403) for a signed card without a valid proof.
 */
export async function verifyRegistration(input: {
  card: JsonObject;
  proof: string | undefined;
  limits: RegistryLimits;
  registryOrigin: string;
  subject: string;
  tenant: string;
  fetch: (request: Request) => Promise<Response>;
  allowLocalhost: boolean;
  timeoutMs: number;
}): Promise<RegistrationVerdict> {
  const { card, limits } = input;
  const facts = cardFacts(card, limits);
  const url = agentUrl(facts.url, input.allowLocalhost);
  const cardUrl = servedCardUrl(url);
  const read = (at: string) =>
    readJsonAt(at, limits.maxCardChars * 3, input.fetch, input.timeoutMs);
  const served = await read(cardUrl);
  const mismatch = (field: string, why: string) =>
    invalidParams(
      [{ path: [field], message: `does not match the card served at ${cardUrl}: ${why}` }],
      "card",
    );
  if (!isObject(served)) throw mismatch("url", "that is not a JSON object");
  let servedFacts: CardFacts;
  try {
    servedFacts = cardFacts(served, limits);
  } catch {
    throw mismatch("url", "that is not a card the registry can list");
  }
  if (servedFacts.url !== facts.url) {
    throw mismatch("url", `it names ${servedFacts.url}`);
  }
  if (servedFacts.name !== facts.name) {
    throw mismatch("name", `it is named "${servedFacts.name}"`);
  }
  if (served.signatures === undefined) {
    if (input.proof !== undefined) {
      throw invalidParams([
        {
          path: ["proof"],
          message: `the card served at ${cardUrl} is not signed: there is no key to prove`,
        },
      ]);
    }
    return { facts: servedFacts, card: served, keyProven: false };
  }

  // A signed card: its keys come from the jku its signatures name, on its own origin.
  const jwks = await servedKeys(served, cardUrl, read);
  const keys = createLocalJWKSet(jwks);
  try {
    await verifyAgentCard(served, { keys: jwks });
  } catch (error) {
    throw mismatch(
      "signatures",
      `the served card's own signatures do not verify (${describe(error)})`,
    );
  }
  try {
    await verifyAgentCard(card, { keys: jwks });
  } catch (error) {
    throw mismatch(
      "signatures",
      `the registered card is not signed by the served card's keys (${describe(error)})`,
    );
  }
  if (input.proof === undefined) {
    throw new A2AError(
      "PermissionDenied",
      `The card served at ${cardUrl} is signed: registering it needs a proof (a registration JWT signed with one of its keys, for this registry and this principal)`,
      { url: facts.url },
    );
  }
  await checkProof(input.proof, keys, {
    audience: input.registryOrigin,
    subject: input.subject,
    tenant: input.tenant,
    url: facts.url,
  });
  return { facts: servedFacts, card: served, keyProven: true };
}

/** The JWKS a signed served card points at; only a `jku` on the card's origin is read. */
async function servedKeys(
  served: JsonObject,
  cardUrl: string,
  read: (url: string) => Promise<unknown>,
): Promise<JSONWebKeySet> {
  const origin = new URL(cardUrl).origin;
  const refuse = (why: string) =>
    invalidParams([{ path: ["signatures"], message: `cannot be verified: ${why}` }], "card");
  const list = Array.isArray(served.signatures) ? served.signatures : [];
  const jkus = new Set<string>();
  for (const sig of list) {
    if (!isObject(sig) || typeof sig.protected !== "string") continue;
    try {
      const { jku } = decodeProtectedHeader({
        protected: sig.protected,
        payload: "",
        signature: "",
      });
      if (typeof jku === "string" && URL.canParse(jku) && new URL(jku).origin === origin) {
        jkus.add(jku);
      }
    } catch {}
  }
  const [jku] = [...jkus];
  if (jku === undefined || jkus.size > 1) {
    throw refuse(
      jku === undefined
        ? `the card served at ${cardUrl} names no jku on ${origin}`
        : `the card served at ${cardUrl} names more than one key set`,
    );
  }
  const set = await read(jku);
  if (!isObject(set) || !Array.isArray(set.keys)) throw refuse(`${jku} is not a JWKS`);
  return set as unknown as JSONWebKeySet;
}

/** Checks a registration proof: typed, signed by a card key, for this registry, principal and URL, fresh. */
async function checkProof(
  proof: string,
  keys: ReturnType<typeof createLocalJWKSet>,
  expected: { audience: string; subject: string; tenant: string; url: string },
): Promise<void> {
  const deny = (why: string) =>
    new A2AError("PermissionDenied", `The registration proof is refused: ${why}`, {
      url: expected.url,
    });
  let payload: Record<string, unknown>;
  try {
    ({ payload } = await jwtVerify(proof, keys, {
      typ: REGISTRATION_PROOF_TYPE,
      audience: expected.audience,
      subject: expected.subject,
      maxTokenAge: PROOF_MAX_AGE_SECONDS,
      requiredClaims: ["iat", "exp", "url"],
      algorithms: ["ES256", "EdDSA", "Ed25519"],
      clockTolerance: 30,
    }));
  } catch (error) {
    throw deny(describe(error));
  }
  if (payload.url !== expected.url)
    throw deny(`it is for ${String(payload.url)}, not ${expected.url}`);
  if ((payload.tenant ?? "") !== expected.tenant) throw deny("it is for another tenant");
  const lifetime = Number(payload.exp) - Number(payload.iat);
  if (!(lifetime <= PROOF_MAX_AGE_SECONDS)) {
    throw deny(`it lives ${lifetime} s, over ${PROOF_MAX_AGE_SECONDS}`);
  }
}

const describe = (error: unknown) =>
  error instanceof CardSignatureError || error instanceof Error ? error.message : String(error);
