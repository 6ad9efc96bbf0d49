import { A2AError } from "../../protocol/errors";
import { CHUNK_CHARS } from "../../storage/row-limit";
import { PINNED } from "../../storage/schema";
import { sqlLimit } from "../../storage/sql-limit";
import { taskRow } from "../../storage/task-keys";

/** What the store needs of a conversation item: a stable id and a type. */
export interface StoredItem {
  id: string;
  type: string;
}

/** One row of the conversation: its position, the task it belongs to, the item. */
export interface HistoryRow<T extends StoredItem = StoredItem> {
  seq: number;
  taskId: string | null;
  item: T;
}

/** A row with the characters of JSON its item takes in SQLite. */
export interface SizedRow<T extends StoredItem = StoredItem> extends HistoryRow<T> {
  chars: number;
}

export interface HistoryPage<T extends StoredItem = StoredItem> {
  rows: HistoryRow<T>[];
  /** Pass back as `after` for the next page; null on the last page. */
  next: number | null;
  total: number;
}

/** A change computed by the history model: rows to delete, insert after a survivor, rewrite. */
export interface HistoryDiff<T extends StoredItem = StoredItem> {
  removed: string[];
  added: { item: T; afterId: string | null }[];
  changed: T[];
}

interface Row {
  id: string;
  seq: number;
  task_id: string | null;
  body: string | null;
  chunks: number;
  [key: string]: SqlStorageValue;
}

const encoder = new TextEncoder();

/** The `meta` key of the running summary (one small row, so no table of its own). */
const RUNNING_SUMMARY = "history_summary";

/**
 * The `meta` key of the highest position a rewrite or reset removed: positions only grow,
 * so a task's items appended after it was made always lie above its `history_floor`.
 */
export const HISTORY_SEQ_KEY = "history_seq";

/**
 * A task's rows: between its bounds (`history_floor`, and `history_ceiling` once it has
 * ended) along the position index, then by task; a task without a row reads all of it.
 */
const OF_TASK = `seq >= COALESCE((SELECT history_floor FROM tasks WHERE ${taskRow()}), -9e999)
  AND seq <= COALESCE((SELECT history_ceiling FROM tasks WHERE ${taskRow()}), 9e999) AND task_id = ?1`;

/**
 * A row's `pinned` flag, 1 or 0: what `PINNED_BY_BODY` (schema-current.ts) answers for
 * the row's JSON, which rows written before version 9 were migrated by. A summary's flag
 * is compared as SQLite's `json_extract(...) = 1` does (JSON `true` is 1 there). A row
 * kept in chunks has no JSON of its own: only its type can pin it.
 */
function pinnedFlag(item: StoredItem, chunked: boolean): 0 | 1 {
  if (item.type === "agent_config_update") return 1;
  if (item.type !== "message" || chunked) return 0;
  const message = item as StoredItem & { role?: unknown; extra?: { summary?: unknown } };
  if (message.role === "system" || message.role === "developer") return 1;
  const summary = message.extra?.summary;
  return summary === true || summary === 1 ? 1 : 0;
}

/**
 * The conversation of one context as SQLite rows, one per item, ordered by a sequence
 * number (never by timestamp). Appends write one row whatever the length; an item too big
 * for a row is split into chunk rows and put back together on read. Sequence numbers are
 * REAL so an item inserted between two others needs no renumbering.
 */
export class HistoryStore<T extends StoredItem = StoredItem> {
  constructor(
    private readonly storage: DurableObjectStorage,
    private readonly maxItemBytes = 4 * 1024 * 1024,
  ) {}

  private get sql(): SqlStorage {
    return this.storage.sql;
  }

  /** The last position, once read; every append through this store keeps it current. */
  private last: number | null = null;

  /** Characters of JSON the item last written takes in SQLite (its size, for the caller). */
  lastWrittenChars = 0;

  /** Appends an item at the end; returns the rows SQLite wrote (for the benchmark). */
  append(item: T, taskId: string | null = null): number {
    this.last ??= this.end();
    const written = this.write(item, this.last + 1, taskId);
    this.last += 1;
    if (this.items !== null) this.items += 1;
    return written;
  }

  /** The position the next append takes (a new task's `history_floor`). */
  nextSeq(): number {
    this.last ??= this.end();
    return this.last + 1;
  }

  /** Called for each item a rewrite places for a task, so the task's bounds can widen. */
  onTaskItemPlaced: ((taskId: string, seq: number) => void) | null = null;

