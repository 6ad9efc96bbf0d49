import type { ChildLedger, ChildRecord } from "../../agent/delegation";
import { connectTarget } from "../../agent/delegation-target";
import { isTerminal, type TaskState } from "../../protocol/task-state";
import { setBounded } from "../../storage/bounded-map";
import { logEvent } from "../../telemetry/log";

/** What changed in a delegation: its key and the fields that changed. */
export type ChildChange = Pick<ChildRecord, "key"> & Partial<ChildRecord>;

type Row = {
  parent_task_id: string;
  key: string;
  target: string;
  child_task_id: string | null;
  child_context_id: string | null;
  last_event_id: string | null;
  state: string;
};

/** Most delegations one task may make. */
export const MAX_CHILDREN_PER_TASK = 256;
/** Delegations whose last announced child and state are remembered (most events change neither). */
const ANNOUNCED_KEPT = 256;

/**
 * The children of a context's tasks (delegations to other agents), one row each: where it
 * went, the child's task id, the last event the parent saw and the child's state. The
 * table is made by the first delegation, so objects that never delegate never get it.
 */
export class ChildStore implements ChildLedger {
  private exists: boolean;

  /**
   * `changed` hears of each delegation that starts, learns its child's id or changes
   * state (the parent's metadata shows them; see `noteDelegation`).
   */
  constructor(
    private readonly sql: SqlStorage,
    private readonly changed: (parentTaskId: string, change: ChildChange) => void = () => {},
  ) {
    this.exists =
      sql.exec("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'children'").toArray()
        .length > 0;
  }

  get(parentTaskId: string, key: string): ChildRecord | null {
    if (!this.exists) return null;
    const row = this.sql
      .exec<Row>("SELECT * FROM children WHERE parent_task_id = ? AND key = ?", parentTaskId, key)
      .toArray()[0];
    return row ? toRecord(row) : null;
  }

  create(parentTaskId: string, record: ChildRecord): void {
    if (!this.exists) {
      this.sql.exec(`CREATE TABLE IF NOT EXISTS children (
        parent_task_id TEXT NOT NULL,
        key TEXT NOT NULL,
        target TEXT NOT NULL,
        child_task_id TEXT,
        child_context_id TEXT,
        last_event_id TEXT,
        state TEXT NOT NULL,
        PRIMARY KEY (parent_task_id, key)
      )`);
      this.exists = true;
    }
    const count = this.sql
      .exec<{ n: number }>(
        "SELECT COUNT(*) AS n FROM children WHERE parent_task_id = ?",
        parentTaskId,
      )
      .one().n;
    if (count >= MAX_CHILDREN_PER_TASK) {
      throw new Error(`A task may delegate at most ${MAX_CHILDREN_PER_TASK} times`);
    }
    this.sql.exec(
      `INSERT INTO children (parent_task_id, key, target, child_task_id, child_context_id, last_event_id, state)
       VALUES (?, ?, ?, ?, ?, ?, ?)`,
      parentTaskId,
      record.key,
      record.target,
      record.childTaskId,
      record.childContextId,
      record.lastEventId,
      record.state,
    );
    this.changed(parentTaskId, record);
    setBounded(
      this.announced,
      `${parentTaskId}\n${record.key}`,
      `${record.childTaskId ?? ""}\n${record.state}`,
      ANNOUNCED_KEPT,
    );
  }

  update(parentTaskId: string, key: string, change: Partial<ChildRecord>): void {
    const columns: [string, unknown][] = [];
    if (change.childTaskId !== undefined) columns.push(["child_task_id", change.childTaskId]);
    if (change.childContextId !== undefined) {
      columns.push(["child_context_id", change.childContextId]);
    }
    if (change.lastEventId !== undefined) columns.push(["last_event_id", change.lastEventId]);
    if (change.state !== undefined) columns.push(["state", change.state]);
    if (columns.length === 0) return;
    this.sql.exec(
      `UPDATE children SET ${columns.map(([c]) => `${c} = ?`).join(", ")} WHERE parent_task_id = ? AND key = ?`,
      ...columns.map(([, v]) => v),
      parentTaskId,
      key,
    );
    if (change.childTaskId || change.state) this.announce(parentTaskId, { ...change, key });
  }

  /** Last child id and state announced per delegation: most events change neither. */
  private readonly announced = new Map<string, string>();

  private announce(parentTaskId: string, change: ChildChange): void {
    const id = `${parentTaskId}\n${change.key}`;
    const before = this.announced.get(id)?.split("\n") ?? [];
    const now = [change.childTaskId ?? before[0] ?? "", change.state ?? before[1] ?? ""];
    if (now[0] === before[0] && now[1] === before[1]) return;
    setBounded(this.announced, id, now.join("\n"), ANNOUNCED_KEPT);
    this.changed(parentTaskId, change);
  }

  /** A task's children that have not finished (or whose state the parent never saw). */
  open(parentTaskId: string): ChildRecord[] {
    if (!this.exists) return [];
    return this.sql
      .exec<Row>("SELECT * FROM children WHERE parent_task_id = ? ORDER BY rowid", parentTaskId)
      .toArray()
      .map(toRecord)
      .filter((r) => !isTerminal(r.state as TaskState));
  }
}

function toRecord(row: Row): ChildRecord {
  return {
    key: row.key,
    target: row.target,
    childTaskId: row.child_task_id,
    childContextId: row.child_context_id,
    lastEventId: row.last_event_id,
    state: row.state,
  };
}

/**
 * Cancels a canceled parent's children on their agents (best effort: a child that ended
 * meanwhile, or an agent that cannot be reached, is left as it is).
 */
export async function cancelChildren(children: ChildRecord[], env: unknown): Promise<void> {
  await Promise.all(
    children.map(async (child) => {
      if (!child.childTaskId) return;
      try {
        const client = await connectTarget(child.target, env);
        await client.cancel(child.childTaskId);
      } catch (error) {
        logEvent("warn", `edgelink: could not cancel child task ${child.childTaskId}`, { error });
      }
    }),
  );
}
