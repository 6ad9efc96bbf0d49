/**
 * Task ids name their conversation's Durable Object, so GetTask and CancelTask reach the
 * right object with no lookup: `<base64url(contextId)>.<random>`. Tenants are not in the
 * id; they select a separate object namespace, so a task is invisible under another
 * tenant.
 */

import { A2AError } from "../models/errors";

const encoder = new TextEncoder();
const decoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false });

/** Longest client-supplied contextId accepted. */
export const MAX_CONTEXT_ID_LENGTH = 256;

function toBase64Url(text: string): string {
  let binary = "";
  for (const byte of encoder.encode(text)) binary += String.fromCharCode(byte);
  return btoa(binary).replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
}

function fromBase64Url(encoded: string): string | null {
  if (!/^[A-Za-z0-9_-]+$/.test(encoded)) return null;
  try {
    const binary = atob(encoded.replaceAll("-", "+").replaceAll("_", "/"));
    return decoder.decode(Uint8Array.from(binary, (c) => c.charCodeAt(0)));
  } catch {
    return null;
  }
}

export function newTaskId(contextId: string): string {
  return `${toBase64Url(contextId)}.${crypto.randomUUID().replaceAll("-", "")}`;
}

/** The context a task id belongs to, or null when the id is not one of ours. */
export function contextOfTaskId(taskId: string): string | null {
  const [encoded, random] = taskId.split(".");
  if (!encoded || !random || !/^[0-9a-f]{32}$/.test(random)) return null;
  return fromBase64Url(encoded);
}

/**
 * Signed task ids: `<base64url(contextId)>.<random>.<mac>`, the mac an HMAC-SHA256 (first
 * 128 bits) of the rest with the tenant and owner, keyed by the `EDGELINK_ID_KEY` secret.
 * A made-up id, or another caller's, fails the check in the Worker: refused before any
 * Durable Object is reached, so it can neither read nor create storage.
 */
export const ID_KEY_BINDING = "EDGELINK_ID_KEY";

const keys = new Map<string, Promise<CryptoKey>>();
let ephemeral: Promise<CryptoKey> | null = null;

function hmacKey(secret: BufferSource): Promise<CryptoKey> {
  return crypto.subtle.importKey("raw", secret, { name: "HMAC", hash: "SHA-256" }, false, [
    "sign",
    "verify",
  ]);
}

/**
 * The key task ids are signed with: the `EDGELINK_ID_KEY` secret; under `wrangler dev`
 * (served from localhost) an ephemeral one when it is not set; deployed without it, a
 * clear error.
 */
export function idKey(env: unknown, origin: string): Promise<CryptoKey> {
  const secret = (env as Record<string, unknown>)[ID_KEY_BINDING];
  if (typeof secret === "string" && secret.length >= 32) {
    let key = keys.get(secret);
    if (!key) {
      key = hmacKey(encoder.encode(secret));
      keys.set(secret, key);
    }
    return key;
  }
  let local = false;
  try {
    local = ["localhost", "127.0.0.1", "[::1]"].includes(new URL(origin).hostname);
  } catch {}
  if (!local) {
    throw new A2AError(
      "Internal",
      `${ID_KEY_BINDING} is not set (or shorter than 32 characters): task ids are signed with it. ` +
        `Run: openssl rand -base64 48 | npx wrangler secret put ${ID_KEY_BINDING}`,
    );
  }
  ephemeral ??= hmacKey(crypto.getRandomValues(new Uint8Array(32)));
  return ephemeral;
}

async function mac(key: CryptoKey, scope: IdScope, body: string): Promise<string> {
  const data = encoder.encode(`${scope.tenant}\u0000${scope.owner}\u0000${body}`);
  const signature = new Uint8Array(await crypto.subtle.sign("HMAC", key, data));
  let binary = "";
  for (const byte of signature.subarray(0, 16)) binary += String.fromCharCode(byte);
  return btoa(binary).replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
}

/** Whose ids these are: a signature is valid only for the tenant and owner it was made for. */
export interface IdScope {
  tenant: string;
  owner: string;
}

/** A new signed task id in `contextId`. */
export async function signedTaskId(key: CryptoKey, scope: IdScope, contextId: string) {
  const body = newTaskId(contextId);
  return `${body}.${await mac(key, scope, body)}`;
}

/**
 * The context of a task id, if its signature is valid for this tenant and owner (or it
 * is an unsigned id from before signing and `acceptUnsigned` is on); null otherwise.
 */
export async function verifiedContextOf(
  key: CryptoKey,
  scope: IdScope,
  taskId: string,
  acceptUnsigned = false,
): Promise<string | null> {
  const parts = taskId.split(".");
  if (parts.length === 2) return acceptUnsigned ? contextOfTaskId(taskId) : null;
  if (parts.length !== 3) return null;
  const body = `${parts[0]}.${parts[1]}`;
  const expected = encoder.encode(await mac(key, scope, body));
  const given = encoder.encode(parts[2] ?? "");
  if (given.byteLength !== expected.byteLength) return null;
  if (!crypto.subtle.timingSafeEqual(given, expected)) return null;
  return contextOfTaskId(body);
}

/**
 * Name of the Durable Object holding one conversation of one owner in one tenant. The
 * owner (the principal's subject) is part of the name, so another caller's task or
 * context id leads to another, empty object: ownership needs no lookup. The anonymous
 * owner "" keeps the names objects had before owners existed.
 */
export function contextObjectName(tenant: string, contextId: string, owner = ""): string {
  if (owner === "") return `${encodeURIComponent(tenant)}/${contextId}`;
  // encodeURIComponent escapes ":", so "o:" never begins an anonymous name.
  return `o:${encodeURIComponent(tenant)}/${encodeURIComponent(owner)}/${contextId}`;
}

/** Name of the Durable Object holding one owner's cross-context task index in a tenant. */
export function indexObjectName(tenant: string, owner = ""): string {
  const base = `index/${encodeURIComponent(tenant)}`;
  return owner === "" ? base : `${base}/${encodeURIComponent(owner)}`;
}

/**
 * Opaque ListTasks page token: the sort key of the last task on the previous page, and the
 * listing's snapshot (the table's change counter when its first page was read), so later
 * pages keep the order the first one saw while tasks change. Tokens from before snapshots
 * existed have none (null): they page the table as it is.
 */
export interface Cursor {
  updatedAt: string;
  taskId: string;
  snapshot: number | null;
}

export function encodeCursor(c: Cursor): string {
  return toBase64Url(JSON.stringify([c.updatedAt, c.taskId, c.snapshot]));
}

export function decodeCursor(token: string): Cursor | null {
  const text = fromBase64Url(token);
  if (text === null) return null;
  try {
    const value: unknown = JSON.parse(text);
    if (
      Array.isArray(value) &&
      (value.length === 2 ||
        (value.length === 3 && Number.isSafeInteger(value[2]) && value[2] >= 0)) &&
      typeof value[0] === "string" &&
      typeof value[1] === "string"
    ) {
      return {
        updatedAt: value[0],
        taskId: value[1],
        snapshot: value.length === 3 ? (value[2] as number) : null,
      };
    }
  } catch {}
  return null;
}
