/**
 * The event log: a conversation's append-only `events` table, whose sequence number is the
 * SSE event id. Events logged in a transaction are written by one statement as it ends.
 *
 * A task made in this turn can have its events wait in memory (`wait`) until the turn's
 * end: if it ended within the turn and nothing could read them (no stream or subscriber,
 * no webhook), they are never written. Their seqs stay used, between the task's
 * `event_floor` and `event_ceiling`, so no later event takes them.
 */
import type { TaskEvent } from "../../protocol/events";
import { checkRowBytes } from "../../storage/row-limit";
import { EVENTS_SEQ_KEY } from "../../storage/schema";
import { sqlLimit } from "../../storage/sql-limit";
import { taskRow } from "../../storage/task-keys";
import { ArtifactRows, eventBody, eventOfRow } from "./event-rows";

/**
 * Where a task's events lie in the log (SQL, the task id bound as ?1): from its floor to
 * its ceiling (its final event; the log's end while it runs). NULL when the task is gone,
 * which matches nothing.
 */
const FLOOR_OF_TASK = `(SELECT event_floor FROM tasks WHERE ${taskRow()})`;
const CEILING_OF_TASK = `(SELECT COALESCE(event_ceiling, ${Number.MAX_SAFE_INTEGER}) FROM tasks WHERE ${taskRow()})`;
/** The task's context id (SQL; see `eventOfRow`), for the task id bound as `param`. */
const contextOfTask = (param: string) => `(SELECT context_id FROM tasks WHERE ${taskRow(param)})`;

/**
 * Names each event's seq itself (past every seq ever used) and gathers the rows of the open
 * transaction; the task store says when the transaction ends (`write`) or fails (`discard`).
 */
export class EventLog {
  constructor(private readonly storage: Pick<DurableObjectStorage, "sql">) {}

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
  private unwritten: LogRow[] = [];

  /**
   * Tasks made in this turn whose events wait (see `wait`), by id, while nothing can read
   * them: their rows, and whether the task ended. Emptied at the turn's end.
   */
  private readonly waiting = new Map<string, Waiting>();
  /** The rows the next chunks read their artifact's header from. */
  private readonly artifactRows = new ArtifactRows();
  /** What this transaction changed in `waiting`, undone if it fails. */
  private waitedNow: string[] = [];
  private endedNow: string[] = [];

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

  /**
   * Logs an event and answers its seq; its row is written as the transaction ends (`write`).
   * `contextId`, the task's, lets the row leave out the ids the task already holds. A waiting
   * task's event is serialized as the transaction ends, and only if it is to be written then:
   * most such tasks end in the transaction that logs them, unread.
   */
  add(taskId: string, event: TaskEvent, contextId?: string): number {
    const context = contextId ?? null;
    const seq = this.nextSeq();
    const body = this.waiting.has(taskId) ? null : this.bodyOf(seq, taskId, context, event);
    this.unwritten.push({ seq, taskId, contextId: context, body, event });
    this.last = seq;
    return seq;
  }

  /** The schema was just made: no event was ever logged, nothing to read. */
  created(): void {
    this.last = 0;
  }

  /** The transaction failed: nothing logged in it was written, and the seq is read again. */
  discard(): void {
    this.unwritten = [];
    this.last = null;
    this.artifactRows.clear();
    for (const taskId of this.waitedNow) this.waiting.delete(taskId);
    for (const taskId of this.endedNow) {
      const waiting = this.waiting.get(taskId);
      if (waiting) waiting.ended = false;
    }
    this.waitedNow = [];
    this.endedNow = [];
  }

  /**
   * The events of a task just made wait in memory until `release` (the turn's end) instead
   * of being written as each transaction ends.
   */
  wait(taskId: string): void {
    this.waiting.set(taskId, { rows: [], ended: false });
    this.waitedNow.push(taskId);
  }

  /** Whether any task's events wait for the turn's end. */
  get anyWaiting(): boolean {
    return this.waiting.size > 0;
  }

  /**
   * Something can read the task's events (a stream, a subscriber, a webhook): they stop
   * waiting and join the next `write`. Answers whether any is waiting for that write.
   */
  watch(taskId: string): boolean {
    const waiting = this.waiting.get(taskId);
    if (!waiting) return false;
    this.waiting.delete(taskId);
    this.unwritten.push(...waiting.rows);
    this.unwritten.sort((a, b) => a.seq - b.seq);
    return waiting.rows.length > 0;
  }

