import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { IndexRow } from "../../src/index/index-object";
import { type IndexScope, listIndex } from "../../src/index/index-shards";
import { indexObjectName } from "../../src/storage/ids";
import { INDEX_LISTING_KEEP, INDEX_MOVES_PRUNE_STEP } from "../../src/storage/schema";

/**
 * The tenant index's listing bookkeeping, kept by its upsert (no trigger but on delete):
 * against a real index object, through the listing ListTasks uses (one shard).
 */

type Upsert = { upsert(rows: IndexRow[]): Promise<void> };

const newScope = (): IndexScope => ({
  tenant: `index-listing-${crypto.randomUUID()}`,
  owner: "",
  shards: 1,
});
const stubOf = (scope: IndexScope) =>
  env.EDGELINK_INDEX.get(
    env.EDGELINK_INDEX.idFromName(indexObjectName(scope.tenant, scope.owner, 0, 1)),
  );
const put = (scope: IndexScope, rows: IndexRow[]) =>
  (stubOf(scope) as unknown as Upsert).upsert(rows);

const at = (second: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, second)).toISOString();
const row = (taskId: string, second: number, state = "working"): IndexRow => ({
  taskId,
  contextId: "ctx",
  state,
  createdAt: at(0),
  updatedAt: at(second),
});

async function page(scope: IndexScope, pageSize: number, pageToken?: string) {
  const p = await listIndex(env.EDGELINK_INDEX, scope, { pageSize, pageToken });
  return { ids: p.rows.map((r) => r.taskId), next: p.nextPageToken };
}

/** SQLite's `list_clock`: brought up to the clock only when a page names its snapshot. */
const storedClock = (scope: IndexScope) =>
  runInDurableObject(
    stubOf(scope),
    (_i, state) => state.storage.sql.exec<{ seq: number }>("SELECT seq FROM list_clock").one().seq,
  );

const listing = (scope: IndexScope) =>
  runInDurableObject(stubOf(scope), (instance, state) => {
    const sql = state.storage.sql;
    // White-box: the clock the object keeps in memory (as SQLite has it before its first write).
    const kept = (instance as unknown as { listing: { clock: number } | null }).listing;
    return {
      clock: kept?.clock ?? sql.exec<{ seq: number }>("SELECT seq FROM list_clock").one().seq,
      moves: sql
        .exec("SELECT seq, prev_seq, task_id, old_updated_at FROM list_moves ORDER BY seq")
        .toArray(),
      seqs: Object.fromEntries(
        sql
          .exec<{ task_id: string; row_seq: number }>("SELECT task_id, row_seq FROM task_index")
          .toArray()
          .map((r) => [r.task_id, r.row_seq]),
      ),
    };
  });

