import * as z from "zod";
import { invalidParams } from "../../protocol/errors";
import {
  MEMORY_INPUT,
  type MemoryApplyResult,
  type MemoryBundle,
  MemoryKind,
  type MemoryOp,
} from "../../protocol/memory";
import { textBytes, turnBytes } from "./rows/memory-rows";

/**
 * What the memory object's RPC methods accept, checked before anything is read or
 * written: every call comes from the Worker, but the values in it may come from a client
 * or a model.
 */

/** Most claims one `neighbours` call looks up, and most neighbours per claim. */
export const NEIGHBOUR_CLAIMS = 32;
export const MAX_NEIGHBOURS = 20;

export const NeighboursQuery = z.strictObject({
  claims: z.array(z.string().max(MEMORY_INPUT.text)).max(NEIGHBOUR_CLAIMS),
  k: z.number().int().min(1).max(MAX_NEIGHBOURS),
});
export const ItemRef = z.strictObject({
  kind: MemoryKind,
  id: z.string().min(1).max(MEMORY_INPUT.id),
});

/** Operations that only change what exists: on an empty memory they change nothing. */
export const CHANGES_ONLY = new Set<MemoryOp["op"]>([
  "supersede_fact",
  "delete_fact",
  "update_goal",
  "strategy_outcome",
]);

/** The value `schema` accepts, or InvalidParams naming each bad field (under `prefix`). */
export function parse<T>(schema: z.ZodType<T>, value: unknown, prefix = ""): T {
  const parsed = schema.safeParse(value);
  if (!parsed.success) throw invalidParams(parsed.error.issues, prefix);
  return parsed.data;
}

/** The text an item-size check names for each kind of operation, with its bytes. */
function itemText(op: MemoryOp): { field: string; bytes: number } | null {
  switch (op.op) {
    case "add_fact":
    case "supersede_fact":
      return { field: "claim", bytes: textBytes(op.claim, ...(op.entities ?? [])) };
    case "upsert_entity":
      return {
        field: "name",
        bytes: textBytes(
          op.name,
          op.type,
          op.description,
          op.properties ? JSON.stringify(op.properties) : undefined,
          ...(op.aliases ?? []),
        ),
      };
    case "set_goal":
      return { field: "title", bytes: textBytes(op.title, op.description) };
    case "update_goal":
      return { field: "title", bytes: textBytes(op.title, op.description) };
    case "add_strategy":
      return { field: "contextPattern", bytes: textBytes(op.contextPattern, ...op.toolSequence) };
    case "add_turn":
      return { field: "content", bytes: turnBytes(op.content, op.metadata) };
    default:
      return null;
  }
}

export const emptyBundle = (query: string): MemoryBundle => ({
  query,
  facts: [],
  entities: [],
  goals: [],
  strategies: [],
  turns: [],
  tokens: 0,
  truncated: false,
});

/** Refuses the batch when an item's text is over the memory's `maxItemBytes`, naming it. */
export function checkItemSizes(ops: readonly MemoryOp[], maxItemBytes: number): void {
  ops.forEach((op, i) => {
    const text = itemText(op);
    if (text && text.bytes > maxItemBytes) {
      throw invalidParams([
        {
          path: ["ops", i, text.field],
          message: `the item is ${text.bytes} bytes, over memory.limits.maxItemBytes (${maxItemBytes})`,
        },
      ]);
    }
  });
}

/** What a batch of CHANGES_ONLY operations answers on an empty memory: nothing changed. */
export function nothingChanged(ops: readonly MemoryOp[]): MemoryApplyResult {
  return {
    results: ops.map((op) => ({
      op: op.op,
      status: op.op === "strategy_outcome" ? ("unchanged" as const) : ("refused" as const),
      ...("id" in op ? { id: op.id, reason: `no such item ${op.id}` } : {}),
    })),
  };
}