  /** The task reached a terminal state in this transaction. */
  ended(taskId: string): void {
    const waiting = this.waiting.get(taskId);
    if (!waiting) return;
    waiting.ended = true;
    this.endedNow.push(taskId);
  }

  /** The turn ends: every event still waiting is written with the next `write`. */
  release(): void {
    for (const waiting of this.waiting.values()) this.unwritten.push(...waiting.rows);
    this.waiting.clear();
    this.unwritten.sort((a, b) => a.seq - b.seq);
  }

  /**
   * Writes the transaction's events in one statement (per 30), each task id bound once.
   * The rows of a waiting task wait on; those of a waiting task that ended here are never
   * written (nor kept): nothing could read them.
   */
  write(): void {
    // Before anything is reset: a row too big fails the transaction, and `discard` undoes it.
    for (const row of this.unwritten) {
      if (row.body === null && !this.waiting.get(row.taskId)?.ended) {
        row.body = this.bodyOf(row.seq, row.taskId, row.contextId, row.event);
      }
    }
    let rows = this.unwritten;
    this.unwritten = [];
    this.waitedNow = [];
    this.endedNow = [];
    if (this.waiting.size > 0) rows = this.keepWaiting(rows);
    for (let i = 0; i < rows.length; i += 30) {
      const chunk = rows.slice(i, i + 30);
      const values: string[] = [];
      const args: SqlStorageValue[] = [];
      const taskParams = new Map<string, number>();
      for (const row of chunk) {
        let task = taskParams.get(row.taskId);
        if (task === undefined) {
          args.push(row.taskId);
          task = args.length;
          taskParams.set(row.taskId, task);
        }
        args.push(row.seq, row.body);
        values.push(`(?${args.length - 1}, ?${task}, ?${args.length})`);
      }
      this.sql.exec(`INSERT INTO events (seq, task_id, body) VALUES ${values.join(", ")}`, ...args);
    }
  }

  /** The rows to write now, the rows of waiting tasks set aside (see `write`). */
  private keepWaiting(rows: LogRow[]): LogRow[] {
    const now: LogRow[] = [];
    for (const row of rows) {
      const waiting = this.waiting.get(row.taskId);
      if (waiting) waiting.rows.push(row);
      else now.push(row);
    }
    for (const [taskId, waiting] of this.waiting) {
      // A task that logs more than a turn's worth of events stops waiting: memory is bounded.
      if (!waiting.ended && waiting.rows.length <= MAX_WAITING_ROWS) continue;
      this.waiting.delete(taskId);
      if (!waiting.ended) now.push(...waiting.rows);
      else this.artifactRows.clear();
    }
    return now.length > 1 ? now.sort((a, b) => a.seq - b.seq) : now;
  }

  /**
   * The seq the next event takes: past every seq ever used (a client may still hold an
   * old one as its Last-Event-ID): past the newest row, the high-water mark pruning left
   * in `meta`, and the seqs of the newest tasks, whose events may never have been written
   * (see `wait`): the newest made, and the last few changed (tasks made in one turn may
   * end in another order).
   */
  private nextSeq(): number {
    this.last ??= this.sql
      .exec<{ seq: number }>(
        `SELECT MAX(COALESCE((SELECT CAST(value AS INTEGER) FROM meta WHERE key = ?), 0),
           COALESCE((SELECT MAX(seq) FROM events), 0),
           COALESCE((SELECT MAX(event_floor, COALESCE(event_ceiling, 0)) FROM tasks
             ORDER BY key DESC LIMIT 1), 0),
           COALESCE((SELECT MAX(MAX(event_floor, COALESCE(event_ceiling, 0))) FROM
             (SELECT event_floor, event_ceiling FROM tasks ORDER BY row_seq DESC LIMIT 8)), 0))
         AS seq`,
        EVENTS_SEQ_KEY,
      )
      .one().seq;
    return this.last + 1;
  }

