/**
 * The listing clock of a conversation's tasks and the pages it serves: each row's
 * `row_seq`, the moves a page token's snapshot needs (`list_moves`), and `list_clock`; and
 * the row keys of new tasks, which the clock hands out (carried in their ids).
 */
import type { Task } from "../../protocol/task";
import { type CuttablePage, type PageQuery, queryPage } from "../../storage/paging";
import { CONTEXT_LISTING_KEEP } from "../../storage/schema";
import { keyedTaskId, taskIdParts, taskRow } from "../../storage/task-keys";

/**
 * The listing clock (see `listingSteps` in schema.ts), kept here instead of by triggers:
 * every insert and every change of `updated_at` takes the next value into the row's
 * `row_seq`, in the same statement. SQLite's `list_clock` is brought up to it only when a
 * page is read or rows are deleted; on load the clock is the highest of `list_clock`, any
 * `row_seq` and any move, so it never goes back.
 */
export class ListingClock {
  constructor(private readonly storage: Pick<DurableObjectStorage, "sql">) {}

  /** The clock; null until read from SQLite (and after a failed transaction). */
  private clock: number | null = null;
  /** What `list_clock` holds, as far as this clock knows. */
  private storedClock = 0;
  /**
   * The newest snapshot a page token may hold (every one, after a load). A row last
   * changed after it is in no token's snapshot, so its next change records no move.
   */
  private issued = 0;
  /** The `row_seq` of the tasks in memory. */
  private readonly rowSeqs = new WeakMap<Task, number>();

  private get sql(): SqlStorage {
    return this.storage.sql;
  }

  /** The schema was just made: the clock is at 0, nothing to read. */
  created(): void {
    this.clock = 0;
    this.storedClock = 0;
    this.issued = 0;
  }

  /** The transaction failed: the clock is read again. */
  forget(): void {
    this.clock = null;
  }

  /** The key `mintTaskId` handed out in the open transaction, for `rowKeyFor` to take. */
  private minted: number | null = null;

  /**
   * The id of the next task the task store inserts (`TaskStore.create`): the Worker's `sealed` part and the row's key
   * (see task-keys.ts), so the task is found by its key. Called in the transaction that
   * creates the task.
   */
  mintTaskId(sealed: string): string {
    const key = this.tick();
    this.minted = key;
    return keyedTaskId(sealed, key);
  }

  /**
   * The row key of a new task: the one its id carries (made by `mintTaskId`), or, for an
   * id given whole (one without a key, as tests make), the next one, kept in `task_ids`.
   */
  rowKeyFor(id: string): number {
    const parts = taskIdParts(id);
    if (parts?.key === null) {
      const key = this.tick();
      this.sql.exec("INSERT INTO task_ids (id, key) VALUES (?, ?)", id, key);
      return key;
    }
    if (!parts || parts.key !== this.minted) {
      throw new Error(`task id ${id} names a key mintTaskId did not hand out`);
    }
    this.minted = null;
    return parts.key;
  }

  /** One page of this conversation's tasks, newest status first. */
  page(q: PageQuery): CuttablePage<{ id: string; updated_at: string }> {
    const clock = this.current();
    // The page's snapshot is read from `list_clock`: bring it up to the clock first.
    const stored =
      clock > this.storedClock
        ? this.sql
            .exec<{ seq: number }>(
              "UPDATE list_clock SET seq = MAX(seq, ?) WHERE id = 1 RETURNING seq",
              clock,
            )
            .one().seq
        : this.sql.exec<{ seq: number }>("SELECT seq FROM list_clock WHERE id = 1").one().seq;
    this.storedClock = stored;
    this.clock = Math.max(clock, stored);
    // A token from this page may hold this snapshot: the rows in it now record their moves.
    this.issued = this.clock;
    return queryPage(
      this.sql,
      { table: "tasks", id: "id", columns: "state", keep: CONTEXT_LISTING_KEEP, bySeq: true },
      q,
    );
  }

  /** The clock, read from SQLite once (see `clock`). */
  private current(): number {
    if (this.clock === null) {
      const row = this.sql
        .exec<{ stored: number; rows: number | null; moves: number | null }>(
          `SELECT (SELECT seq FROM list_clock WHERE id = 1) AS stored,
             (SELECT MAX(row_seq) FROM tasks) AS rows, (SELECT MAX(seq) FROM list_moves) AS moves`,
        )
        .one();
      this.storedClock = row.stored;
      this.clock = Math.max(row.stored, row.rows ?? 0, row.moves ?? 0);
      // Tokens handed out before this load are not known: any of them may hold the clock.
      this.issued = this.clock;
    }
    return this.clock;
  }

  /** The next value of the clock (written to SQLite with the row it marks). */
  tick(): number {
    this.clock = this.current() + 1;
    return this.clock;
  }

  /** Brings `list_clock` up to the clock (before rows, and the seqs they hold, are deleted). */
  save(): void {
    const clock = this.current();
    if (clock <= this.storedClock) return;
    this.sql.exec("UPDATE list_clock SET seq = MAX(seq, ?) WHERE id = 1", clock);
    this.storedClock = clock;
  }

  /** A task in memory holds `row_seq` `seq` (as inserted, loaded or moved). */
  setRowSeq(task: Task, seq: number): void {
    this.rowSeqs.set(task, seq);
  }

  /**
   * The `row_seq` a task's row takes with a status stamped `timestamp`: a new tick when its
   * `updated_at` changes (it moves in the listing; recorded for the snapshots that hold its
   * old place), else the one it has.
   */
  rowSeqFor(task: Task, timestamp: string): number {
    let rowSeq = this.rowSeq(task);
    if (timestamp !== task.status.timestamp) {
      const previous = rowSeq;
      rowSeq = this.tick();
      if (previous <= this.issued) this.recordMove(task, previous, rowSeq);
    }
    return rowSeq;
  }

  /** A task's `row_seq` (kept with the task in memory; read if it is not). */
  private rowSeq(task: Task): number {
    const known = this.rowSeqs.get(task);
    if (known !== undefined) return known;
    const row = this.sql
      .exec<{ row_seq: number }>(`SELECT row_seq FROM tasks WHERE ${taskRow()}`, task.id)
      .toArray()[0];
    return row?.row_seq ?? 0;
  }

  /**
   * The place a task had in the snapshots that include it, for later pages of those
   * listings; the newest CONTEXT_LISTING_KEEP moves are kept (an older token expired).
   */
  private recordMove(task: Task, previous: number, seq: number): void {
    this.sql.exec(
      "INSERT INTO list_moves (seq, prev_seq, task_id, old_updated_at) VALUES (?, ?, ?, ?)",
      seq,
      previous,
      task.id,
      task.status.timestamp,
    );
    this.sql.exec("DELETE FROM list_moves WHERE seq <= ?", seq - CONTEXT_LISTING_KEEP);
  }
}
