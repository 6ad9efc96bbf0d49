/**
 * Changes to task rows held for the rest of a transaction, so that a row changed several
 * times in one (inserted, given its answer, ended) is written by one statement. The task
 * store, the one writer of `tasks`, runs what `drain` returns before its next statement or
 * read and as the transaction ends.
 */
import type { StatusRow } from "./task-status";

/** One held row's statement: its columns, their SQL values (`?N`, `NULL` or a literal), its arguments. */
export interface RowWrite {
  /** True for a new row (an INSERT), false for a change of an existing one (an UPDATE). */
  insert: boolean;
  columns: string[];
  values: string[];
  /** The statement's arguments; the task id is always `?1`. */
  args: SqlStorageValue[];
}

/** A status change as held: the history's ceiling computed by the store. */
export type HeldStatus = StatusRow & { historyCeiling: number | null };

interface RowChange {
  /** A new row's values by column, until it is inserted. */
  insert: Map<string, SqlStorageValue> | null;
  status: HeldStatus | null;
  artifact: { header: string | null; parts: string | null } | null;
}

/** A task state as a SQL literal: one of a few lower-case words, never a client's text. */
function stateLiteral(value: SqlStorageValue): string {
  if (typeof value !== "string" || !/^[a-z-]+$/.test(value)) {
    throw new TypeError(`not a task state: ${String(value)}`);
  }
  return `'${value}'`;
}

/** A task's ceilings and the floors they are counted from. */
const FLOOR_OF: ReadonlyMap<string, string> = new Map([
  ["event_ceiling", "event_floor"],
  ["history_ceiling", "history_floor"],
]);
/** How far past its floor a ceiling is written as `floor + n` rather than bound. */
const NEAR_FLOOR = 3;

/**
 * A ceiling written in the same statement as its floor, as an expression of the floor's
 * parameter (`?8 + 2`): a task made and ended in one turn has a few events and items. Null
 * when the column is no ceiling, its floor is not bound here, or it is further.
 */
function nearFloor(
  row: ReadonlyMap<string, SqlStorageValue>,
  bound: ReadonlyMap<string, string>,
  column: string,
  value: SqlStorageValue,
): string | null {
  const floor = FLOOR_OF.get(column);
  const at = floor === undefined ? undefined : bound.get(floor);
  const from = floor === undefined ? undefined : row.get(floor);
  if (at === undefined || typeof from !== "number" || typeof value !== "number") return null;
  const n = value - from;
  return Number.isInteger(n) && n >= 0 && n <= NEAR_FLOOR ? `${at} + ${n}` : null;
}

/** The task rows' changes not yet written, by task id. */
export class TaskRowChanges {
  private readonly held = new Map<string, RowChange>();

  /** Whether nothing is held. */
  get empty(): boolean {
    return this.held.size === 0;
  }

  /** A new task's row, by column. */
  insert(taskId: string, values: Map<string, SqlStorageValue>): void {
    this.changeOf(taskId).insert = values;
  }

  /** A status change; a later one keeps what an earlier one set and it leaves unset. */
  status(taskId: string, row: HeldStatus): void {
    const change = this.changeOf(taskId);
    const before = change.status;
    change.status = {
      ...row,
      // Null in a later change means unchanged: the earlier value still has to be written.
      metadata: row.metadata ?? before?.metadata ?? null,
      eventCeiling: row.eventCeiling ?? before?.eventCeiling ?? null,
      historyCeiling: row.historyCeiling ?? before?.historyCeiling ?? null,
    };
  }

  /** The artifact kept in the row: its header and parts as JSON, or nulls. */
  artifact(taskId: string, header: string | null, parts: string | null): void {
    this.changeOf(taskId).artifact = { header, parts };
  }

  /**
   * The artifact held for the task's row, taken out of it: a new row is then inserted
   * without one, an existing row's columns are cleared. Null when none is held.
   */
  takeArtifact(taskId: string): { header: string; parts: string | null } | null {
    const change = this.held.get(taskId);
    const held = change?.artifact;
    if (!change || !held || held.header === null) return null;
    change.artifact = change.insert ? null : { header: null, parts: null };
    return { header: held.header, parts: held.parts };
  }

  /** Forgets what is held (the transaction rolled back). */
  clear(): void {
    this.held.clear();
  }

  /** What is held, as one statement per row, and forgets it. */
  drain(): RowWrite[] {
    const writes: RowWrite[] = [];
    const changes = [...this.held];
    this.held.clear();
    for (const [taskId, change] of changes) {
      const row = change.insert ?? new Map<string, SqlStorageValue>();
      const status = change.status;
      if (!status && !change.artifact && !change.insert) continue;
      if (status) {
        row.set("state", status.state);
        row.set("status_timestamp", status.timestamp);
        row.set("updated_at", status.timestamp);
        row.set("state_history", status.stateHistory);
        row.set("row_seq", status.rowSeq);
        row.set("index_pending", 1);
        row.set("status_message", status.message);
        if (status.metadata !== null) row.set("metadata", status.metadata);
        if (status.eventCeiling !== null) row.set("event_ceiling", status.eventCeiling);
        if (status.historyCeiling !== null) row.set("history_ceiling", status.historyCeiling);
      }
      if (change.artifact) {
        row.set("first_artifact", change.artifact.header);
        row.set("first_artifact_parts", change.artifact.parts);
      }
      // The statement's text depends only on which columns change, on the state and on
      // how far a ceiling is from its floor, so workerd's cache of prepared statements
      // keeps a few texts: the id is ?1, `updated_at` is `status_timestamp`'s parameter,
      // a null is NULL. Each bound value costs workerd several thousand instructions, so
      // the state is a literal and a ceiling near its floor is written from the floor's.
      const args: SqlStorageValue[] = [taskId];
      const bound = new Map<string, string>();
      const param = (column: string, value: SqlStorageValue): string => {
        if (column === "id") return "?1";
        if (column === "updated_at" && bound.has("status_timestamp")) {
          return bound.get("status_timestamp") as string;
        }
        if (value === null) return "NULL";
        if (column === "index_pending") return "1";
        if (column === "state") return stateLiteral(value);
        const near = nearFloor(row, bound, column, value);
        if (near) return near;
        args.push(value);
        bound.set(column, `?${args.length}`);
        return `?${args.length}`;
      };
      const columns = [...row.keys()];
      const values = [...row].map(([column, value]) => param(column, value));
      writes.push({ insert: change.insert !== null, columns, values, args });
    }
    return writes;
  }

  private changeOf(taskId: string): RowChange {
    let change = this.held.get(taskId);
    if (!change) {
      change = { insert: null, status: null, artifact: null };
      this.held.set(taskId, change);
    }
    return change;
  }
}
