import { A2AError } from "../../protocol/errors";
import {
  MEMORY_PAGE_SIZE,
  type MemoryItem,
  type MemoryKind,
  type MemoryListQuery,
  type MemoryPage,
} from "../../protocol/memory";
import { ftsQuery, queryTerms } from "../base/rank";
import {
  type EntityRow,
  entityOf,
  type FactRow,
  factOf,
  type GoalRow,
  goalOf,
  KIND_TABLES,
  type StrategyRow,
  strategyOf,
  type TurnRow,
  turnOf,
} from "./rows/memory-rows";

/** The memory object's listing: one item, or a page of a kind, newest first. */
export class MemoryListing {
  constructor(private readonly sql: SqlStorage) {}

  get(kind: MemoryKind, id: string): MemoryItem | null {
    const { table, columns } = KIND_TABLES[kind];
    const row = this.sql.exec(`SELECT ${columns} FROM ${table} f WHERE f.id = ?`, id).toArray()[0];
    return row ? itemOf(kind, row) : null;
  }

  /** One page of a kind's items, newest first, optionally only those matching a text. */
  list(q: MemoryListQuery): MemoryPage {
    const { table, columns } = KIND_TABLES[q.kind];
    const size = q.pageSize ?? MEMORY_PAGE_SIZE.default;
    const after = q.pageToken ? decodePageToken(q.pageToken, q.kind) : Number.MAX_SAFE_INTEGER;
    const terms = q.query ? queryTerms(q.query) : [];
    if (q.query && terms.length === 0) return { items: [], nextPageToken: "" };
    const where = [`f.rid < ?`];
    const params: SqlStorageValue[] = [after];
    if (terms.length) {
      where.push(`f.rid IN (SELECT rowid FROM ${table}_fts WHERE ${table}_fts MATCH ?)`);
      params.push(ftsQuery(terms));
    }
    if (q.kind === "fact" && !q.includeSuperseded) where.push("f.superseded_by IS NULL");
    const rows = this.sql
      .exec(
        `SELECT ${columns} FROM ${table} f WHERE ${where.join(" AND ")} ORDER BY f.rid DESC LIMIT ${size + 1}`,
        ...params,
      )
      .toArray();
    const more = rows.length > size;
    const page = rows.slice(0, size);
    const last = page[page.length - 1];
    return {
      items: page.map((row) => itemOf(q.kind, row)),
      nextPageToken: more && last ? encodePageToken(q.kind, last.rid as number) : "",
    };
  }
}

function itemOf(kind: MemoryKind, row: Record<string, SqlStorageValue>): MemoryItem {
  switch (kind) {
    case "fact":
      return { kind, ...factOf(row as FactRow) };
    case "entity":
      return { kind, ...entityOf(row as EntityRow) };
    case "goal":
      return { kind, ...goalOf(row as GoalRow) };
    case "strategy":
      return { kind, ...strategyOf(row as StrategyRow) };
    case "turn":
      return { kind, ...turnOf(row as TurnRow) };
  }
}

function encodePageToken(kind: MemoryKind, rid: number): string {
  return btoa(JSON.stringify([kind, rid])).replaceAll("=", "");
}

function decodePageToken(token: string, kind: MemoryKind): number {
  try {
    const value: unknown = JSON.parse(atob(token));
    if (
      Array.isArray(value) &&
      value.length === 2 &&
      value[0] === kind &&
      Number.isSafeInteger(value[1]) &&
      value[1] > 0
    ) {
      return value[1] as number;
    }
  } catch {
    // Not base64 or not JSON: refused below like any other forged token.
  }
  throw new A2AError("InvalidParams", "Invalid parameters: pageToken: unknown page token", {}, [
    { field: "pageToken", description: "unknown page token (of another listing, or forged)" },
  ]);
}
