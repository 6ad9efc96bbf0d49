import * as z from "zod";
import { type Tools, tool } from "../../agent/tool";
import type { JsonValue } from "../../protocol/json";
import type { MemoryApplyResult, MemoryOp, MemoryOrigin } from "../../protocol/memory";
import type { MemoryStore } from "../object/memory-store";

/** The names of the memory tools, as the model sees them. */
export const MEMORY_TOOL_NAMES = [
  "remember",
  "forget",
  "set_goal",
  "update_goal",
  "describe_entity",
] as const;

const normal = (s: string) => s.toLowerCase().replace(/\s+/g, " ").trim();

/** One op applied; what the model is told (the store's status, id and reason). */
async function applyOne(stub: MemoryStore, op: MemoryOp, origin: MemoryOrigin): Promise<JsonValue> {
  const result: MemoryApplyResult = await stub.apply([op], origin);
  const first = result.results[0];
  if (!first) return { status: "unchanged" };
  return {
    status: first.status,
    ...(first.id ? { id: first.id } : {}),
    ...(first.reason ? { reason: first.reason } : {}),
  };
}

/**
 * Tools the model may call to edit the user's memory itself (as Letta's agents do):
 * remember a fact the user stated, forget one, set a goal and update it, describe a person,
 * place or thing they talk about. Each writes to
 * the turn's scope only; arguments are checked by the tool machinery and again by the store.
 */
export function memoryTools(stub: MemoryStore, origin: MemoryOrigin): Tools {
  /** The live fact whose claim is `claim` (as recalled), if any. */
  const factNamed = async (claim: string): Promise<string | undefined> => {
    const near = (await stub.neighbours([claim], 5))[0] ?? [];
    return near.find((f) => normal(f.claim) === normal(claim))?.id;
  };
  return {
    remember: tool({
      description:
        'Store a durable fact the user stated about themselves or their world, as one short sentence ("The user prefers tea."). To correct a remembered fact, give its claim, as remembered, in `replaces`.',
      input: z.object({
        claim: z.string().min(1).max(2_000),
        entities: z.array(z.string().min(1).max(256)).max(32).optional(),
        replaces: z.string().min(1).max(2_000).optional(),
      }),
      run: async ({ claim, entities, replaces }) => {
        // The model's call is its reading of the conversation, not the user's own words.
        const fields = { claim, source: "inferred" as const, ...(entities ? { entities } : {}) };
        const old = replaces ? await factNamed(replaces) : undefined;
        return applyOne(
          stub,
          old ? { op: "supersede_fact", id: old, ...fields } : { op: "add_fact", ...fields },
          origin,
        );
      },
    }),
    forget: tool({
      description:
        "Delete a remembered fact the user asks you to forget, by its claim as remembered.",
      input: z.object({ claim: z.string().min(1).max(2_000) }),
      run: async ({ claim }) => {
        const id = await factNamed(claim);
        if (!id) return { status: "unchanged", reason: "no remembered fact has that claim" };
        return applyOne(stub, { op: "delete_fact", id }, origin);
      },
    }),
    set_goal: tool({
      description: "Record a goal the user wants to reach (priority 1 highest to 5).",
      input: z.object({
        title: z.string().min(1).max(2_000),
        description: z.string().min(1).max(4_000).optional(),
        priority: z.number().int().min(1).max(5).optional(),
        deadline: z.iso.datetime({ offset: true }).optional(),
      }),
      run: (args) => applyOne(stub, { op: "set_goal", ...args }, origin),
    }),
    describe_entity: tool({
      description:
        "Record what you learnt about a person, place, organisation or thing the user talks about: its type, other names, a short description, and properties (merged into those already known; a known name or alias updates that entity).",
      input: z.object({
        name: z.string().min(1).max(256),
        type: z.string().min(1).max(256).optional(),
        aliases: z.array(z.string().min(1).max(256)).max(32).optional(),
        description: z.string().min(1).max(2_000).optional(),
        properties: z
          .record(z.string().max(256), z.union([z.string().max(1_000), z.number(), z.boolean()]))
          .optional(),
      }),
      run: (args) => applyOne(stub, { op: "upsert_entity", ...args }, origin),
    }),
    update_goal: tool({
      description:
        "Change a recorded goal, named by its title as remembered: its status, priority or deadline.",
      input: z.object({
        goal: z.string().min(1).max(2_000),
        status: z.enum(["active", "completed", "abandoned", "blocked"]).optional(),
        priority: z.number().int().min(1).max(5).optional(),
        deadline: z.iso.datetime({ offset: true }).optional(),
      }),
      run: async ({ goal, ...change }) => {
        const page = await stub.list({ kind: "goal", query: goal, pageSize: 20 });
        const found = page.items.find((i) => i.kind === "goal" && normal(i.title) === normal(goal));
        if (!found) return { status: "unchanged", reason: "no recorded goal has that title" };
        return applyOne(stub, { op: "update_goal", id: found.id, ...change }, origin);
      },
    }),
  };
}