  /** The highest position ever taken: the last row's, or one a rewrite removed. */
  private end(): number {
    return this.sql
      .exec<{ s: number }>(
        `SELECT MAX(COALESCE((SELECT MAX(seq) FROM history_items), 0),
           COALESCE((SELECT CAST(value AS REAL) FROM meta WHERE key = ?), 0)) AS s`,
        HISTORY_SEQ_KEY,
      )
      .one().s;
  }

  /** Before rows go: the end is kept, so later appends never take a lower position. */
  private keepEnd(): void {
    const end = this.end();
    if (end > 0) {
      this.sql.exec(
        "INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
        HISTORY_SEQ_KEY,
        String(end),
      );
    }
  }

  /** The history was just created, empty: nothing to read to know its end or size. */
  created(): void {
    this.last = 0;
    this.items = 0;
  }

  /** Items in the history: counted once, then kept as items are appended. */
  size(): number {
    this.items ??= this.count();
    return this.items;
  }

  /** The item count as last counted; null until counted, and after any rewrite. */
  private items: number | null = null;

  /**
   * The running summary as last read; undefined until read, and again after any write of
   * it (a save, a rewrite, a reset), so only a row SQLite holds is ever kept. Every turn
   * asks for it; it changes only when a turn summarizes.
   */
  private summary: { through: number; summary: T } | null | undefined = undefined;

  /** Drops what is known in memory (after a failed transaction); read again when needed. */
  forget(): void {
    this.last = null;
    this.items = null;
    this.summary = undefined;
  }

  /** Every row in order. Callers that only show history should page instead. */
  all(): HistoryRow<T>[] {
    return this.read("SELECT * FROM history_items ORDER BY seq");
  }

  /** The item stored under `id`, or null: one primary-key lookup. */
  byId(id: string): HistoryRow<T> | null {
    return this.read("SELECT * FROM history_items WHERE id = ?", id)[0] ?? null;
  }

  /** A page of rows after position `after` (exclusive), oldest first. */
  page(options: { after?: number; limit: number }): HistoryPage<T> {
    const rows = this.read(
      `SELECT * FROM history_items WHERE seq > ? ORDER BY seq LIMIT ${sqlLimit(options.limit + 1)}`,
      options.after ?? Number.NEGATIVE_INFINITY,
    );
    const more = rows.length > options.limit;
    const shown = rows.slice(0, options.limit);
    return { rows: shown, next: more ? (shown.at(-1)?.seq ?? null) : null, total: this.count() };
  }

  /**
   * Every item of one task, oldest first (for tools and tests; a task read takes its
   * newest messages with `newestMessagesOf`).
   */
  ofTask(taskId: string): HistoryRow<T>[] {
    return this.read(`SELECT * FROM history_items WHERE ${OF_TASK} ORDER BY seq`, taskId);
  }

  /**
   * A task's newest message items, oldest first, each with its characters of stored JSON:
   * at most `limit`, and no more than `chars` characters together, though always the
   * newest one. Stops reading at the first that does not fit.
   */
  newestMessagesOf(taskId: string, limit: number, chars: number): SizedRow<T>[] {
    const rows: SizedRow<T>[] = [];
    if (limit <= 0) return rows;
    let total = 0;
    for (const row of this.sql.exec<Row>(
      `SELECT * FROM history_items WHERE ${OF_TASK} AND type = 'message' ORDER BY seq DESC LIMIT ${sqlLimit(limit)}`,
      taskId,
    )) {
      // A chunked row is longer than its full chunks: one that cannot fit is not put together.
      if (row.body === null && rows.length > 0 && total + (row.chunks - 1) * CHUNK_CHARS >= chars)
        break;
      const body = row.body ?? this.reassemble(row.id);
      if (rows.length > 0 && total + body.length > chars) break;
      total += body.length;
      rows.push({
        seq: row.seq,
        taskId: row.task_id,
        item: JSON.parse(body) as T,
        chars: body.length,
      });
    }
    return rows.reverse();
  }

  /**
   * A task's newest user messages (at most `limit`, newest first) among its newest `seek`
   * rows. A row kept in chunks is returned whatever its role; check the item.
   */
  newestUserMessagesOf(taskId: string, limit: number, seek: number): HistoryRow<T>[] {
    return this.read(
      `SELECT * FROM (SELECT * FROM history_items WHERE ${OF_TASK} ORDER BY seq DESC LIMIT ${sqlLimit(seek)})
       WHERE type = 'message' AND (body IS NULL OR json_extract(body, '$.role') = 'user')
       LIMIT ${sqlLimit(limit)}`,
      taskId,
    );
  }

