/**
 * Task ids name their conversation's Durable Object, so GetTask and CancelTask reach the
 * right object with no lookup: they carry the context id, sealed (see `sealedTaskId`).
 */

import { base64url } from "jose";
import { A2AError } from "../protocol/errors";
import { LIMITS } from "../protocol/limits";
import { taskIdParts } from "./task-keys";

const encoder = new TextEncoder();
const decoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false });

/** Longest client-supplied contextId accepted. */
export const MAX_CONTEXT_ID_LENGTH = LIMITS.idLength;

function fromBase64Url(encoded: string): string | null {
  if (!/^[A-Za-z0-9_-]+$/.test(encoded)) return null;
  try {
    const binary = atob(encoded.replaceAll("-", "+").replaceAll("_", "/"));
    return decoder.decode(Uint8Array.from(binary, (c) => c.charCodeAt(0)));
  } catch {
    return null;
  }
}

/**
 * Every id this agent issues is keyed by the `EDGELINK_ID_KEY` secret. One secret, keys
 * for separate jobs derived from it with HKDF (so one never serves as another).
 */
export const ID_KEY_BINDING = "EDGELINK_ID_KEY";

/** How to set the key, for the errors that ask for it. */
export const ID_KEY_FIX = `Run: openssl rand -base64 48 | npx wrangler secret put ${ID_KEY_BINDING} (locally: ${ID_KEY_BINDING}=... in .dev.vars)`;

/** The keys ids are made and checked with, imported once per secret (per isolate). */
export interface IdKeys {
  /** AES-GCM key of task ids (their routing token). */
  task: CryptoKey;
  /** HMAC key of the context ids Edgelink issues. */
  context: CryptoKey;
  /** AES-GCM key of the ids an approver answers a task by (see approver-ids.ts). */
  approver: CryptoKey;
}

const cache = new Map<string, Promise<IdKeys>>();
let ephemeral: Promise<IdKeys> | null = null;

async function deriveKeys(secret: Uint8Array): Promise<IdKeys> {
  const hmac = { name: "HMAC", hash: "SHA-256" };
  const root = await crypto.subtle.importKey("raw", secret, "HKDF", false, ["deriveKey"]);
  const hkdf = (info: string) => ({
    name: "HKDF",
    hash: "SHA-256",
    salt: new Uint8Array(0),
    info: encoder.encode(info),
  });
  const [task, context, approver] = await Promise.all([
    crypto.subtle.deriveKey(
      hkdf("edgelink task id v2"),
      root,
      { name: "AES-GCM", length: 256 },
      false,
      ["encrypt", "decrypt"],
    ),
    crypto.subtle.deriveKey(hkdf("edgelink context id v1"), root, { ...hmac, length: 256 }, false, [
      "sign",
      "verify",
    ]),
    crypto.subtle.deriveKey(
      hkdf("edgelink approver task id v1"),
      root,
      { name: "AES-GCM", length: 256 },
      false,
      ["encrypt", "decrypt"],
    ),
  ]);
  return { task, context, approver };
}

/**
 * The last origin checked (one per deployment in practice), so a request parses no URL:
 * the text before a URL's path, so that a request's URL and the origin made from it
 * (both asked about for one message) share it.
 */
let checkedOrigin: string | null = null;
let checkedLocal = false;

/** Whether `origin` (or any URL) is this machine's: `wrangler dev`, not a deployment. */
export function isLocal(origin: string): boolean {
  const end = origin.indexOf("/", origin.indexOf("//") + 2);
  const head = end < 0 ? origin : origin.slice(0, end);
  if (head !== checkedOrigin) {
    let local = false;
    try {
      local = ["localhost", "127.0.0.1", "[::1]"].includes(new URL(head).hostname);
    } catch {}
    checkedOrigin = head;
    checkedLocal = local;
  }
  return checkedLocal;
}

/** Where a local run keeps the secret it generated: the object that answers `localIdSecret`. */
export interface LocalSecretSource {
  localIdSecret(): Promise<string>;
}

/** What finds that object (the request's routing), asked only when a local run needs it. */
export interface LocalSecretHolder {
  localSecretSource(): LocalSecretSource;
}

/** The name of the index namespace's object that keeps a local run's generated secret. */
export const LOCAL_ID_SECRET_OBJECT = "local-dev/id-secret";

/**
 * The keys ids are made with: from the `EDGELINK_ID_KEY` secret; deployed without it, a
 * clear error. Under `wrangler dev` (served from localhost) without it, from a secret
 * generated once and kept with the local state (`local`, the index namespace's object that
 * keeps it), so ids made before a restart or a reload still open afterwards.
 */