describe("tenant index: the listing kept by its writer, not by triggers", () => {
  it("rows updated between page reads are neither skipped nor repeated: each move is recorded", async () => {
    const scope = newScope();
    // r0..r9, r9 the newest.
    await put(
      scope,
      Array.from({ length: 10 }, (_, i) => row(`r${i}`, 10 + i)),
    );
    const whole = (await page(scope, 100)).ids;
    expect(whole).toEqual(["r9", "r8", "r7", "r6", "r5", "r4", "r3", "r2", "r1", "r0"]);

    const page1 = await page(scope, 3);
    // In one call: a task not listed yet and a listed one move to the top, a new task
    // arrives, an older update of r4 comes late (it must not overwrite), and r3 changes
    // state at the same time (same place: no move).
    await put(scope, [
      row("r5", 30),
      row("r8", 31),
      row("new", 32),
      row("r4", 5, "completed"),
      row("r3", 13, "input-required"),
    ]);
    const page2 = await page(scope, 3, page1.next);
    // One call, one row: r2 moves before the page that lists it.
    await put(scope, [row("r2", 33)]);
    const page3 = await page(scope, 3, page2.next);
    const page4 = await page(scope, 3, page3.next);
    expect([page1.ids, page2.ids, page3.ids, page4.ids]).toEqual([
      ["r9", "r8", "r7"],
      ["r6", "r5", "r4"],
      ["r3", "r2", "r1"],
      ["r0"],
    ]);
    expect(page4.next).toBe("");

    // What the triggers recorded: each move with the row's old place. Every row of a call
    // takes the next clock value in order; the late and the same-place rows keep their
    // place and leave theirs (14, 15) unused.
    const after = await listing(scope);
    expect(after.clock).toBe(16);
    expect(after.moves).toEqual([
      { seq: 11, prev_seq: 6, task_id: "r5", old_updated_at: at(15) },
      { seq: 12, prev_seq: 9, task_id: "r8", old_updated_at: at(18) },
      { seq: 16, prev_seq: 3, task_id: "r2", old_updated_at: at(12) },
    ]);
    expect(after.seqs).toMatchObject({ new: 13, r4: 5, r3: 4, r2: 16 });

    // A new listing sees the changes; the late update did not land, the same-place one did.
    expect((await page(scope, 100)).ids).toEqual([
      "r2",
      "new",
      "r8",
      "r5",
      "r9",
      "r7",
      "r6",
      "r4",
      "r3",
      "r1",
      "r0",
    ]);
    const states = await runInDurableObject(stubOf(scope), (_i, state) =>
      state.storage.sql
        .exec<{ task_id: string; state: string }>(
          "SELECT task_id, state FROM task_index WHERE task_id IN ('r3', 'r4') ORDER BY task_id",
        )
        .toArray(),
    );
    expect(states).toEqual([
      { task_id: "r3", state: "input-required" },
      { task_id: "r4", state: "working" },
    ]);
  });

  it("moves older than the INDEX_LISTING_KEEP newest are pruned once INDEX_MOVES_PRUNE_STEP of them have expired: never more than keep + step are left", async () => {
    const scope = newScope();
    await put(scope, [row("x", 1), row("y", 2)]);
    await put(scope, [row("x", 3)]);
    expect((await listing(scope)).moves).toEqual([
      { seq: 3, prev_seq: 1, task_id: "x", old_updated_at: at(1) },
    ]);
    // As if enough changes had come since for the next move to be the last before a prune
    // is due (white-box: the clock in memory and in SQLite, as those writes left them).
    const bump = (by: number) =>
      runInDurableObject(stubOf(scope), (instance, state) => {
        const kept = instance as unknown as { listing: { clock: number } };
        kept.listing.clock += by;
        state.storage.sql.exec("UPDATE list_clock SET seq = ?", kept.listing.clock);
      });
    await bump(INDEX_LISTING_KEEP + INDEX_MOVES_PRUNE_STEP - 5);
    await put(scope, [row("y", 4)]);
    const due = INDEX_LISTING_KEEP + INDEX_MOVES_PRUNE_STEP - 1;
    // Expired (over INDEX_LISTING_KEEP values old) but within the step: still there.
    expect((await listing(scope)).moves.map((m) => m.seq)).toEqual([3, due]);
    await put(scope, [row("x", 5)]);
    const after = await listing(scope);
    expect(after.clock).toBe(due + 1);
    expect(after.moves).toEqual([
      { seq: due, prev_seq: 2, task_id: "y", old_updated_at: at(2) },
      { seq: due + 1, prev_seq: 3, task_id: "x", old_updated_at: at(3) },
    ]);
  });

  it("a removed task is listed by no page, not even at a place its moves recorded for a token issued before", async () => {
    const scope = newScope();
    await put(scope, [row("a", 1), row("b", 2), row("c", 3)]);
    const first = await page(scope, 1);
    expect(first.ids).toEqual(["c"]);
    // b moves after the token (its old place is recorded), then retention removes it.
    await put(scope, [row("b", 10)]);
    await (stubOf(scope) as unknown as { remove(ids: string[]): Promise<void> }).remove(["b"]);
    expect((await page(scope, 10, first.next)).ids).toEqual(["a"]);
    expect((await page(scope, 10)).ids).toEqual(["c", "a"]);
    // Its move stays (no index by task to find it), expiring with the others.
    expect((await listing(scope)).moves.map((m) => m.task_id)).toEqual(["b"]);
  });

  it("a call of more rows than one statement takes is split; its rows still take the clock in order", async () => {
    const scope = newScope();
    const id = (n: number) => `t${String(n).padStart(4, "0")}`;
    // 600 rows: 500 in the first statement, 100 in the second.
    await put(
      scope,
      Array.from({ length: 600 }, (_, n) => row(id(n), 1)),
    );
    await put(scope, [row(id(599), 5), row(id(0), 4), row(id(550), 1, "completed")]);
    const after = await listing(scope);
    expect(after.clock).toBe(603);
    expect(after.seqs).toMatchObject({
      [id(0)]: 602,
      [id(499)]: 500,
      [id(500)]: 501,
      [id(550)]: 551,
      [id(599)]: 601,
    });
    expect(after.moves.map((m) => [m.seq, m.prev_seq, m.task_id])).toEqual([
      [601, 600, id(599)],
      [602, 1, id(0)],
    ]);
    expect((await page(scope, 3)).ids).toEqual([id(599), id(0), id(598)]);
  });

  it("an upsert writes no list_clock; a page brings it up to the clock before naming its snapshot", async () => {
    const scope = newScope();
    await put(scope, [row("a", 1), row("b", 2)]);
    await put(scope, [row("a", 3)]);
    expect((await listing(scope)).clock).toBe(3);
    expect(await storedClock(scope)).toBe(0);
    const first = await page(scope, 1);
    expect(first.ids).toEqual(["a"]);
    expect(await storedClock(scope)).toBe(3);
    // A change after the page: the token's snapshot (3) still lists b where it was.
    await put(scope, [row("b", 4)]);
    expect(await storedClock(scope)).toBe(3);
    expect((await page(scope, 5, first.next)).ids).toEqual(["b"]);
  });

  it("the clock survives a restart of the object: rows written after it are newer than every token", async () => {
    const scope = newScope();
    await put(scope, [row("a", 3), row("b", 2), row("c", 1)]);
    const page1 = await page(scope, 1);
    expect(page1.ids).toEqual(["a"]);

    // A new instance of the object: nothing of the old one's memory is left.
    await runInDurableObject(stubOf(scope), (_i, state) => state.abort("restart")).catch(() => {});
    const fresh = await runInDurableObject(
      stubOf(scope),
      (instance) => (instance as unknown as { listing: unknown }).listing,
    );
    expect(fresh).toBeNull();

    // b (not listed yet) moves to the top, and a task arrives late, older than b.
    await put(scope, [row("b", 10), row("late", 2)]);

    // The token of before pages as its first page saw the list: b at its old place, the
    // late task not in it (with the clock back at 0, b would take a place inside the
    // snapshot and be skipped, and the late task would be listed).
    const page2 = await page(scope, 10, page1.next);
    expect(page2.ids).toEqual(["b", "c"]);
    expect(page2.next).toBe("");
    expect((await page(scope, 10)).ids).toEqual(["b", "a", "late", "c"]);

    const after = await listing(scope);
    expect(after.clock).toBe(5);
    expect(after.seqs).toMatchObject({ a: 1, b: 4, c: 3, late: 5 });
    expect(after.moves).toEqual([{ seq: 4, prev_seq: 2, task_id: "b", old_updated_at: at(2) }]);
  });
});
