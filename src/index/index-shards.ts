import { base64url } from "jose";
import { A2AError } from "../protocol/errors";
import { decodeCursor, indexObjectName, indexShardOf } from "../storage/ids";
import { badPageToken, type ListPosition, type PageQuery } from "../storage/paging";
import type { IndexRpc, ShardPage } from "./index-object";

/** Whose index, and over how many shards (`limits.indexShards`). */
export interface IndexScope {
  tenant: string;
  owner: string;
  shards: number;
}

/** One page of the index across its shards, in ListTasks order. */
export interface IndexPage {
  rows: { taskId: string; contextId: string }[];
  totalSize: number;
  /** Empty on the last page (§3.1.4). */
  nextPageToken: string;
  /** The token of a page that ends early, after `rows[index]`. */
  tokenAfter(index: number): string;
}

/** The shard holding a conversation's index rows (see `indexShardOf`). */
export function indexShardFor(
  ns: DurableObjectNamespace,
  scope: IndexScope,
  contextId: string,
): IndexRpc {
  return shardStub(ns, scope, indexShardOf(contextId, scope.shards));
}

function shardStub(ns: DurableObjectNamespace, scope: IndexScope, shard: number): IndexRpc {
  const name = indexObjectName(scope.tenant, scope.owner, shard, scope.shards);
  return ns.get(ns.idFromName(name)) as unknown as IndexRpc;
}

/**
 * A page token of the sharded index: the place and id of the last task listed (one
 * position serves every shard: each lists its rows in the same total order, so a shard
 * resumes after that key) and each shard's snapshot, by shard number.
 */
interface ShardedCursor extends ListPosition {
  snapshots: (number | null)[];
}

/** Longer tokens are refused unread (64 shards and the longest task id fit well within). */
const MAX_TOKEN_LENGTH = 8192;

function encodeShardedCursor(c: ShardedCursor): string {
  return base64url.encode(JSON.stringify([c.updatedAt, c.taskId, c.snapshots]));
}

/**
 * The cursor of a token this listing issued, or null. With one shard, tokens of the
 * unsharded index (`encodeCursor`) still read: the index kept its object and its counter.
 */
function decodeShardedCursor(token: string, shards: number): ShardedCursor | null {
  if (token.length > MAX_TOKEN_LENGTH) return null;
  let value: unknown;
  try {
    value = JSON.parse(
      new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(base64url.decode(token)),
    );
  } catch {
    return null;
  }
  if (
    Array.isArray(value) &&
    value.length === 3 &&
    typeof value[0] === "string" &&
    typeof value[1] === "string" &&
    Array.isArray(value[2]) &&
    value[2].length === shards &&
    value[2].every((s) => Number.isSafeInteger(s) && s >= 0)
  ) {
    return { updatedAt: value[0], taskId: value[1], snapshots: value[2] as number[] };
  }
  if (shards !== 1) return null;
  const single = decodeCursor(token);
  return (
    single && { updatedAt: single.updatedAt, taskId: single.taskId, snapshots: [single.snapshot] }
  );
}

/**
 * SQLite's BINARY order of two strings (their UTF-8 bytes), which is code point order:
 * UTF-16 units agree with it except that surrogates (U+D800–DFFF, astral characters)
 * sort after U+E000–FFFF.
 */
export function compareBinary(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    let x = a.charCodeAt(i);
    let y = b.charCodeAt(i);
    if (x === y) continue;
    if (x >= 0xd800 && y >= 0xd800) {
      x += x <= 0xdfff ? 0x2000 : -0x800;
      y += y <= 0xdfff ? 0x2000 : -0x800;
    }
    return x - y;
  }
  return a.length - b.length;
}

/** ListTasks order, as every shard's SQL has it: `updated_at DESC, task_id DESC`. */
export function listOrder(a: ListPosition, b: ListPosition): number {
  return compareBinary(b.updatedAt, a.updatedAt) || compareBinary(b.taskId, a.taskId);
}

/**
 * One ListTasks page across conversations: every shard is asked in parallel for its rows
 * after the token's position in its own snapshot, the answers are merged in ListTasks
 * order, and the token of the next page carries each shard's snapshot. A task lives in
 * one shard, so the merge of the shards' stable listings is itself stable: a task updated
 * between page reads is neither skipped nor repeated. `totalSize` is the shards' sum.
 * A token forged, of another shard count, or expired is InvalidParams naming it; the
 * shards asked are the caller's own whatever the token says. `sendRows` has marked
 * conversations (see `IndexMark`) send their pending rows before the page is read.
 */
export async function listIndex(
  ns: DurableObjectNamespace,
  scope: IndexScope,
  q: PageQuery,
  sendRows: (contextIds: string[]) => Promise<void> = async () => {},
): Promise<IndexPage> {
  const cursor = q.pageToken ? decodeShardedCursor(q.pageToken, scope.shards) : null;
  if (q.pageToken && !cursor) {
    throw badPageToken("pageToken is not a token this server issued for this listing");
  }
  const filters = {
    state: q.state,
    statusTimestampAfter: q.statusTimestampAfter,
    pageSize: q.pageSize,
  };
  const after = cursor && { updatedAt: cursor.updatedAt, taskId: cursor.taskId };
  const ask = (shard: number, marks: boolean) =>
    shardStub(ns, scope, shard).query({
      ...filters,
      after,
      snapshot: cursor?.snapshots[shard] ?? null,
      marks,
    });
  let answers = await Promise.all(Array.from({ length: scope.shards }, (_, s) => ask(s, true)));
  // Read-your-writes: marked conversations send their rows, then their shards answer
  // (marks set meanwhile cover answers given after this listing began: not waited for).
  const marked = answers.flatMap((a) => (a.ok && "marked" in a ? a.marked : []));
  if (marked.length) {
    await sendRows(marked);
    answers = await Promise.all(answers.map((a, s) => (a.ok && "marked" in a ? ask(s, false) : a)));
  }
  const pages: ShardPage[] = [];
  for (const answer of answers) {
    if (!answer.ok) throw A2AError.fromData(answer.error);
    // Asked again without marks, a shard answers its page.
    if ("value" in answer) pages.push(answer.value);
  }
  const merged = pages.flatMap((p) => p.rows).sort(listOrder);
  const shown = merged.slice(0, q.pageSize);
  const tokenAfter = (index: number) => {
    const row = shown[index];
    return row
      ? encodeShardedCursor({
          updatedAt: row.updatedAt,
          taskId: row.taskId,
          snapshots: pages.map((p) => p.snapshot),
        })
      : "";
  };
  return {
    rows: shown.map((r) => ({ taskId: r.taskId, contextId: r.contextId })),
    totalSize: pages.reduce((sum, p) => sum + p.totalSize, 0),
    nextPageToken: merged.length > q.pageSize ? tokenAfter(shown.length - 1) : "",
    tokenAfter,
  };
}
