import * as z from "zod";
import type { JsonObject } from "../../protocol/json";
import type { MemoryFact, MemoryOp, MemoryOrigin } from "../../protocol/memory";
import { generate } from "../../providers/base/collect";
import { addUsage, type Model, type Usage } from "../../providers/base/types";
import { logEvent } from "../../telemetry/log";
import type { MemoryStore } from "../object/memory-store";

/** Existing facts shown to the extraction model, to decide add / update / delete / nothing. */
export const EXTRACTION_NEIGHBOURS = 8;
/** Most facts and entities one extraction may write. */
const MAX_EXTRACTED = 16;

/** The instructions of the extraction call. */
export const EXTRACTION_PROMPT = `You maintain a long-term memory about the user of an assistant.
Read the user's latest message (and the assistant's answer, for context only) and list durable facts the USER stated or clearly implied about themselves, their preferences, their plans or their world. Ignore small talk, questions, and anything only the assistant said.
For each fact, compare it with the existing memories listed (by id) and choose:
- "add": it is new;
- "update": it corrects or refines the existing memory "target" (give its id);
- "delete": the user says the existing memory "target" is no longer true, and there is nothing new to keep;
- "none": it is already known.
Write each claim as one short sentence in the third person ("The user prefers tea."). confidence is 0..1. validFrom/validTo are ISO-8601 dates when the user gave a time, else "".
Also list the entities (people, places, organisations, things) the facts mention, with other names the user used for them.`;

/** What the extraction model answers (structured output). */
export const EXTRACTION_SCHEMA: JsonObject = {
  type: "object",
  additionalProperties: false,
  required: ["facts", "entities"],
  properties: {
    facts: {
      type: "array",
      items: {
        type: "object",
        additionalProperties: false,
        required: ["claim", "confidence", "action", "target", "entities", "validFrom", "validTo"],
        properties: {
          claim: { type: "string" },
          confidence: { type: "number" },
          action: { type: "string", enum: ["add", "update", "delete", "none"] },
          target: { type: "string" },
          entities: { type: "array", items: { type: "string" } },
          validFrom: { type: "string" },
          validTo: { type: "string" },
        },
      },
    },
    entities: {
      type: "array",
      items: {
        type: "object",
        additionalProperties: false,
        required: ["name", "kind", "aliases"],
        properties: {
          name: { type: "string" },
          kind: { type: "string" },
          aliases: { type: "array", items: { type: "string" } },
        },
      },
    },
  },
};

const Extracted = z.object({
  facts: z
    .array(
      z.object({
        claim: z.string(),
        confidence: z.number().catch(0.8),
        action: z.enum(["add", "update", "delete", "none"]).catch("add"),
        target: z.string().catch(""),
        entities: z.array(z.string()).catch([]),
        validFrom: z.string().catch(""),
        validTo: z.string().catch(""),
      }),
    )
    .catch([]),
  entities: z
    .array(
      z.object({
        name: z.string(),
        kind: z.string().catch(""),
        aliases: z.array(z.string()).catch([]),
      }),
    )
    .catch([]),
});
export type Extracted = z.infer<typeof Extracted>;

const isIso = (s: string) => s !== "" && !Number.isNaN(Date.parse(s));
const clamp01 = (n: number) => Math.min(1, Math.max(0, Number.isFinite(n) ? n : 0.8));

/**
 * The operations an extraction's answer asks for, checked against the facts it was shown:
 * an update or delete may only target one of those (a model cannot reach other ids), an
 * update of a fact to the same claim is nothing, and "none" writes nothing.
 */
export function decisionsToOps(extracted: Extracted, shown: readonly MemoryFact[]): MemoryOp[] {
  const known = new Map(shown.map((f) => [f.id, f]));
  const ops: MemoryOp[] = [];
  for (const e of extracted.entities.slice(0, MAX_EXTRACTED)) {
    const name = e.name.trim();
    if (!name) continue;
    ops.push({
      op: "upsert_entity",
      name: name.slice(0, 256),
      aliases: e.aliases
        .map((a) => a.trim().slice(0, 256))
        .filter(Boolean)
        .slice(0, 32),
      ...(e.kind.trim() ? { type: e.kind.trim().slice(0, 256) } : {}),
    });
  }
  for (const f of extracted.facts.slice(0, MAX_EXTRACTED)) {
    const claim = f.claim.trim();
    const target = known.get(f.target);
    const fields = {
      confidence: clamp01(f.confidence),
      source: "extraction" as const,
      entities: f.entities
        .map((n) => n.trim().slice(0, 256))
        .filter(Boolean)
        .slice(0, 32),
      ...(isIso(f.validFrom) ? { validFrom: new Date(f.validFrom).toISOString() } : {}),
      ...(isIso(f.validTo) ? { validTo: new Date(f.validTo).toISOString() } : {}),
    };
    switch (f.action) {
      case "none":
        break;
      case "delete":
        if (target) ops.push({ op: "delete_fact", id: target.id });
        break;
      case "update":
        if (!claim) break;
        if (!target) ops.push({ op: "add_fact", claim, ...fields });
        else if (target.claim.trim().toLowerCase() !== claim.toLowerCase()) {
          ops.push({ op: "supersede_fact", id: target.id, claim, ...fields });
        }
        break;
      default:
        if (claim) ops.push({ op: "add_fact", claim, ...fields });
    }
  }
  return ops;
}