export function idKeys(env: unknown, origin: string, local?: LocalSecretHolder): Promise<IdKeys> {
  const secret = (env as Record<string, unknown>)[ID_KEY_BINDING];
  if (typeof secret === "string" && secret.length >= 32) return keysOf(secret);
  if (!isLocal(origin)) {
    throw new A2AError(
      "Internal",
      `${ID_KEY_BINDING} is not set (or shorter than 32 characters): ids are made with it. ${ID_KEY_FIX}`,
    );
  }
  if (!local) {
    // Nowhere to keep one: ids live as long as this isolate.
    ephemeral ??= deriveKeys(crypto.getRandomValues(new Uint8Array(32)));
    return ephemeral;
  }
  if (!localKeys) {
    const pending: Promise<IdKeys> = local
      .localSecretSource()
      .localIdSecret()
      .then(keysOf)
      .then((keys) => {
        // Unless forgotten meanwhile (a test's restart): then the next request asks again.
        if (localKeys === pending) localReady = keys;
        return keys;
      })
      .catch((error: unknown) => {
        localKeys = null;
        throw error;
      });
    localKeys = pending;
  }
  return localKeys;
}

let localKeys: Promise<IdKeys> | null = null;

/**
 * The keys `idKeys` would answer a caller that passes `local`, once they are derived;
 * null before (then ask `idKeys`). A request after the first takes them without waiting
 * on a promise.
 */
export function readyIdKeys(env: unknown, origin: string): IdKeys | null {
  const secret = (env as Record<string, unknown>)[ID_KEY_BINDING];
  if (typeof secret === "string" && secret.length >= 32) return derived.get(secret) ?? null;
  return isLocal(origin) ? localReady : null;
}

/** Keys derived, by secret; and the local run's generated secret's, once known. */
const derived = new Map<string, IdKeys>();
let localReady: IdKeys | null = null;

function keysOf(secret: string): Promise<IdKeys> {
  let keys = cache.get(secret);
  if (!keys) {
    keys = deriveKeys(encoder.encode(secret)).then((made) => {
      derived.set(secret, made);
      return made;
    });
    cache.set(secret, keys);
  }
  return keys;
}

/** Forgets the local run's keys, as a restarted isolate would (tests). */
export function forgetLocalIdKeys(): void {
  localKeys = null;
  localReady = null;
  ephemeral = null;
}

/** A new secret for a local run: 48 random bytes, base64url (64 characters). */
export function newLocalIdSecret(): string {
  return base64url.encode(crypto.getRandomValues(new Uint8Array(48)));
}

/** Whose ids these are: an id is valid only for the tenant and owner it was made for. */
export interface IdScope {
  tenant: string;
  owner: string;
}

