/**
 * A task's artifacts as rows: a task's first artifact in its own row when small (the
 * `first_artifact` columns of `tasks`), the others in `artifacts` (a header, and its first
 * parts inline when small) and `artifact_parts` (one row per appended or large part),
 * written and read back.
 */
import type { Artifact } from "../../protocol/artifact";
import type { Part } from "../../protocol/part";
import { keyOfTaskId, taskRow } from "../../storage/task-keys";

/** Characters of stored JSON per artifact of a task, and their sum. */
export interface ArtifactSizes {
  each: Map<string, number>;
  total: number;
  /** The artifact kept in the task's own row, if any (see INLINE_ARTIFACT_CHARS). */
  inTask: string | null;
}

/**
 * A task's first artifact is kept in the task's row (no B-tree of its own to write) while
 * its header and parts take at most this many characters of JSON and nothing is appended
 * to it; past that, or once it is appended to, it goes to `artifacts` as the first there.
 */
export const INLINE_ARTIFACT_CHARS = 2048;

/** The columns of `tasks` holding its first artifact: the header, and the parts. */
export interface TaskArtifactColumns {
  first_artifact: string | null;
  first_artifact_parts: string | null;
}

/** Whether an artifact (header and inline parts, as JSON) fits in its task's row. */
export function fitsTaskRow(headerJson: string, inline: string | null): boolean {
  return inline !== null && headerJson.length + inline.length <= INLINE_ARTIFACT_CHARS;
}

/** Inline parts take at most this many characters of JSON (the row keeps its header too). */
export const INLINE_PARTS_CHARS = 64 * 1024;

/**
 * The JSON array of an artifact's parts to keep in its own row, or null when they go in
 * part rows (too big together, or no parts).
 */
export function inlineParts(header: string, bodies: readonly string[]): string | null {
  if (bodies.length === 0) return null;
  let length = header.length + bodies.length + 1;
  for (const body of bodies) length += body.length;
  return length <= INLINE_PARTS_CHARS ? `[${bodies.join(",")}]` : null;
}

/**
 * A task's rows here are keyed by its conversation-local integer key (see the schema's
 * version 4): found from its id in the statement itself (the key it carries; see task-keys.ts).
 */
const TASK_KEY = `(SELECT key FROM tasks WHERE ${taskRow()})`;

/**
 * The artifact kept in a task's row goes to `artifacts`, ahead of the others there (seq 0:
 * the table's own rows start at 1), before it is appended to or outgrows the row. The
 * caller then clears the task's columns (the task store writes `tasks`).
 */
export function moveOutOfTask(sql: SqlStorage, taskId: string, artifactId: string): void {
  sql.exec(
    `INSERT INTO artifacts (task_key, artifact_id, seq, header, parts)
     SELECT key, ?2, 0, first_artifact, first_artifact_parts FROM tasks WHERE ${taskRow()}`,
    taskId,
    artifactId,
  );
}

/**
 * The same move for an artifact whose place in the task's row is not written yet (held
 * until the transaction ends): its row is written from the held JSON, and the task's row
 * is then written once, without it. The key is the one the task's id carries, so nothing
 * reads `tasks`, whose row may not be written yet; the caller knows the task.
 */
export function moveHeldOutOfTask(
  sql: SqlStorage,
  taskId: string,
  artifactId: string,
  held: { header: string; parts: string | null },
): void {
  sql.exec(
    `INSERT INTO artifacts (task_key, artifact_id, seq, header, parts)
     VALUES (${keyOfTaskId("?1")}, ?2, 0, ?3, ?4)`,
    taskId,
    artifactId,
    held.header,
    held.parts,
  );
}

/**
 * Part rows written in the open transaction, held until the task store settles its rows
 * (before its next statement, or as the transaction ends) and then written by one INSERT
 * per artifact: a streamed answer's chunks in one transaction are one statement, not one
 * each. Their task's row is written first, which their key is read from.
 */
export class PendingPartRows {
  private rows: { taskId: string; artifactId: string; idx: number; body: string }[] = [];

  get empty(): boolean {
    return this.rows.length === 0;
  }

  add(taskId: string, artifactId: string, start: number, bodies: readonly string[]): void {
    bodies.forEach((body, i) => {
      this.rows.push({ taskId, artifactId, idx: start + i, body });
    });
  }

  /** The transaction failed: nothing held was written. */
  clear(): void {
    this.rows = [];
  }

  /**
   * Writes the held rows, one statement per run of one artifact's rows. The statement's
   * text is the same whatever the number of rows (the bodies go as one JSON array of
   * strings), so SQLite prepares it once; its task's key is read once.
   */
  write(sql: SqlStorage): void {
    const rows = this.rows;
    this.rows = [];
    for (let i = 0; i < rows.length; ) {
      const { taskId, artifactId, idx } = rows[i] as (typeof rows)[number];
      const bodies: string[] = [];
      let chars = 0;
      for (; i < rows.length; i++) {
        const row = rows[i] as (typeof rows)[number];
        if (row.taskId !== taskId || row.artifactId !== artifactId) break;
        if (row.idx !== idx + bodies.length) break;
        // One bound value stays well under SQLite's limit on a value's size.
        if (bodies.length > 0 && chars + row.body.length > PART_CHARS_PER_STATEMENT) break;
        bodies.push(row.body);
        chars += row.body.length;
      }
      sql.exec(
        `INSERT INTO artifact_parts (task_key, artifact_id, idx, body)
         SELECT ${TASK_KEY}, ?2, ?3 + j.key, j.value FROM json_each(?4) AS j`,
        taskId,
        artifactId,
        idx,
        JSON.stringify(bodies),
      );
    }
  }
}