/** What one extraction cost and did, for the task's metadata. */
export interface ExtractionReport {
  skipped?: "limit";
  usage: Usage | null;
  cost: number | null;
  ops: number;
}

export interface ExtractionInput {
  model: Model;
  stub: MemoryStore;
  env: object;
  userText: string;
  answer: string;
  origin: MemoryOrigin;
  /** Adds the call's usage and cost to the task's (its metadata, after it ended). */
  recordUsage(patch: (current: JsonObject) => JsonObject): void;
  signal?: AbortSignal;
}

/**
 * Extraction after a completed turn (mem0's add / update / delete / nothing): the facts
 * closest to the user's message are fetched, one structured-output call extracts facts
 * and entities and decides each fact against them, and the decisions are applied (the
 * store drops duplicates by claim hash). Counted against `extractionCallsPerHour`, and
 * its usage and cost are added to the task's.
 */
export async function extractAfterTurn(input: ExtractionInput): Promise<ExtractionReport> {
  const { stub, origin } = input;
  if (!(await stub.reserveExtraction())) {
    logEvent("warn", "edgelink: memory extraction skipped: extractionCallsPerHour reached");
    return { skipped: "limit", usage: null, cost: null, ops: 0 };
  }
  const shown = ((await stub.neighbours([input.userText], EXTRACTION_NEIGHBOURS))[0] ?? []).slice(
    0,
    EXTRACTION_NEIGHBOURS,
  );
  const existing = shown.length ? shown.map((f) => `- [${f.id}] ${f.claim}`).join("\n") : "(none)";
  const response = await generate(
    input.model,
    {
      system: EXTRACTION_PROMPT,
      messages: [
        {
          role: "user",
          content: `Existing memories:\n${existing}\n\nThe user's message:\n${input.userText}\n\nThe assistant's answer (context only):\n${input.answer.slice(0, 2_000)}`,
        },
      ],
      outputSchema: EXTRACTION_SCHEMA,
      outputName: "memory_extraction",
    },
    { env: input.env, ...(input.signal ? { signal: input.signal } : {}) },
  );
  input.recordUsage((current) => usagePatch(current, response.usage, response.costEstimate));
  const parsed = Extracted.safeParse(response.output);
  if (!parsed.success || response.outputError !== null) {
    // What the model wrote may quote the conversation: the line says only that it failed.
    logEvent("warn", "edgelink: memory extraction answered no usable JSON");
    return { usage: response.usage, cost: response.costEstimate, ops: 0 };
  }
  const ops = decisionsToOps(parsed.data, shown);
  if (ops.length) await stub.apply(ops, origin);
  return { usage: response.usage, cost: response.costEstimate, ops: ops.length };
}

/**
 * The task's metadata with extraction's usage added: to the task's totals (`usage`,
 * `cost`) and itemized under `memory.extraction`.
 */
export function usagePatch(
  current: JsonObject,
  usage: Usage | null,
  cost: number | null,
): JsonObject {
  const total = addUsage((current.usage as Usage | undefined) ?? null, usage);
  const memory = (current.memory as JsonObject | undefined) ?? {};
  const prior =
    (memory.extraction as { calls?: number; usage?: Usage; cost?: number } | undefined) ?? {};
  const extraction: JsonObject = {
    calls: (prior.calls ?? 0) + 1,
  };
  const own = addUsage(prior.usage ?? null, usage);
  if (own) extraction.usage = { ...own };
  const ownCost = cost === null ? prior.cost : (prior.cost ?? 0) + cost;
  if (ownCost !== undefined) extraction.cost = ownCost;
  const patch: JsonObject = { memory: { ...memory, extraction } };
  if (total) patch.usage = { ...total };
  if (typeof current.cost === "number" && cost !== null) patch.cost = current.cost + cost;
  return patch;
}