  /**
   * Rows strictly between two positions (null: no bound), newest first: a model turn
   * reads its window back from the end a page at a time instead of loading everything.
   */
  newest(after: number | null, before: number | null, limit: number): HistoryRow<T>[] {
    return this.read(
      `SELECT * FROM history_items WHERE seq > ? AND seq < ? ORDER BY seq DESC LIMIT ${sqlLimit(limit)}`,
      after ?? Number.NEGATIVE_INFINITY,
      before ?? Number.POSITIVE_INFINITY,
    );
  }

  /**
   * Instruction messages, config updates and summaries before `before`, through the
   * partial index `history_pinned` (in CONTEXT_SCHEMA): the first one and the newest `limit`,
   * oldest first.
   */
  pinned(before: number, limit: number): HistoryRow<T>[] {
    const newest = this.read(
      `SELECT * FROM history_items WHERE ${PINNED} AND seq < ? ORDER BY seq DESC LIMIT ${sqlLimit(limit)}`,
      before,
    ).reverse();
    const first = this.read(
      `SELECT * FROM history_items WHERE ${PINNED} AND seq < ? ORDER BY seq LIMIT 1`,
      before,
    );
    return first[0] && first[0].seq !== newest[0]?.seq ? [...first, ...newest] : newest;
  }

  /** The running summary a model turn's window starts from, or null. Callers must not change it. */
  runningSummary(): { through: number; summary: T } | null {
    if (this.summary === undefined) this.summary = this.readSummary();
    return this.summary;
  }

  private readSummary(): { through: number; summary: T } | null {
    const value = this.sql
      .exec<{ value: string }>("SELECT value FROM meta WHERE key = ?", RUNNING_SUMMARY)
      .toArray()[0]?.value;
    return value === undefined ? null : (JSON.parse(value) as { through: number; summary: T });
  }

  /**
   * Stores a new running summary unless it changed since `expected` was read (two turns
   * summarizing at once: the first one stored wins). True if stored.
   */
  saveRunningSummary(
    expected: { summary: T } | null,
    next: { through: number; summary: T },
  ): boolean {
    const body = JSON.stringify(next);
    // One `meta` row, never chunked: a summarizer answering at length is refused.
    if (body.length > CHUNK_CHARS) {
      throw new RangeError(
        `The running summary is ${body.length} characters of JSON; at most ${CHUNK_CHARS} fit its row`,
      );
    }
    this.summary = undefined;
    return this.storage.transactionSync(() => {
      // SQLite, not memory, decides the race between two turns summarizing.
      const current = this.readSummary();
      if ((current?.summary.id ?? null) !== (expected?.summary.id ?? null)) return false;
      this.sql.exec(
        "INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
        RUNNING_SUMMARY,
        body,
      );
      return true;
    });
  }

  count(): number {
    return this.sql.exec<{ n: number }>("SELECT COUNT(*) AS n FROM history_items").one().n;
  }

  /**
   * Applies a diff in one transaction: deleted rows go, new items take a position between
   * their survivor and the next row, changed items are rewritten in place. Nothing else
   * is touched, so compacting a long history costs what it removes and adds.
   */
  apply(diff: HistoryDiff<T>, taskOf: (item: T) => string | null = () => null): number {
    for (const item of [...diff.added.map((a) => a.item), ...diff.changed]) this.checkSize(item);
    this.last = null;
    this.items = null;
    this.summary = undefined;
    return this.storage.transactionSync(() => {
      this.keepEnd();
      // A rewritten history starts its model window afresh.
      let written = this.sql.exec("DELETE FROM meta WHERE key = ?", RUNNING_SUMMARY).rowsWritten;
      for (const id of diff.removed) {
        written += this.sql.exec("DELETE FROM history_items WHERE id = ?", id).rowsWritten;
        written += this.sql.exec("DELETE FROM history_chunks WHERE item_id = ?", id).rowsWritten;
      }
      for (const item of diff.changed) {
        const row = this.sql
          .exec<{ seq: number; task_id: string | null }>(
            "SELECT seq, task_id FROM history_items WHERE id = ?",
            item.id,
          )
          .toArray()[0];
        if (!row) continue;
        written += this.sql.exec("DELETE FROM history_items WHERE id = ?", item.id).rowsWritten;
        written += this.sql.exec(
          "DELETE FROM history_chunks WHERE item_id = ?",
          item.id,
        ).rowsWritten;
        written += this.write(item, row.seq, row.task_id);
      }
      // Consecutive additions after the same survivor keep their order.
      const lastPlaced = new Map<string | null, number>();
      for (const { item, afterId } of diff.added) {
        const anchor =
          lastPlaced.get(afterId) ??
          (afterId === null
            ? Number.NEGATIVE_INFINITY
            : (this.sql
                .exec<{ seq: number }>("SELECT seq FROM history_items WHERE id = ?", afterId)
                .toArray()[0]?.seq ?? Number.NEGATIVE_INFINITY));
        const next =
          this.sql
            .exec<{ seq: number | null }>(
              "SELECT MIN(seq) AS seq FROM history_items WHERE seq > ?",
              anchor,
            )
            .one().seq ?? null;
        const seq =
          anchor === Number.NEGATIVE_INFINITY
            ? next === null
              ? 1
              : next - 1
            : next === null
              ? anchor + 1
              : (anchor + next) / 2;
        const taskId = taskOf(item);
        written += this.write(item, seq, taskId);
        if (taskId !== null) this.onTaskItemPlaced?.(taskId, seq);
        lastPlaced.set(afterId, seq);
      }
      return written;
    });
  }

