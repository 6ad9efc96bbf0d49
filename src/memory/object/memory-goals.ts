import { GLOBAL_CHANNEL } from "../../protocol/memory";
import { followsSequence, ftsQuery, queryTerms } from "../base/rank";
import {
  type GoalRow,
  memoryId,
  type Op,
  type OpResult as Result,
  type StrategyRow,
  textBytes,
  unknownItem,
  type WriteContext,
} from "./rows/memory-rows";

/**
 * Goals (what the user wants, nested) and strategies (what worked for a kind of request):
 * the writer's operations on them.
 */

/** Goals nest at most this deep: a chain longer than this is refused. */
export const MAX_GOAL_DEPTH = 16;
/** Strategies one outcome may update. */
const OUTCOME_CANDIDATES = 100;

function goalRow(w: WriteContext, id: string): GoalRow | undefined {
  return w.sql.exec<GoalRow>("SELECT * FROM goals WHERE id = ?", id).toArray()[0];
}

/** The ids from `id` up to its root goal, at most one past the depth limit. */
function ancestry(w: WriteContext, id: string): string[] {
  const chain: string[] = [];
  let at: string | null = id;
  while (at !== null && chain.length <= MAX_GOAL_DEPTH) {
    chain.push(at);
    at = goalRow(w, at)?.parent_id ?? null;
  }
  return chain;
}

export function setGoal(w: WriteContext, op: Op<"set_goal">): Result {
  if (op.parentId !== undefined) {
    if (!goalRow(w, op.parentId))
      return { op: op.op, status: "refused", reason: `no goal ${op.parentId}` };
    if (ancestry(w, op.parentId).length >= MAX_GOAL_DEPTH) {
      return {
        op: op.op,
        status: "refused",
        reason: `goals nest at most ${MAX_GOAL_DEPTH} deep`,
      };
    }
  }
  w.makeRoom(1);
  const id = memoryId("mg");
  w.sql.exec(
    `INSERT INTO goals (id, title, description, status, priority, parent_id, deadline, channel, created_at, updated_at, bytes)
     VALUES (?, ?, ?, 'active', ?, ?, ?, ?, ?, ?, ?)`,
    id,
    op.title,
    op.description ?? null,
    op.priority ?? 3,
    op.parentId ?? null,
    op.deadline ?? null,
    op.channel ?? GLOBAL_CHANNEL,
    w.now,
    w.now,
    textBytes(op.title, op.description),
  );
  return { op: op.op, status: "added", id };
}

export function updateGoal(w: WriteContext, op: Op<"update_goal">): Result {
  const goal = goalRow(w, op.id);
  if (!goal) return unknownItem(op);
  if (op.parentId !== undefined && op.parentId !== goal.parent_id) {
    if (!goalRow(w, op.parentId))
      return { op: op.op, status: "refused", id: op.id, reason: `no goal ${op.parentId}` };
    const chain = ancestry(w, op.parentId);
    if (chain.includes(op.id)) {
      return {
        op: op.op,
        status: "refused",
        id: op.id,
        reason: "a goal cannot be its own ancestor",
      };
    }
    if (chain.length >= MAX_GOAL_DEPTH) {
      return {
        op: op.op,
        status: "refused",
        id: op.id,
        reason: `goals nest at most ${MAX_GOAL_DEPTH} deep`,
      };
    }
  }
  const next = {
    title: op.title ?? goal.title,
    description: op.description ?? goal.description,
    status: op.status ?? goal.status,
    priority: op.priority ?? goal.priority,
    deadline: op.deadline ?? goal.deadline,
    parent_id: op.parentId ?? goal.parent_id,
  };
  const same = (Object.keys(next) as (keyof typeof next)[]).every((k) => next[k] === goal[k]);
  if (same) return { op: op.op, status: "unchanged", id: op.id };
  const bytes = textBytes(next.title, next.description ?? undefined);
  if (bytes > w.limits.maxItemBytes) {
    return {
      op: op.op,
      status: "refused",
      id: op.id,
      reason: "the goal would pass memory.limits.maxItemBytes",
    };
  }
  w.sql.exec(
    `UPDATE goals SET title = ?, description = ?, status = ?, priority = ?, deadline = ?,
       parent_id = ?, updated_at = ?, bytes = ? WHERE id = ?`,
    next.title,
    next.description,
    next.status,
    next.priority,
    next.deadline,
    next.parent_id,
    w.now,
    bytes,
    op.id,
  );
  return { op: op.op, status: "updated", id: op.id };
}

export function addStrategy(w: WriteContext, op: Op<"add_strategy">): Result {
  const sequence = JSON.stringify(op.toolSequence);
  const existing = w.sql
    .exec<{ id: string }>(
      "SELECT id FROM strategies WHERE context_pattern = ? AND tool_sequence = ?",
      op.contextPattern,
      sequence,
    )
    .toArray()[0];
  if (existing) return { op: op.op, status: "duplicate", id: existing.id };
  w.makeRoom(1);
  const id = memoryId("ms");
  w.sql.exec(
    `INSERT INTO strategies (id, context_pattern, tool_sequence, channel, created_at, updated_at, bytes)
     VALUES (?, ?, ?, ?, ?, ?, ?)`,
    id,
    op.contextPattern,
    sequence,
    op.channel ?? GLOBAL_CHANNEL,
    w.now,
    w.now,
    textBytes(op.contextPattern, ...op.toolSequence),
  );
  return { op: op.op, status: "added", id };
}

/**
 * A finished task's outcome counts for every strategy whose context pattern shares a
 * word with the task's text and whose tool sequence the task followed, in order.
 */
export function strategyOutcome(w: WriteContext, op: Op<"strategy_outcome">): Result {
  const terms = queryTerms(op.text);
  if (terms.length === 0 || op.toolSequence.length === 0) return { op: op.op, status: "unchanged" };
  const candidates = w.sql
    .exec<StrategyRow>(
      `SELECT s.* FROM strategies s WHERE s.rid IN (
         SELECT rowid FROM strategies_fts WHERE strategies_fts MATCH ? LIMIT ${OUTCOME_CANDIDATES})`,
      ftsQuery(terms),
    )
    .toArray();
  const matched = candidates.filter((s) =>
    followsSequence(JSON.parse(s.tool_sequence) as string[], op.toolSequence),
  );
  if (matched.length === 0) return { op: op.op, status: "unchanged" };
  const column = op.success ? "success_count" : "failure_count";
  for (const s of matched) {
    w.sql.exec(
      `UPDATE strategies SET ${column} = ${column} + 1, updated_at = ? WHERE id = ?`,
      w.now,
      s.id,
    );
  }
  return {
    op: op.op,
    status: "updated",
    id: (matched[0] as StrategyRow).id,
    ...(matched.length > 1 ? { reason: `${matched.length} strategies counted` } : {}),
  };
}
