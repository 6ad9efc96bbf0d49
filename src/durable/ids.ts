/**
 * Task ids name their conversation's Durable Object, so GetTask and CancelTask reach the
 * right object with no lookup: `<base64url(contextId)>.<random>`. Tenants are not in the
 * id; they select a separate object namespace, so a task is invisible under another
 * tenant.
 */

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
  const dot = taskId.lastIndexOf(".");
  if (dot <= 0 || !/^[0-9a-f]{32}$/.test(taskId.slice(dot + 1))) return null;
  return fromBase64Url(taskId.slice(0, dot));
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

/** Opaque ListTasks page token: the sort key of the last task on the previous page. */
export interface Cursor {
  updatedAt: string;
  taskId: string;
}

export function encodeCursor(c: Cursor): string {
  return toBase64Url(JSON.stringify([c.updatedAt, c.taskId]));
}

export function decodeCursor(token: string): Cursor | null {
  const text = fromBase64Url(token);
  if (text === null) return null;
  try {
    const value: unknown = JSON.parse(text);
    if (
      Array.isArray(value) &&
      value.length === 2 &&
      typeof value[0] === "string" &&
      typeof value[1] === "string"
    ) {
      return { updatedAt: value[0], taskId: value[1] };
    }
  } catch {}
  return null;
}
