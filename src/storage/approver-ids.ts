/**
 * The id an approver answers a task by. A task id opens only for its owner (the owner is
 * its associated data), so another principal cannot even name the task's object. When the
 * agent names approvers, each new task also gets this id: the owner, context and task id
 * sealed together with AES-256-GCM, the tenant as associated data. The Worker opens it
 * only for a caller the approver rule accepts, and routes to the owner's object. As a task
 * id does, it ends with the task's key once the object admits the task (`keyedApproverTaskId`):
 * the sealed target then names the task id's sealed part, and the key completes it.
 */
import { base64url } from "jose";
import { LIMITS } from "../protocol/limits";
import type { IdKeys } from "./ids";
import { keyedTaskId, TASK_KEY_SUFFIX_LENGTH, taskIdParts } from "./task-keys";

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

/** Whether `id` has the shape of an approver's id (an owner's task id never starts `a.`). */
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
  // Room is left for the key the object adds.
  return id.length + TASK_KEY_SUFFIX_LENGTH <= LIMITS.taskIdLength ? id : null;
}

/**
 * The approver's id of an admitted task: the Worker's `approverId` with the key the task's
 * id `taskId` carries (see task-keys.ts).
 */
export function keyedApproverTaskId(approverId: string, taskId: string): string {
  const key = taskIdParts(taskId)?.key;
  if (key == null) throw new Error(`task id ${taskId} carries no key`);
  return keyedTaskId(approverId, key);
}

/** The target of an approver's id made in this tenant; null for any other string. */
export async function openApproverTaskId(
  keys: IdKeys,
  tenant: string,
  id: string,
): Promise<ApproverTarget | null> {
  if (!isApproverTaskId(id) || id.length > LIMITS.taskIdLength) return null;
  const parts = taskIdParts(id.slice(PREFIX.length));
  if (!parts) return null;
  let bytes: Uint8Array;
  try {
    bytes = base64url.decode(parts.sealed);
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
    const [owner, contextId, sealed] = value as [string, string, string];
    // An altered key names a row whose id is another: the object finds no task.
    const taskId = parts.key === null ? sealed : keyedTaskId(sealed, parts.key);
    return { owner, contextId, taskId };
  } catch {
    return null;
  }
}
