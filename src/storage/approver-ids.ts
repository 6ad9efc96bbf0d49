/**
 * The id an approver answers a task by. A task id opens only for its owner (the owner is
 * its associated data), so another principal cannot even name the task's object. When the
 * agent names approvers, each new task also gets this id: the owner, context and task id
 * sealed together with AES-256-GCM, the tenant as associated data. The Worker opens it
 * only for a caller the approver rule accepts, and routes to the owner's object.
 */
import { base64url } from "jose";
import { LIMITS } from "../protocol/limits";
import type { IdKeys } from "./ids";

const PREFIX = "a.";
const NONCE_BYTES = 12;
const TAG_BYTES = 16;
const encoder = new TextEncoder();
const decoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false });

/** Where an approver's id leads: the task's owner, its conversation, and the task. */
export interface ApproverTarget {
  owner: string;
  contextId: string;
  taskId: string;
}

const associated = (tenant: string) => encoder.encode(JSON.stringify(["approver", tenant]));

/** Whether `id` has the shape of an approver's id (an owner's task id never has a dot). */
export function isApproverTaskId(id: string): boolean {
  return id.startsWith(PREFIX);
}

/**
 * A new approver's id for a task, or null when it would not fit in a task id's length
 * (a client could not send it back): such a task is decided by its owner alone.
 */
export async function sealApproverTaskId(
  keys: IdKeys,
  tenant: string,
  target: ApproverTarget,
): Promise<string | null> {
  const nonce = crypto.getRandomValues(new Uint8Array(NONCE_BYTES));
  const plain = encoder.encode(JSON.stringify([target.owner, target.contextId, target.taskId]));
  const sealed = await crypto.subtle.encrypt(
    { name: "AES-GCM", iv: nonce, additionalData: associated(tenant) },
    keys.approver,
    plain,
  );
  const bytes = new Uint8Array(NONCE_BYTES + sealed.byteLength);
  bytes.set(nonce);
  bytes.set(new Uint8Array(sealed), NONCE_BYTES);
  const id = `${PREFIX}${base64url.encode(bytes)}`;
  return id.length <= LIMITS.taskIdLength ? id : null;
}

/** The target of an approver's id made in this tenant; null for any other string. */
export async function openApproverTaskId(
  keys: IdKeys,
  tenant: string,
  id: string,
): Promise<ApproverTarget | null> {
  if (!isApproverTaskId(id) || id.length > LIMITS.taskIdLength) return null;
  let bytes: Uint8Array;
  try {
    bytes = base64url.decode(id.slice(PREFIX.length));
  } catch {
    return null;
  }
  if (bytes.byteLength < NONCE_BYTES + TAG_BYTES) return null;
  try {
    const plain = await crypto.subtle.decrypt(
      { name: "AES-GCM", iv: bytes.subarray(0, NONCE_BYTES), additionalData: associated(tenant) },
      keys.approver,
      bytes.subarray(NONCE_BYTES),
    );
    const value = JSON.parse(decoder.decode(plain)) as unknown;
    if (!Array.isArray(value) || value.length !== 3 || !value.every((v) => typeof v === "string")) {
      return null;
    }
    const [owner, contextId, taskId] = value as [string, string, string];
    return { owner, contextId, taskId };
  } catch {
    return null;
  }
}
