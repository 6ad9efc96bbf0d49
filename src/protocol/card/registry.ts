import * as z from "zod";
import { fromBase64url, toBase64url } from "../base64url";
import { invalidParams } from "../errors";
import { JsonObject, type JsonValue } from "../json";
import { AgentRole, PROFILE_EXTENSION } from "./agent-card";

/**
 * What an agent registry holds at most, each settable in `defineRegistry({ limits })`.
 * Every list it keeps or answers is bounded by one of these.
 */
export interface RegistryLimits {
  /** Live entries per tenant's registry; a registration past it is refused (409). */
  maxAgents: number;
  /** Characters of a registered card's JSON. */
  maxCardChars: number;
  /** Tags one card may carry (its own and its skills' together). */
  maxTags: number;
  /** The shortest and longest time-to-live a registration may ask for. */
  minTtlSeconds: number;
  maxTtlSeconds: number;
  /** The time-to-live of a registration that names none. */
  defaultTtlSeconds: number;
  /** Entries per discovery page at most (and the default page size). */
  maxPageSize: number;
}

export const REGISTRY_LIMITS: RegistryLimits = {
  maxAgents: 1_000,
  maxCardChars: 64 * 1024,
  maxTags: 64,
  minTtlSeconds: 5,
  maxTtlSeconds: 86_400,
  defaultTtlSeconds: 60,
  maxPageSize: 100,
};

/** The registry's own bounds on one query: tags asked for at once, and a name's length. */
export const MAX_QUERY_TAGS = 16;
const MAX_NAME_CHARS = 200;
const MAX_TAG_CHARS = 100;
const MAX_URL_CHARS = 2048;

/** One live registration, as the registry answers it. */
export interface RegistryEntry {
  /** Stable for the card's URL: registering the same URL again replaces the entry. */
  id: string;
  name: string;
  url: string;
  role: AgentRole;
  /** Lowercase, the card's own tags and its skills' tags. */
  tags: string[];
  /** The card as it was registered. */
  card: JsonObject;
  registeredAt: string;
  expiresAt: string;
  ttlSeconds: number;
}

/**
 * A registration's body: the agent's card (as it serves it), how long it lives, and for a
 * signed card the proof that the registrant holds its key (see `registrationProof`).
 */
export const RegisterRequest = z.object({
  card: JsonObject,
  ttlSeconds: z.number().int("ttlSeconds must be a whole number of seconds").optional(),
  proof: z
    .string()
    .min(1)
    .max(8 * 1024, "is longer than a registration proof may be (8192 characters)")
    .optional(),
});
export type RegisterRequest = z.infer<typeof RegisterRequest>;

/**
 * The checks of a registration that need nothing but its body: the card's size and the
 * TTL's range. Done before the registry reads the agent's card, and again by the object.
 * @throws A2AError InvalidParams naming `card` or `ttlSeconds`.
 */
export function checkRegistration(
  card: JsonObject,
  ttlSeconds: number | undefined,
  limits: RegistryLimits,
): { json: string; ttl: number } {
  const json = JSON.stringify(card);
  if (json.length > limits.maxCardChars) {
    throw invalidParams(
      [{ path: [], message: `is ${json.length} characters of JSON, over ${limits.maxCardChars}` }],
      "card",
    );
  }
  const ttl = ttlSeconds ?? limits.defaultTtlSeconds;
  if (!Number.isInteger(ttl) || ttl < limits.minTtlSeconds || ttl > limits.maxTtlSeconds) {
    throw invalidParams(
      [
        {
          path: [],
          message: `must be from ${limits.minTtlSeconds} to ${limits.maxTtlSeconds} seconds`,
        },
      ],
      "ttlSeconds",
    );
  }
  return { json, ttl };
}

/** What the registry indexes of a card. */
export interface CardFacts {
  name: string;
  url: string;
  role: AgentRole;
  tags: string[];
}

const text = (v: JsonValue | undefined): string | undefined =>
  typeof v === "string" ? v : undefined;
const objects = (v: JsonValue | undefined): JsonObject[] =>
  Array.isArray(v)
    ? v.filter((x): x is JsonObject => typeof x === "object" && x !== null && !Array.isArray(x))
    : [];

/**
 * Reads what discovery needs from a card in any shape an agent serves: A2A v1 (its first
 * `supportedInterfaces` URL; role and tags in Edgelink's profile extension), A2A v0.3
 * (`url`), or Edgelink's own model (`url`, `role`, `tags`). Tags are the card's and its
 * skills', lowercase and once each; the URL in its canonical form. Refuses what a
 * directory cannot list, naming the field.
 */
