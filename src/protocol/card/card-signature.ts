import { canonicalJson, canonicalJsonBytes } from "../jcs";
import type { JsonObject, JsonValue } from "../json";

/**
 * An agent card's JWS (A2A §4.4.7): the flattened JSON serialization without its payload,
 * which is the card itself. `protected` is the base64url header (`alg`, `typ`, `kid`, and
 * optionally `jku`), `signature` the base64url signature, `header` any unprotected members.
 */
export interface AgentCardSignature {
  protected: string;
  signature: string;
  header?: JsonObject;
}

/** The `typ` of a card signature's protected header (A2A §8.4.2). */
export const CARD_SIGNATURE_TYPE = "JOSE";

/**
 * How a field of the card's proto message is present in its JSON (A2A §5.7, §8.4.1):
 * `keep` for REQUIRED fields and those with explicit presence (`optional`, messages, oneof
 * members), `scalar` for implicit-presence scalars (absent at their default), `list` and
 * `map` for repeated and map fields (absent when empty), `struct` for free JSON kept as
 * sent, and a nested table for a message (or a list or map of one; a REQUIRED list stays
 * even when empty).
 */
type Presence =
  | "keep"
  | "scalar"
  | "list"
  | "map"
  | "struct"
  | { message: Shape }
  | { list: Shape; required?: true }
  | { map: Shape };
type Shape = { readonly [field: string]: Presence };

const flow: Shape = {
  authorizationUrl: "keep",
  deviceAuthorizationUrl: "keep",
  tokenUrl: "keep",
  refreshUrl: "scalar",
  scopes: "keep",
  pkceRequired: "scalar",
};
const flows: Shape = {
  authorizationCode: { message: flow },
  clientCredentials: { message: flow },
  implicit: { message: { ...flow, authorizationUrl: "scalar", tokenUrl: "scalar", scopes: "map" } },
  password: { message: { ...flow, tokenUrl: "scalar", scopes: "map" } },
  deviceCode: { message: flow },
};
const securityScheme: Shape = {
  apiKeySecurityScheme: { message: { description: "scalar", location: "keep", name: "keep" } },
  httpAuthSecurityScheme: {
    message: { description: "scalar", scheme: "keep", bearerFormat: "scalar" },
  },
  oauth2SecurityScheme: {
    message: { description: "scalar", flows: { message: flows }, oauth2MetadataUrl: "scalar" },
  },
  openIdConnectSecurityScheme: { message: { description: "scalar", openIdConnectUrl: "keep" } },
  mtlsSecurityScheme: { message: { description: "scalar" } },
};
const securityRequirement: Shape = { schemes: { map: { list: "list" } } };
const skill: Shape = {
  id: "keep",
  name: "keep",
  description: "keep",
  tags: "keep",
  examples: "list",
  inputModes: "list",
  outputModes: "list",
  securityRequirements: { list: securityRequirement },
};
/** The v1.0.1 `AgentCard` message, field by field. */
const agentCard: Shape = {
  name: "keep",
  description: "keep",
  supportedInterfaces: {
    list: { url: "keep", protocolBinding: "keep", tenant: "scalar", protocolVersion: "keep" },
    required: true,
  },
  provider: { message: { url: "keep", organization: "keep" } },
  version: "keep",
  documentationUrl: "keep",
  capabilities: {
    message: {
      streaming: "keep",
      pushNotifications: "keep",
      extensions: {
        list: { uri: "scalar", description: "scalar", required: "scalar", params: "struct" },
      },
      extendedAgentCard: "keep",
    },
  },
  securitySchemes: { map: securityScheme },
  securityRequirements: { list: securityRequirement },
  defaultInputModes: "keep",
  defaultOutputModes: "keep",
  skills: { list: skill, required: true },
  iconUrl: "keep",
};

const isObject = (v: JsonValue | undefined): v is JsonObject =>
  typeof v === "object" && v !== null && !Array.isArray(v);

/** A scalar at its proto default: the empty string, false or zero. */
const isDefault = (v: JsonValue): boolean => v === "" || v === false || v === 0;

function shaped(value: JsonValue, presence: Presence): JsonValue | undefined {
  if (presence === "keep" || presence === "struct") return value;
  if (presence === "scalar") return isDefault(value) ? undefined : value;
  if (presence === "list") return Array.isArray(value) && value.length === 0 ? undefined : value;
  if (presence === "map")
    return isObject(value) && Object.keys(value).length === 0 ? undefined : value;
  if ("message" in presence) return isObject(value) ? withShape(value, presence.message) : value;
  if ("list" in presence) {
    if (!Array.isArray(value)) return value;
    if (value.length === 0) return presence.required ? value : undefined;
    const inner = presence.list;
    return value.map((item) =>
      typeof inner === "string" ? item : isObject(item) ? withShape(item, inner) : item,
    );
  }
  if (!isObject(value)) return value;
  const entries = Object.entries(value);
  if (entries.length === 0) return undefined;
  const inner = presence.map;
  // A map's values are always present, even when empty (`{"schemes":{"bearer":{}}}`).
  return Object.fromEntries(
    entries.map(([k, v]) => [
      k,
      typeof inner === "string" ? (v as JsonValue) : isObject(v) ? withShape(v, inner) : v,
    ]),
  );
}

