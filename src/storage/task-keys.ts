/**
 * A task id names its row. The Worker seals the routing part (`sealedTaskId`: base64url,
 * never a dot); the conversation object, when it admits the task, appends `.` and the
 * row's conversation-local integer `key` in decimal. The object finds a task by that key
 * (a seek on the table's rowid, no index of ids to write per task) and then requires the
 * row's stored id to equal the whole id presented, so the suffix needs no seal of its own:
 * an altered one names another row, or none, whose id differs.
 *
 * Ids issued before the suffix existed (conversation schema version 8) have none; their
 * keys are kept in `task_ids`, read only for an id without a dot.
 */

/** Between the sealed part and the key: not in base64url, unescaped in paths and headers. */
export const TASK_KEY_SEPARATOR = ".";

/** The most digits a key has: every key up to 10^15 - 1 is a safe integer. */
const KEY_DIGITS = 15;
const KEY_SUFFIX = /^[1-9][0-9]{0,14}$/;

/** The longest suffix a task id carries: the separator and the key's digits. */
export const TASK_KEY_SUFFIX_LENGTH = TASK_KEY_SEPARATOR.length + KEY_DIGITS;

/**
 * The id of a task whose sealed part is `sealed` and whose row is `key`.
 *
 * @example
 * ```ts
 * keyedTaskId("q8Zk3...", 42); // "q8Zk3....42"
 * ```
 */
export function keyedTaskId(sealed: string, key: number): string {
  if (!Number.isSafeInteger(key) || key < 1 || String(key).length > KEY_DIGITS) {
    throw new RangeError(`a task key is an integer from 1 to ${KEY_DIGITS} digits, not ${key}`);
  }
  // Joined, not concatenated: JSON.stringify's fast path takes no concatenated string.
  return [sealed, TASK_KEY_SEPARATOR, String(key)].join("");
}

/** An id split at its separator: the sealed part, and the key (null when it has none). */
export interface TaskIdParts {
  sealed: string;
  key: number | null;
}

/**
 * The parts of a task id; null when it has a separator but what follows is not a key
 * (no digits, a leading zero, a sign, too many digits, a second separator). Such an id
 * was never issued.
 */
export function taskIdParts(id: string): TaskIdParts | null {
  const at = id.indexOf(TASK_KEY_SEPARATOR);
  if (at < 0) return { sealed: id, key: null };
  const suffix = id.slice(at + TASK_KEY_SEPARATOR.length);
  if (!KEY_SUFFIX.test(suffix)) return null;
  return { sealed: id.slice(0, at), key: Number(suffix) };
}

/**
 * SQL for the key the task id bound at `param` names: the digits after its separator, or,
 * for an id without one (issued before the suffix), its key in `task_ids`. A constant for
 * the statement, so `key = <this>` is a seek on the rowid; the `task_ids` branch is taken
 * only for an id without a dot. A malformed suffix casts to a key whose row, if any, has
 * another id.
 */
export function keyOfTaskId(param: string): string {
  return `(CASE WHEN instr(${param}, '${TASK_KEY_SEPARATOR}') = 0
    THEN (SELECT key FROM task_ids WHERE id = ${param})
    ELSE CAST(substr(${param}, instr(${param}, '${TASK_KEY_SEPARATOR}') + 1) AS INTEGER) END)`;
}

/**
 * SQL selecting the row of the task whose id is bound at `param` (`?1` by default): found
 * by its key, and only if its stored id is the one presented.
 */
export function taskRow(param = "?1"): string {
  return `key = ${keyOfTaskId(param)} AND id = ${param}`;
}

/** SQL selecting the rows of the tasks whose ids are bound at `params`, each by its key. */
export function taskRows(params: readonly string[]): string {
  return `key IN (${params.map(keyOfTaskId).join(", ")}) AND id IN (${params.join(", ")})`;
}