  /** Removes every item (a context reset). */
  clear(): void {
    this.last = null;
    this.items = null;
    this.summary = undefined;
    this.storage.transactionSync(() => {
      this.keepEnd();
      this.sql.exec("DELETE FROM history_items");
      this.sql.exec("DELETE FROM history_chunks");
      this.sql.exec("DELETE FROM meta WHERE key = ?", RUNNING_SUMMARY);
    });
  }

  private checkSize(item: T, body = JSON.stringify(item)): number {
    // A UTF-16 unit takes at most 3 UTF-8 bytes: short bodies need no encoding.
    if (body.length * 3 <= this.maxItemBytes) return body.length;
    const bytes = encoder.encode(body).byteLength;
    if (bytes > this.maxItemBytes) {
      throw new A2AError(
        "InvalidParams",
        `A conversation item of ${bytes} bytes exceeds the limit of ${this.maxItemBytes} bytes`,
        { itemId: item.id, bytes: String(bytes), limitBytes: String(this.maxItemBytes) },
      );
    }
    return bytes;
  }

  private write(item: T, seq: number, taskId: string | null): number {
    const body = JSON.stringify(item);
    this.checkSize(item, body);
    this.lastWrittenChars = body.length;
    if (body.length <= CHUNK_CHARS) {
      // The flag is a literal 0 or 1, never bound: each bound value costs workerd a few
      // thousand instructions, and the statement's text stays one of two.
      const pinned = pinnedFlag(item, false);
      // Nearly every item is a message: its type is a literal of a fixed text, one bound
      // parameter fewer.
      if (item.type === "message") {
        return this.sql.exec(
          `INSERT INTO history_items (id, seq, task_id, type, body, chunks, pinned) VALUES (?, ?, ?, 'message', ?, 0, ${pinned})`,
          item.id,
          seq,
          taskId,
          body,
        ).rowsWritten;
      }
      return this.sql.exec(
        `INSERT INTO history_items (id, seq, task_id, type, body, chunks, pinned) VALUES (?, ?, ?, ?, ?, 0, ${pinned})`,
        item.id,
        seq,
        taskId,
        item.type,
        body,
      ).rowsWritten;
    }
    let written = 0;
    const chunks = Math.ceil(body.length / CHUNK_CHARS);
    return this.storage.transactionSync(() => {
      for (let i = 0; i < chunks; i++) {
        written += this.sql.exec(
          "INSERT INTO history_chunks (item_id, idx, data) VALUES (?, ?, ?)",
          item.id,
          i,
          body.slice(i * CHUNK_CHARS, (i + 1) * CHUNK_CHARS),
        ).rowsWritten;
      }
      written += this.sql.exec(
        `INSERT INTO history_items (id, seq, task_id, type, body, chunks, pinned) VALUES (?, ?, ?, ?, NULL, ?, ${pinnedFlag(item, true)})`,
        item.id,
        seq,
        taskId,
        item.type,
        chunks,
      ).rowsWritten;
      return written;
    });
  }

  /** Parses row by row off the cursor, so raw rows and items are never all alive at once. */
  private read(query: string, ...args: SqlStorageValue[]): HistoryRow<T>[] {
    const rows: HistoryRow<T>[] = [];
    for (const row of this.sql.exec<Row>(query, ...args)) {
      rows.push({
        seq: row.seq,
        taskId: row.task_id,
        item: JSON.parse(row.body ?? this.reassemble(row.id)) as T,
      });
    }
    return rows;
  }

  private reassemble(id: string): string {
    return this.sql
      .exec<{ data: string }>("SELECT data FROM history_chunks WHERE item_id = ? ORDER BY idx", id)
      .toArray()
      .map((r) => r.data)
      .join("");
  }
}