  /** The row body of an event about to be written (see `ArtifactRows`). */
  private bodyOf(seq: number, taskId: string, contextId: string | null, event: TaskEvent): string {
    const whole = () => serialized(taskId, contextId, event);
    return contextId === null
      ? whole()
      : this.artifactRows.body(seq, taskId, contextId, event, whole);
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
    const waiting = this.waiting.get(taskId);
    if (waiting) {
      const rows = waiting.rows.filter((r) => r.seq > afterSeq);
      return (limit < 0 ? rows : rows.slice(0, limit)).flatMap(parsed);
    }
    const rows = this.sql
      .exec<{ seq: number; body: string; context_id: string | null }>(
        `SELECT seq, body, ${contextOfTask("?1")} AS context_id FROM events
         WHERE seq > MAX(?2, ${FLOOR_OF_TASK} - 1) AND seq <= ${CEILING_OF_TASK} AND task_id = ?1
         ORDER BY seq LIMIT ${sqlLimit(limit)}`,
        taskId,
        afterSeq,
      )
      .toArray();
    const read = new Map<number, string>();
    for (const r of rows) read.set(r.seq, r.body);
    // A chunk's base row is most often on the same page; one before it is read once.
    const rowAt = (seq: number) => {
      let body = read.get(seq);
      if (body === undefined) {
        body = this.bodyAt(taskId, seq) ?? "";
        read.set(seq, body);
      }
      return body || null;
    };
    return rows.flatMap((r) => {
      const event = eventOfRow(r.body, taskId, r.context_id, rowAt);
      return event ? [{ seq: r.seq, event }] : [];
    });
  }

  /** The body of the task's row of `seq`, if it has one. */
  private bodyAt(taskId: string, seq: number): string | null {
    const [row] = this.sql
      .exec<{ body: string }>("SELECT body FROM events WHERE seq = ? AND task_id = ?", seq, taskId)
      .toArray();
    return row?.body ?? null;
  }

  /**
   * Seq of the newest logged event of a task: the log read back from its ceiling; for a
   * finished task whose events were never written, its final event's seq all the same
   * (its ceiling); 0 if none.
   */
  lastSeq(taskId: string): number {
    const waiting = this.waiting.get(taskId);
    if (waiting) return waiting.rows.at(-1)?.seq ?? 0;
    const [row] = this.sql
      .exec<{ seq: number }>(
        `SELECT seq FROM events WHERE seq >= ${FLOOR_OF_TASK} AND seq <= ${CEILING_OF_TASK}
         AND task_id = ?1 ORDER BY seq DESC LIMIT 1`,
        taskId,
      )
      .toArray();
    if (row) return row.seq;
    const [task] = this.sql
      .exec<{ seq: number | null }>(
        `SELECT event_ceiling AS seq FROM tasks WHERE ${taskRow()}`,
        taskId,
      )
      .toArray();
    return task?.seq ?? 0;
  }

  /** One logged event by its sequence number. */
  get(seq: number): TaskEvent | null {
    for (const waiting of this.waiting.values()) {
      const held = waiting.rows.find((r) => r.seq === seq);
      if (held) return parsed(held)[0]?.event ?? null;
    }
    const row = this.sql
      .exec<{ body: string; task_id: string; context_id: string | null }>(
        `SELECT body, task_id, ${contextOfTask("events.task_id")} AS context_id
         FROM events WHERE seq = ?`,
        seq,
      )
      .toArray()[0];
    if (!row) return null;
    return eventOfRow(row.body, row.task_id, row.context_id, (at) => this.bodyAt(row.task_id, at));
  }
}

/**
 * An event as logged: its seq, its task (and the task's context, when known) and its JSON
 * (null until the end of its transaction for a waiting task's event; see `add`).
 */
interface LogRow {
  seq: number;
  taskId: string;
  contextId: string | null;
  body: string | null;
  event: TaskEvent;
}

/** An event's row body (see `eventBody`), refused when it cannot fit one row. */
function serialized(taskId: string, contextId: string | null, event: TaskEvent): string {
  const body = eventBody(taskId, contextId ?? undefined, event);
  checkRowBytes("event", body);
  return body;
}

/** A task's events waiting for the turn's end (see `EventLog.wait`); none can read them. */
interface Waiting {
  rows: LogRow[];
  ended: boolean;
}

/** More events than a turn of a handler logs: a task past it writes them as usual. */
const MAX_WAITING_ROWS = 64;

/**
 * A held row read back: none or one event (see `eventOfRow`), from its event as a whole row
 * keeps it (a chunk's row may read from rows that are held too).
 */
const parsed = (row: LogRow): { seq: number; event: TaskEvent }[] => {
  const body = serialized(row.taskId, row.contextId, row.event);
  const event = eventOfRow(body, row.taskId, row.contextId);
  return event ? [{ seq: row.seq, event }] : [];
};