export function cardFacts(card: JsonObject, limits: RegistryLimits): CardFacts {
  const fail = (field: string, message: string): never => {
    throw invalidParams([{ path: field.split("."), message }], "card");
  };
  const name = text(card.name)?.trim() ?? "";
  if (name === "") fail("name", "is required: a card has a non-empty name");
  if (name.length > MAX_NAME_CHARS) fail("name", `is longer than ${MAX_NAME_CHARS} characters`);
  const caps = card.capabilities;
  const extensions =
    caps && typeof caps === "object" && !Array.isArray(caps) ? objects(caps.extensions) : [];
  const profile = extensions.find((e) => e.uri === PROFILE_EXTENSION)?.params;
  const params = profile && typeof profile === "object" && !Array.isArray(profile) ? profile : {};
  const url = text(objects(card.supportedInterfaces)[0]?.url) ?? text(card.url);
  if (url === undefined) {
    fail(
      "url",
      "is required: the card names where the agent is served (url or supportedInterfaces)",
    );
  }
  const at = url as string;
  if (at.length > MAX_URL_CHARS || !/^https?:\/\//i.test(at) || !URL.canParse(at)) {
    fail("url", `must be an absolute http(s) URL of at most ${MAX_URL_CHARS} characters`);
  }
  const declaredRole = params.role ?? card.role;
  const role = AgentRole.safeParse(declaredRole ?? "worker");
  if (!role.success) fail("role", `must be one of ${AgentRole.options.join(", ")}`);
  const tags = new Set<string>();
  const addTags = (list: JsonValue | undefined, field: string) => {
    if (list === undefined) return;
    if (!Array.isArray(list)) return fail(field, "must be a list of strings");
    for (const tag of list) {
      if (typeof tag !== "string" || tag.trim() === "" || tag.length > MAX_TAG_CHARS) {
        fail(field, `must hold non-empty strings of at most ${MAX_TAG_CHARS} characters`);
      }
      tags.add((tag as string).trim().toLowerCase());
    }
  };
  addTags(params.tags ?? card.tags, "tags");
  objects(card.skills).forEach((skill, i) => {
    addTags(skill.tags, `skills.${i}.tags`);
  });
  if (tags.size > limits.maxTags) fail("tags", `holds more than ${limits.maxTags} distinct tags`);
  // In its canonical form (lowercase host, a path of at least "/"), so one agent written
  // two ways is one entry.
  return { name, url: new URL(at).href, role: role.data as AgentRole, tags: [...tags].sort() };
}

/** An entry's id: the first 128 bits of SHA-256 of its URL, base64url. */
export async function registryEntryId(url: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(url));
  return toBase64url(new Uint8Array(digest, 0, 16));
}

/** A discovery query: every filter given must match; `tags` must all be on the card. */
export interface DiscoverQuery {
  name?: string;
  role?: AgentRole;
  tags: string[];
  pageSize: number;
  /** Where the previous page ended (opaque to clients). */
  after: { name: string; id: string } | null;
}

/** A page of live entries, by name (case-insensitive), then id. */
export interface DiscoverPage {
  agents: RegistryEntry[];
  nextPageToken: string;
}

export function encodeRegistryToken(after: { name: string; id: string }): string {
  return toBase64url(JSON.stringify([after.name, after.id]));
}

function decodeRegistryToken(token: string): { name: string; id: string } | null {
  if (token.length > 1000) return null;
  try {
    const bytes = fromBase64url(token);
    const json = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(bytes);
    const value: unknown = JSON.parse(json);
    if (
      Array.isArray(value) &&
      value.length === 2 &&
      typeof value[0] === "string" &&
      typeof value[1] === "string"
    ) {
      return { name: value[0], id: value[1] };
    }
  } catch {}
  return null;
}

/**
 * A discovery query from a URL's search parameters: `name`, `role`, `tag` (repeated: all
 * must match), `pageSize`, `pageToken`. Refuses a bad one naming the parameter.
 */
export function discoverQuery(params: URLSearchParams, limits: RegistryLimits): DiscoverQuery {
  const fail = (field: string, message: string): never => {
    throw invalidParams([{ path: [field], message }], "");
  };
  const known = new Set(["name", "role", "tag", "pageSize", "pageToken"]);
  for (const key of params.keys()) {
    if (!known.has(key)) fail(key, `is not a discovery parameter (${[...known].join(", ")})`);
  }
  const one = (key: string): string | undefined => {
    const all = params.getAll(key);
    if (all.length > 1) fail(key, "is given more than once");
    return all[0];
  };
  const name = one("name")?.trim();
  if (name !== undefined && (name === "" || name.length > MAX_NAME_CHARS)) {
    fail("name", `must be 1 to ${MAX_NAME_CHARS} characters`);
  }
  const roleText = one("role");
  let role: AgentRole | undefined;
  if (roleText !== undefined) {
    const parsed = AgentRole.safeParse(roleText);
    if (!parsed.success) fail("role", `must be one of ${AgentRole.options.join(", ")}`);
    role = parsed.data;
  }
  const tags = [...new Set(params.getAll("tag").map((t) => t.trim().toLowerCase()))];
  if (tags.length > MAX_QUERY_TAGS) fail("tag", `is given more than ${MAX_QUERY_TAGS} times`);
  if (tags.some((t) => t === "" || t.length > MAX_TAG_CHARS)) {
    fail("tag", `must be 1 to ${MAX_TAG_CHARS} characters`);
  }
  const sizeText = one("pageSize");
  let pageSize = limits.maxPageSize;
  if (sizeText !== undefined) {
    pageSize = Number(sizeText);
    if (!/^\d+$/.test(sizeText) || pageSize < 1 || pageSize > limits.maxPageSize) {
      fail("pageSize", `must be a whole number from 1 to ${limits.maxPageSize}`);
    }
  }
  const token = one("pageToken");
  let after: DiscoverQuery["after"] = null;
  if (token !== undefined && token !== "") {
    after = decodeRegistryToken(token);
    if (after === null) fail("pageToken", "is not a token this registry issued");
  }
  return {
    ...(name === undefined ? {} : { name: name.toLowerCase() }),
    ...(role === undefined ? {} : { role }),
    tags,
    pageSize,
    after,
  };
}