/** Characters of part bodies bound in one statement (a body alone may be larger). */
const PART_CHARS_PER_STATEMENT = 256 * 1024;

/**
 * Writes an artifact's rows. A new or replaced artifact's parts go in its row when they
 * are small (no part rows); appended parts always get rows of their own, numbered after
 * the `known` artifact's parts, held in `parts` until the store settles.
 */
export function writeArtifact(
  /** The store's SQL, asked for only when a statement runs now (asking settles the rows). */
  store: { readonly sql: SqlStorage },
  parts: PendingPartRows,
  taskId: string,
  artifactId: string,
  known: Artifact | undefined,
  appending: boolean,
  bodies: string[],
  headerJson: string,
  inline: string | null,
): void {
  let start = 0;
  let rows = bodies;
  if (appending) {
    start = (known as Artifact).parts.length;
  } else {
    if (inline !== null) rows = [];
    const { sql } = store;
    if (known) {
      sql.exec(
        `DELETE FROM artifact_parts WHERE task_key = ${TASK_KEY} AND artifact_id = ?2`,
        taskId,
        artifactId,
      );
      sql.exec(
        `UPDATE artifacts SET header = ?3, parts = ?4 WHERE task_key = ${TASK_KEY} AND artifact_id = ?2`,
        taskId,
        artifactId,
        headerJson,
        inline,
      );
    } else {
      sql.exec(
        `INSERT INTO artifacts (task_key, artifact_id, seq, header, parts)
         VALUES (${TASK_KEY}, ?2, (SELECT COALESCE(MAX(seq), 0) + 1 FROM artifacts WHERE task_key = ${TASK_KEY}), ?3, ?4)`,
        taskId,
        artifactId,
        headerJson,
        inline,
      );
    }
  }
  parts.add(taskId, artifactId, start, rows);
}

/**
 * A task's artifacts, with the characters of stored JSON they take: the one in its row
 * first (`row`, the task's columns when the caller has read them), then the table's.
 */
export function readArtifacts(
  sql: SqlStorage,
  taskId: string,
  row?: TaskArtifactColumns,
): { artifacts: Artifact[]; chars: number; sizes: ArtifactSizes } {
  const parts = new Map<string, Part[]>();
  const each = new Map<string, number>();
  let chars = 0;
  const own =
    row ??
    sql
      .exec<TaskArtifactColumns & Record<string, SqlStorageValue>>(
        `SELECT first_artifact, first_artifact_parts FROM tasks WHERE ${taskRow()}`,
        taskId,
      )
      .toArray()[0];
  let first: Artifact | null = null;
  if (own?.first_artifact) {
    const header = JSON.parse(own.first_artifact) as Omit<Artifact, "parts">;
    const stored = own.first_artifact_parts ?? "[]";
    first = { ...header, parts: JSON.parse(stored) as Part[] };
    chars = own.first_artifact.length + stored.length;
    each.set(header.artifactId, chars);
  }
  for (const r of sql.exec<{ artifact_id: string; body: string }>(
    `SELECT artifact_id, body FROM artifact_parts WHERE task_key = ${TASK_KEY} ORDER BY artifact_id, idx`,
    taskId,
  )) {
    const list = parts.get(r.artifact_id) ?? [];
    list.push(JSON.parse(r.body) as Part);
    parts.set(r.artifact_id, list);
    chars += r.body.length;
    each.set(r.artifact_id, (each.get(r.artifact_id) ?? 0) + r.body.length);
  }
  const artifacts = sql
    .exec<{ artifact_id: string; header: string; parts: string | null }>(
      `SELECT artifact_id, header, parts FROM artifacts WHERE task_key = ${TASK_KEY} ORDER BY seq`,
      taskId,
    )
    .toArray()
    // Rows this store wrote itself: rebuilt, not re-validated (hot path of every read).
    // The inline parts come first: appended part rows are numbered after them.
    .map((r) => {
      const appended = parts.get(r.artifact_id) ?? [];
      const own = r.header.length + (r.parts?.length ?? 0);
      chars += own;
      each.set(r.artifact_id, (each.get(r.artifact_id) ?? 0) + own);
      return {
        ...(JSON.parse(r.header) as Omit<Artifact, "parts">),
        parts: r.parts === null ? appended : [...(JSON.parse(r.parts) as Part[]), ...appended],
      };
    });
  if (first) artifacts.unshift(first);
  return {
    artifacts,
    chars,
    sizes: { each, total: chars, inTask: first?.artifactId ?? null },
  };
}
