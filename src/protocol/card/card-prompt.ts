import type { PeerCard } from "./peer-card";

/** How much of a card `cardPrompt` renders. */
export interface CardPromptOptions {
  /** The whole text, at most. Default 4000 characters. */
  maxChars?: number;
  /** Skills listed, at most (the rest are counted). Default 20. */
  maxSkills?: number;
}

const FIELD_CHARS = 300;
const LIST_ITEMS = 8;

/**
 * A card as plain text for a model's prompt: what another agent is for and what its
 * skills do, so a model can decide whether to delegate to it. The same card always gives
 * the same text, in the card's own order. The card comes from another party: every value
 * is put on one line (control characters and line breaks become spaces, so a description
 * cannot forge a heading of its own) and clipped, and so are the lists.
 *
 * @example
 * ```ts
 * const weather = await connect("https://weather.example.com");
 * const instructions = `You may delegate to this agent:\n${cardPrompt(weather.card)}`;
 * ```
 */
export function cardPrompt(card: PeerCard, options: CardPromptOptions = {}): string {
  const maxChars = options.maxChars ?? 4000;
  const maxSkills = options.maxSkills ?? 20;
  const lines = [
    `Agent: ${line(card.name)}${card.version ? ` (version ${line(card.version)})` : ""}`,
  ];
  if (card.description) lines.push(`Purpose: ${line(card.description)}`);
  if (card.provider) lines.push(`Provider: ${line(card.provider.organization)}`);
  pushList(lines, "Accepts", card.defaultInputModes);
  pushList(lines, "Produces", card.defaultOutputModes);
  const can = [
    card.capabilities.streaming && "streaming",
    card.capabilities.pushNotifications && "push notifications",
  ].filter((c): c is string => typeof c === "string");
  if (can.length) lines.push(`Capabilities: ${can.join(", ")}`);
  if (card.skills.length) lines.push("Skills:");
  for (const skill of card.skills.slice(0, maxSkills)) {
    const title = skill.name && skill.name !== skill.id ? ` (${line(skill.name)})` : "";
    lines.push(
      `- ${line(skill.id)}${title}${skill.description ? `: ${line(skill.description)}` : ""}`,
    );
    pushList(lines, "  Tags", skill.tags);
    pushList(lines, "  Accepts", strings(skill.inputModes));
    pushList(lines, "  Produces", strings(skill.outputModes));
    pushList(
      lines,
      "  Examples",
      (skill.examples ?? []).map((e) => JSON.stringify(line(e))),
      "; ",
    );
  }
  const more = card.skills.length - maxSkills;
  if (more > 0) lines.push(`- and ${more} more skill${more === 1 ? "" : "s"}`);
  const text = lines.join("\n");
  return text.length <= maxChars ? text : `${text.slice(0, Math.max(0, maxChars - 1))}…`;
}

function pushList(lines: string[], label: string, items: readonly string[], joiner = ", "): void {
  if (items.length === 0) return;
  const unique = [...new Set(items.map(line))];
  const shown = unique.slice(0, LIST_ITEMS);
  const rest = unique.length - shown.length;
  lines.push(`${label}: ${shown.join(joiner)}${rest > 0 ? `${joiner}…` : ""}`);
}

/** One line of at most FIELD_CHARS characters of another party's text. */
function line(value: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it removes
  const flat = value.replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029\s]+/g, " ").trim();
  return flat.length <= FIELD_CHARS ? flat : `${flat.slice(0, FIELD_CHARS - 1)}…`;
}

/** A member the card's schema keeps but does not check (a skill's modes). */
function strings(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === "string") : [];
}