/** The fields of `value` the shape names, each as its presence rule says; others as sent. */
function withShape(value: JsonObject, shape: Shape): JsonObject {
  const out: [string, JsonValue][] = [];
  for (const [key, child] of Object.entries(value)) {
    const presence = Object.hasOwn(shape, key) ? shape[key] : undefined;
    const kept = presence === undefined ? child : shaped(child, presence);
    if (kept !== undefined) out.push([key, kept]);
  }
  return ownObject(out);
}

/**
 * An object of exactly these members. `Object.fromEntries` defines each one, where
 * `out[key] = v` would treat a member named `__proto__` (which JSON.parse keeps as an
 * ordinary member) as the object's prototype, so it would vanish from the signed bytes.
 */
const ownObject = (entries: [string, JsonValue][]): JsonObject =>
  Object.fromEntries(entries) as JsonObject;

/**
 * The card as A2A §8.4.1 canonicalizes it before signing: without `signatures`, and without
 * the fields proto3 leaves out at their default (an extension's `required: false`, empty
 * repeated fields that are not REQUIRED, an interface's empty `tenant`). Fields marked
 * REQUIRED or `optional` stay as they are; extension `params` are free JSON, kept whole.
 * Serving this form means a verifier that strips defaults and one that does not both
 * reconstruct the same bytes.
 * @example
 * const served = cardForSigning(cardToV1(card, features));
 */
export function cardForSigning(card: JsonObject): JsonObject {
  const { signatures: _excluded, ...rest } = card;
  return withShape(rest, agentCard);
}

/**
 * The payload a card's signatures are computed over, as A2A §8.4.1 words it: the RFC 8785
 * canonical UTF-8 bytes of `cardForSigning(card)`.
 * @example
 * const payload = cardSigningPayload(await (await fetch(cardUrl)).json());
 */
export function cardSigningPayload(card: JsonObject): Uint8Array {
  return canonicalJsonBytes(cardForSigning(card));
}

/**
 * Drops empty strings, lists and objects and nulls, recursively (false and 0 stay): what
 * the official A2A SDKs (Python, JavaScript) do to a card before canonicalizing it, where
 * the specification keeps REQUIRED fields even when empty.
 */
export function withoutEmpties(value: JsonValue): JsonValue | undefined {
  if (value === null || value === "") return undefined;
  if (Array.isArray(value)) {
    const kept = value.map(withoutEmpties).filter((v): v is JsonValue => v !== undefined);
    return kept.length ? kept : undefined;
  }
  if (typeof value !== "object") return value;
  const out: [string, JsonValue][] = [];
  for (const [key, child] of Object.entries(value)) {
    const kept = withoutEmpties(child);
    if (kept !== undefined) out.push([key, kept]);
  }
  return out.length ? ownObject(out) : undefined;
}

/**
 * The card as Edgelink serves it signed: `cardForSigning` and then `withoutEmpties`, so
 * it holds no proto default and no empty value. Every canonicalization in use (the
 * specification's, the official SDKs', plain JCS of the served JSON) leaves such a card as
 * it is, so each of them rebuilds the bytes that were signed.
 * @example
 * const served = servedSignedForm(cardToV1(card, features));
 */
export function servedSignedForm(card: JsonObject): JsonObject {
  const cleaned = withoutEmpties(cardForSigning(card));
  return cleaned && typeof cleaned === "object" && !Array.isArray(cleaned) ? cleaned : {};
}

/**
 * Every payload a verifier should try for a card: the specification's form, and the
 * official SDKs' (empty values left out) when it differs, so a card signed by either
 * verifies.
 */
export function cardSigningPayloads(card: JsonObject): Uint8Array[] {
  const spec = canonicalJson(cardForSigning(card));
  const sdkForm = withoutEmpties(cardForSigning(card)) ?? {};
  const sdk = canonicalJson(sdkForm);
  const encode = (text: string) => new TextEncoder().encode(text);
  return sdk === spec ? [encode(spec)] : [encode(spec), encode(sdk)];
}

/**
 * The `signatures` of a card, each checked for the shape A2A gives it; anything else is
 * refused with a message naming the index, so a malformed card never reaches JOSE.
 */
export function cardSignaturesOf(card: JsonObject): AgentCardSignature[] {
  const list = card.signatures;
  if (list === undefined) return [];
  if (!Array.isArray(list)) throw new TypeError("signatures must be a list");
  return list.map((item, i) => {
    if (
      !isObject(item) ||
      typeof item.protected !== "string" ||
      typeof item.signature !== "string" ||
      (item.header !== undefined && !isObject(item.header))
    ) {
      throw new TypeError(
        `signatures[${i}] must be an object with string protected and signature (and an object header)`,
      );
    }
    const header = item.header;
    return {
      protected: item.protected,
      signature: item.signature,
      ...(isObject(header) ? { header } : {}),
    };
  });
}
