/**
 * The event log: a conversation's append-only `events` table, whose sequence number is the
 * SSE event id. Events logged in a transaction are written by one statement as it ends.
 */
import type { TaskEvent } from "../../protocol/events";
import { checkRowBytes } from "../../storage/row-limit";
import { EVENTS_SEQ_KEY } from "../../storage/schema";
import { sqlLimit } from "../../storage/sql-limit";

/**
 * Where a task's events lie in the log (SQL, the task id bound as ?1): from its floor to
 * its ceiling (its final event; the log's end while it runs). NULL when the task is gone,
 * which matches nothing.
 */
const FLOOR_OF_TASK = "(SELECT event_floor FROM tasks WHERE id = ?1)";
const CEILING_OF_TASK = `(SELECT COALESCE(event_ceiling, ${Number.MAX_SAFE_INTEGER}) FROM tasks WHERE id = ?1)`;

/**
 * Names each event's seq itself (past every seq ever used) and gathers the rows of the open
 * transaction; the task store says when the transaction ends (`write`) or fails (`discard`).
 */
export class EventLog {
  constructor(private readonly storage: DurableObjectStorage) {}

  /**
   * The newest event's seq (the SSE id), read once: an insert names its seq instead of
   * asking SQLite with RETURNING, which costs several times the insert itself (nor does the
   * table keep AUTOINCREMENT's extra row: see `nextSeq`).
   */
  private last: number | null = null;
  /**
   * Events logged in the open transaction, written by one INSERT as it ends (their seqs
   * follow each other): a statement costs the same fixed work whatever its rows.
   */
  private unwritten: { taskId: string; body: string }[] = [];
  /** The seq of the first of `unwritten`. */
  private firstUnwritten = 0;

  private get sql(): SqlStorage {
    return this.storage.sql;
  }

  /**
   * The seq the next event will take: a new task's `event_floor`, an ending task's
   * `event_ceiling` (counted on by its final events). A task's reads walk the log's own key
   * between the two: the log keeps no index by task (each event would pay a page for it,
   * and reads by task are few).
   */
  floor(): number {
    return this.nextSeq();
  }

  /** Logs an event and answers its seq; its row is written as the transaction ends (`write`). */
  add(taskId: string, event: TaskEvent): number {
    const body = JSON.stringify(event);
    checkRowBytes("event", body);
    const seq = this.nextSeq();
    if (this.unwritten.length === 0) this.firstUnwritten = seq;
    this.unwritten.push({ taskId, body });
    this.last = seq;
    return seq;
  }

  /** The transaction failed: nothing logged in it was written, and the seq is read again. */
  discard(): void {
    this.unwritten = [];
    this.last = null;
  }

  /**
   * Writes the transaction's events in one statement (per 30): consecutive seqs counted
   * from the first, each task id bound once.
   */
  write(): void {
    const rows = this.unwritten;
    if (rows.length === 0) return;
    this.unwritten = [];
    for (let i = 0; i < rows.length; i += 30) {
      const chunk = rows.slice(i, i + 30);
      const values: string[] = [];
      const args: SqlStorageValue[] = [this.firstUnwritten + i];
      const taskParams = new Map<string, number>();
      chunk.forEach((row, k) => {
        let task = taskParams.get(row.taskId);
        if (task === undefined) {
          args.push(row.taskId);
          task = args.length;
          taskParams.set(row.taskId, task);
        }
        args.push(row.body);
        values.push(`(${k === 0 ? "?1" : `?1 + ${k}`}, ?${task}, ?${args.length})`);
      });
      this.sql.exec(`INSERT INTO events (seq, task_id, body) VALUES ${values.join(", ")}`, ...args);
    }
  }

  /**
   * The seq the next event takes: past every seq ever used (a client may still hold an
   * old one as its Last-Event-ID): past the newest row and the high-water mark pruning
   * left in `meta`.
   */
  private nextSeq(): number {
    this.last ??= this.sql
      .exec<{ seq: number }>(
        `SELECT MAX(COALESCE((SELECT CAST(value AS INTEGER) FROM meta WHERE key = ?), 0),
           COALESCE((SELECT MAX(seq) FROM events), 0)) AS seq`,
        EVENTS_SEQ_KEY,
      )
      .one().seq;
    return this.last + 1;
  }

  /** Keeps the newest seq in `meta` before events are deleted (see `nextSeq`). */
  saveSeq(): void {
    const seq = this.nextSeq() - 1;
    this.sql.exec(
      `INSERT INTO meta (key, value) VALUES (?, ?)
       ON CONFLICT (key) DO UPDATE SET value = excluded.value
       WHERE CAST(excluded.value AS INTEGER) > CAST(meta.value AS INTEGER)`,
      EVENTS_SEQ_KEY,
      String(seq),
    );
  }

  /**
   * Events of a task logged after `afterSeq`, oldest first, at most `limit`: the log read
   * from the later of `afterSeq` and the task's floor up to its ceiling (none when the
   * task is gone).
   */
  after(taskId: string, afterSeq: number, limit = -1): { seq: number; event: TaskEvent }[] {
    return this.sql
      .exec<{ seq: number; body: string }>(
        `SELECT seq, body FROM events
         WHERE seq > MAX(?2, ${FLOOR_OF_TASK} - 1) AND seq <= ${CEILING_OF_TASK} AND task_id = ?1
         ORDER BY seq LIMIT ${sqlLimit(limit)}`,
        taskId,
        afterSeq,
      )
      .toArray()
      .map((r) => ({ seq: r.seq, event: JSON.parse(r.body) as TaskEvent }));
  }

  /** Seq of the newest logged event of a task (0 if none): the log read back from its ceiling. */
  lastSeq(taskId: string): number {
    const [row] = this.sql
      .exec<{ seq: number }>(
        `SELECT seq FROM events WHERE seq >= ${FLOOR_OF_TASK} AND seq <= ${CEILING_OF_TASK}
         AND task_id = ?1 ORDER BY seq DESC LIMIT 1`,
        taskId,
      )
      .toArray();
    return row?.seq ?? 0;
  }

  /** One logged event by its sequence number. */
  get(seq: number): TaskEvent | null {
    const row = this.sql
      .exec<{ body: string }>("SELECT body FROM events WHERE seq = ?", seq)
      .toArray()[0];
    return row ? (JSON.parse(row.body) as TaskEvent) : null;
  }
}
