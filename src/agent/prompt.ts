import * as z from "zod";
import type { Agent } from "./definition";
import type { RunContext } from "./run-context";
import type { Tools } from "./tool";

/** What a prompt section holds. */
export const PromptSectionType = z.enum([
  "persona",
  "task",
  "format",
  "constraints",
  "examples",
  "context",
  "custom",
]);
export type PromptSectionType = z.infer<typeof PromptSectionType>;

/** One section of a profile; disabled or blank sections are left out. */
export const PromptSection = z.object({
  id: z.string().min(1),
  name: z.string().optional(),
  type: PromptSectionType,
  content: z.string(),
  enabled: z.boolean().default(true),
  /** Sections are sorted by this (ties keep their given order). */
  order: z.number().default(0),
});
export type PromptSection = z.output<typeof PromptSection>;

/** A named set of sections; one profile may be the default. */
export const PromptProfile = z.object({
  id: z.string().min(1),
  name: z.string().optional(),
  description: z.string().optional(),
  sections: z.array(PromptSection).default([]),
  isDefault: z.boolean().default(false),
});
export type PromptProfile = z.output<typeof PromptProfile>;

/**
 * System instructions built from parts, in this order, blank parts skipped and the
 * rest joined by a blank line: the global prompt, a generated tools prompt, the selected
 * profile's enabled sections sorted by `order`, then additional context. A
 * `systemOverride` replaces all of it, verbatim.
 * @example
 * defineAgent({
 *   card,
 *   model,
 *   instructions: {
 *     global: "You work for Acme.",
 *     toolsPrompt: true,
 *     profiles: [{ id: "support", isDefault: true, sections: [
 *       { id: "p", type: "persona", content: "You are a patient support agent.", order: 1 },
 *       { id: "f", type: "format", content: "Answer in at most three sentences.", order: 2 },
 *     ] }],
 *   },
 * });
 */
export const PromptComposition = z
  .object({
    global: z
      .union([z.string(), z.object({ content: z.string(), enabled: z.boolean().default(true) })])
      .optional(),
    /** `true`: a list of the agent's tools, generated; a string: that text instead. */
    toolsPrompt: z.union([z.boolean(), z.string()]).default(false),
    profiles: z.array(PromptProfile).default([]),
    /** The profile to use; default the one marked `isDefault`, else the first. */
    profile: z.string().optional(),
    additionalContext: z.string().optional(),
    systemOverride: z.string().optional(),
  })
  .superRefine((c, ctx) => {
    const ids = c.profiles.map((p) => p.id);
    const repeated = ids.find((id, i) => ids.indexOf(id) !== i);
    if (repeated !== undefined) {
      ctx.addIssue({
        code: "custom",
        path: ["profiles"],
        message: `profile ${repeated} is defined twice`,
      });
    }
    if (c.profiles.filter((p) => p.isDefault).length > 1) {
      ctx.addIssue({
        code: "custom",
        path: ["profiles"],
        message: "at most one profile is the default",
      });
    }
    if (c.profile !== undefined && !ids.includes(c.profile)) {
      ctx.addIssue({ code: "custom", path: ["profile"], message: `no profile ${c.profile}` });
    }
  });
export type PromptComposition = z.output<typeof PromptComposition>;
export type PromptCompositionInput = z.input<typeof PromptComposition>;

/** Validates a composition at definition time, naming the bad field. */
export function parsePromptComposition(input: PromptCompositionInput): PromptComposition {
  const parsed = PromptComposition.safeParse(input);
  if (!parsed.success) {
    const why = parsed.error.issues.map((i) => `instructions.${i.path.join(".")}: ${i.message}`);
    throw new TypeError(`Invalid instructions: ${why.join("; ")}`);
  }
  return parsed.data;
}

/**
 * The system prompt `defineAgent({ instructions })` gives the model for a composition:
 * the same input and tools always give the same text. An invalid composition throws a
 * `TypeError` naming the field, as `defineAgent` does.
 * @example
 * ```ts
 * const system = composePrompt(
 *   { global: "You work for Acme.", toolsPrompt: true, additionalContext: "Pro plan." },
 *   { lookup },
 * );
 * ```
 */
export function composePrompt(
  composition: PromptCompositionInput,
  tools: Tools = {},
  overrides: { profile?: string; additionalContext?: string } = {},
): string {
  return renderComposition(parsePromptComposition(composition), tools, overrides);
}

/** `composePrompt` of a composition already checked by `parsePromptComposition`. */
export function renderComposition(
  composition: PromptComposition,
  tools: Tools,
  overrides: { profile?: string; additionalContext?: string } = {},
): string {
  if (composition.systemOverride !== undefined) return composition.systemOverride;
  const global =
    typeof composition.global === "string"
      ? composition.global
      : composition.global?.enabled
        ? composition.global.content
        : "";
  const toolsPrompt =
    typeof composition.toolsPrompt === "string"
      ? composition.toolsPrompt
      : composition.toolsPrompt
        ? generatedToolsPrompt(tools)
        : "";
  const profile = selectProfile(composition, overrides.profile);
  const sections = (profile?.sections ?? [])
    .map((section, index) => ({ section, index }))
    .filter(({ section }) => section.enabled)
    .sort((a, b) => a.section.order - b.section.order || a.index - b.index)
    .map(({ section }) => section.content);
  const context = overrides.additionalContext ?? composition.additionalContext ?? "";
  return [global, toolsPrompt, ...sections, context]
    .filter((part) => part.trim() !== "")
    .join("\n\n");
}

function selectProfile(c: PromptComposition, id: string | undefined): PromptProfile | undefined {
  const wanted = id ?? c.profile;
  if (wanted !== undefined) return c.profiles.find((p) => p.id === wanted);
  return c.profiles.find((p) => p.isDefault) ?? c.profiles[0];
}

/** The tools the model may call, one line each, in the agent's order. */
export function generatedToolsPrompt(tools: Tools): string {
  const names = Object.keys(tools);
  if (names.length === 0) return "";
  const lines = names.map((name) => {
    const description = tools[name]?.description.trim();
    return description ? `- ${name}: ${description}` : `- ${name}`;
  });
  return `You can call these tools:\n${lines.join("\n")}`;
}

/** The system prompt of a turn: the agent's string, its composition, or its function's. */
export async function systemPrompt<Env>(
  agent: Pick<Agent<Env>, "instructions" | "tools">,
  ctx: RunContext<Env>,
): Promise<string | null> {
  const instructions = agent.instructions;
  if (instructions === null || typeof instructions === "string") return instructions;
  if (typeof instructions === "function") return instructions(ctx);
  return renderComposition(instructions, agent.tools);
}
