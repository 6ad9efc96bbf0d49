import type { MemoryBundle } from "../models/memory";

/** Estimated tokens of a text: about four characters each, rounded up. */
export function estimateTokens(text: string): number {
  return Math.ceil(text.length / 4);
}

export const BUNDLE_HEADING = "## What you remember about this user";

/**
 * The bundle as a prompt section the agent puts after its instructions: "" when there is
 * nothing to remember.
 * @example
 * const section = renderMemoryBundle(await memory.remember({ text: "What tea do I like?" }));
 */
export function renderMemoryBundle(bundle: MemoryBundle): string {
  const sections = renderSections(bundle);
  return sections.length ? [BUNDLE_HEADING, ...sections].join("\n\n") : "";
}

function renderSections(bundle: MemoryBundle): string[] {
  const sections: string[] = [];
  if (bundle.facts.length) {
    sections.push(["Facts:", ...bundle.facts.map(factLine)].join("\n"));
  }
  if (bundle.entities.length) {
    sections.push(["People and things:", ...bundle.entities.map(entityLine)].join("\n"));
  }
  if (bundle.goals.length) {
    sections.push(["Active goals:", ...bundle.goals.map(goalLine)].join("\n"));
  }
  if (bundle.strategies.length) {
    sections.push(
      ["Approaches that worked before:", ...bundle.strategies.map(strategyLine)].join("\n"),
    );
  }
  return sections;
}

export function factLine(fact: MemoryBundle["facts"][number]): string {
  const when = [
    fact.validFrom ? `from ${fact.validFrom.slice(0, 10)}` : "",
    fact.validTo ? `until ${fact.validTo.slice(0, 10)}` : "",
  ].filter(Boolean);
  return `- ${oneLine(fact.claim)}${when.length ? ` (${when.join(", ")})` : ""}`;
}

export function entityLine(entity: MemoryBundle["entities"][number]): string {
  const type = entity.type ? ` [${oneLine(entity.type)}]` : "";
  const aliases = entity.aliases.length ? ` (also: ${entity.aliases.map(oneLine).join(", ")})` : "";
  return `- ${oneLine(entity.name)}${type}${aliases}`;
}

export function goalLine(goal: MemoryBundle["goals"][number]): string {
  const due = goal.deadline ? `, due ${goal.deadline.slice(0, 10)}` : "";
  return `- ${oneLine(goal.title)} (priority ${goal.priority}${due})`;
}

export function strategyLine(strategy: MemoryBundle["strategies"][number]): string {
  const tried = strategy.successCount + strategy.failureCount;
  const record = tried ? `, worked ${strategy.successCount} of ${tried} times` : "";
  return `- for "${oneLine(strategy.contextPattern)}": ${strategy.toolSequence.join(" → ")}${record}`;
}

/** Stored text on one line, so a memory cannot open a heading or section of its own. */
function oneLine(text: string): string {
  return text.replace(/\s+/gu, " ").trim();
}