function base64UrlToBytes(encoded: string): Uint8Array | null {
  if (!/^[A-Za-z0-9_-]*$/.test(encoded) || encoded.length % 4 === 1) return null;
  let binary: string;
  try {
    binary = atob(encoded.replaceAll("-", "+").replaceAll("_", "/"));
  } catch {
    return null;
  }
  // A plain loop: `Uint8Array.from` with a map function costs several times more.
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

/** Per kind of id (two), the last scope's bytes: a Worker mostly acts for one caller. */
const lastScopes = new Map<string, { tenant: string; owner: string; bytes: Uint8Array }>();

/** Tenant and owner, bound into every id so that it is valid for them alone. */
function scopeBytes(kind: "task" | "context", scope: IdScope): Uint8Array {
  const last = lastScopes.get(kind);
  if (last && last.tenant === scope.tenant && last.owner === scope.owner) return last.bytes;
  // WebCrypto copies its inputs when called, so one array serves every call.
  const bytes = encoder.encode(JSON.stringify([kind, scope.tenant, scope.owner]));
  lastScopes.set(kind, { tenant: scope.tenant, owner: scope.owner, bytes });
  return bytes;
}

const NONCE_BYTES = 12;
const TAG_BYTES = 16;
/** The longest task id a valid context id can make: anything longer is refused unread. */
export const MAX_TASK_ID_LENGTH = LIMITS.taskIdLength;

/**
 * A new task id in `contextId`: a routing token, the context id sealed with AES-256-GCM
 * (a random 96-bit nonce, the tenant and owner as associated data), base64url. It
 * reveals nothing, and the Worker opens it to find the task's conversation object with
 * no lookup; a made-up or altered id, or another caller's, does not open.
 */
export function sealedTaskId(keys: IdKeys, scope: IdScope, contextId: string): Promise<string> {
  const nonce = crypto.getRandomValues(new Uint8Array(NONCE_BYTES));
  // Not async: the cipher's own promise is the only one a new task's id waits on.
  return crypto.subtle
    .encrypt(
      { name: "AES-GCM", iv: nonce, additionalData: scopeBytes("task", scope) },
      keys.task,
      encoder.encode(contextId),
    )
    .then((sealed) => {
      const id = new Uint8Array(NONCE_BYTES + sealed.byteLength);
      id.set(nonce);
      id.set(new Uint8Array(sealed), NONCE_BYTES);
      return base64url.encode(id);
    });
}

async function openTaskId(keys: IdKeys, scope: IdScope, taskId: string) {
  const bytes = base64UrlToBytes(taskId);
  if (!bytes || bytes.byteLength < NONCE_BYTES + TAG_BYTES) return null;
  try {
    const plain = await crypto.subtle.decrypt(
      {
        name: "AES-GCM",
        iv: bytes.subarray(0, NONCE_BYTES),
        additionalData: scopeBytes("task", scope),
      },
      keys.task,
      bytes.subarray(NONCE_BYTES),
    );
    return decoder.decode(plain);
  } catch {
    return null;
  }
}

/**
 * The context of a task id (its sealed part, and the row key the object added; see
 * task-keys.ts), if it is valid for this tenant and owner; null otherwise (any id that does not open: made up, altered, another caller's, or of a development build's formats, which
 * are not read).
 */
export async function verifiedContextOf(
  keys: IdKeys,
  scope: IdScope,
  taskId: string,
): Promise<string | null> {
  if (taskId.length > MAX_TASK_ID_LENGTH) return null;
  // The key after the sealed part is checked by the object (the row's id must be the
  // whole id); here it must only be well formed.
  const parts = taskIdParts(taskId);
  return parts ? openTaskId(keys, scope, parts.sealed) : null;
}

/**
 * Context ids Edgelink issues: `c.` and 32 base64url characters, a random 96-bit value and
 * the first 96 bits of its HMAC with the tenant and owner. Client-chosen context ids are
 * anything else; one of exactly this shape that does not verify is forged.
 */
const ISSUED_CONTEXT = /^c\.[A-Za-z0-9_-]{32}$/;
const CONTEXT_RANDOM_BYTES = 12;
const CONTEXT_MAC_BYTES = 12;

async function contextMac(keys: IdKeys, scope: IdScope, random: Uint8Array) {
  const scoped = scopeBytes("context", scope);
  const data = new Uint8Array(scoped.byteLength + random.byteLength);
  data.set(scoped);
  data.set(random, scoped.byteLength);
  const mac = await crypto.subtle.sign("HMAC", keys.context, data);
  return new Uint8Array(mac, 0, CONTEXT_MAC_BYTES);
}

/** A new context id, issued to this tenant and owner. */
export async function issuedContextId(keys: IdKeys, scope: IdScope): Promise<string> {
  const random = crypto.getRandomValues(new Uint8Array(CONTEXT_RANDOM_BYTES));
  const id = new Uint8Array(CONTEXT_RANDOM_BYTES + CONTEXT_MAC_BYTES);
  id.set(random);
  id.set(await contextMac(keys, scope, random), CONTEXT_RANDOM_BYTES);
  return `c.${base64url.encode(id)}`;
}

/** Whether a context id has the shape of one Edgelink issues (then it must verify). */
export function looksIssued(contextId: string): boolean {
  return ISSUED_CONTEXT.test(contextId);
}

/** Context ids that verified, per key set, most recent last (a follow-up skips the MAC). */
const verifiedContexts = new WeakMap<IdKeys, Map<string, true>>();
/** Verified context ids remembered per isolate and key set. */
export const VERIFIED_CONTEXTS_KEPT = 4096;

/**
 * Only ids that verified are remembered, under exactly the tenant, owner and keys they
 * verified for (lengths first, so no two scopes make the same key).
 */
const verifiedKey = (scope: IdScope, contextId: string) =>
  `${scope.tenant.length}:${scope.tenant}${scope.owner.length}:${scope.owner}${contextId}`;

/**
 * Whether this context id verified for this tenant, owner and keys before (and is still
 * remembered): `verifyContextId`'s answer without its MAC or a promise.
 */
export function verifiedBefore(keys: IdKeys, scope: IdScope, contextId: string): boolean {
  const known = verifiedContexts.get(keys);
  const key = verifiedKey(scope, contextId);
  if (!known?.has(key)) return false;
  known.delete(key);
  known.set(key, true);
  return true;
}

/** Whether an issued-looking context id was issued by this agent to this tenant and owner. */
export async function verifyContextId(
  keys: IdKeys,
  scope: IdScope,
  contextId: string,
): Promise<boolean> {
  if (!looksIssued(contextId)) return false;
  if (verifiedBefore(keys, scope, contextId)) return true;
  const key = verifiedKey(scope, contextId);
  let known = verifiedContexts.get(keys);
  const bytes = base64UrlToBytes(contextId.slice(2));
  if (!bytes || bytes.byteLength !== CONTEXT_RANDOM_BYTES + CONTEXT_MAC_BYTES) return false;
  const expected = await contextMac(keys, scope, bytes.slice(0, CONTEXT_RANDOM_BYTES));
  if (!crypto.subtle.timingSafeEqual(bytes.subarray(CONTEXT_RANDOM_BYTES), expected)) return false;
  if (!known) {
    known = new Map();
    verifiedContexts.set(keys, known);
  }
  known.set(key, true);
  if (known.size > VERIFIED_CONTEXTS_KEPT) known.delete(known.keys().next().value as string);
  return true;
}

/**
 * Name of the Durable Object holding one conversation of one owner in one tenant. The
 * owner (`ownerOf` the principal: its scheme, issuer and subject) is part of the name, so
 * another caller's task or context id leads to another, empty object: ownership needs no
 * lookup. The anonymous owner "" keeps the names objects had before owners existed.
 */
export function contextObjectName(tenant: string, contextId: string, owner = ""): string {
  if (owner === "") return `${encodeURIComponent(tenant)}/${contextId}`;
  // encodeURIComponent escapes ":", so "o:" never begins an anonymous name.
  return `o:${encodeURIComponent(tenant)}/${encodeURIComponent(owner)}/${contextId}`;
}

/**
 * Name of the Durable Object holding one shard of one owner's cross-context task index in
 * a tenant. An index of one shard keeps the name the index had before shards existed; the
 * others carry their number and the count, so a set of shards of one count never reads
 * rows written under another (see `limits.indexShards`).
 */
export function indexObjectName(tenant: string, owner = "", shard = 0, shards = 1): string {
  const base = `index/${encodeURIComponent(tenant)}`;
  const named = owner === "" ? base : `${base}/${encodeURIComponent(owner)}`;
  // encodeURIComponent escapes "#": no tenant or owner makes a name with one.
  return shards === 1 ? named : `${named}#${shard}.${shards}`;
}

/**
 * The index shard a conversation's rows go to: FNV-1a (32 bits) of its context id's UTF-8
 * bytes, modulo the count. Stable across isolates and releases (changing it would send a
 * conversation's later rows to another shard than its earlier ones), and every task of a
 * conversation goes to one shard, so one task's updates stay ordered in one object.
 */
export function indexShardOf(contextId: string, shards: number): number {
  let hash = 0x811c9dc5;
  for (const byte of encoder.encode(contextId)) {
    hash ^= byte;
    hash = Math.imul(hash, 0x01000193);
  }
  return (hash >>> 0) % shards;
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
  /** The last task's place in a listing ordered by its table's sequence (a conversation's). */
  place?: number;
}

export function encodeCursor(c: Cursor): string {
  const fields: unknown[] = [c.updatedAt, c.taskId, c.snapshot];
  if (c.place !== undefined) fields.push(c.place);
  return base64url.encode(JSON.stringify(fields));
}

export function decodeCursor(token: string): Cursor | null {
  const text = fromBase64Url(token);
  if (text === null) return null;
  try {
    const value: unknown = JSON.parse(text);
    if (
      Array.isArray(value) &&
      (value.length === 2 ||
        (value.length >= 3 &&
          value.length <= 4 &&
          Number.isSafeInteger(value[2]) &&
          value[2] >= 0 &&
          (value.length === 3 || (Number.isSafeInteger(value[3]) && value[3] >= 0)))) &&
      typeof value[0] === "string" &&
      typeof value[1] === "string"
    ) {
      const cursor: Cursor = {
        updatedAt: value[0],
        taskId: value[1],
        snapshot: value.length >= 3 ? (value[2] as number) : null,
      };
      if (value.length === 4) cursor.place = value[3] as number;
      return cursor;
    }
  } catch {}
  return null;
}

/** Which tenant and conversation an object holds; sent with every call. */
export interface Scope {
  tenant: string;
  contextId: string;
  /** The principal owning the conversation ("" when the agent has no auth). */
  owner?: string;
  /** The id a new task gets: sealed by the Worker, which holds the id key (`sealedTaskId`). */
  newTaskId?: string;
  /** The id approvers answer a new task by, when the agent names approvers (`sealApproverTaskId`). */
  newApproverTaskId?: string;
  /**
   * Set when the caller is not the owner but an approver (`ownerOf` of it): the object
   * then takes from it only a decision on a pending approval.
   */
  approver?: string;
  /** The caller's trace context (a `TraceCarrier`), when tracing is on. */
  trace?: string;
  /** Set when the inspector is on for this request: the object then records task steps. */
  inspector?: true;
}
