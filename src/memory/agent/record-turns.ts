import type { MemoryTurnOutcome } from "../../agent/memory-source";
import type { MemoryOp } from "../../protocol/memory";
import { estimateTokens } from "../base/render";

/** Most tool turns recorded from one model turn (the first ones). */
export const MAX_TOOL_TURNS = 16;
/** Most characters of a tool's result recorded (as extraction reads at most 2,000 of an answer). */
const TOOL_CHARS = 2_000;

/**
 * The turns one completed model turn leaves in memory: the user's message (its text parts,
 * as extraction reads it), each tool call's result when `withTools` (the tool's name
 * first), and the answer. Each is cut to the memory's `maxItemBytes`, so a long answer is
 * kept in part rather than refused.
 */
export function turnOps(
  userText: string,
  outcome: MemoryTurnOutcome,
  withTools: boolean,
  maxItemBytes: number,
): MemoryOp[] {
  const turn = (
    role: "user" | "assistant" | "tool",
    text: string,
    metadata?: { tool: string; outcome: string },
  ): MemoryOp => {
    const content = clipBytes(text, maxItemBytes - (metadata ? metadataBytes(metadata) : 0));
    return {
      op: "add_turn",
      role,
      content,
      tokenCount: estimateTokens(content),
      ...(metadata ? { metadata } : {}),
    };
  };
  const ops = [turn("user", userText)];
  if (withTools) {
    for (const t of (outcome.tools ?? []).slice(0, MAX_TOOL_TURNS)) {
      const result = t.content.trim() || "(empty)";
      const text = `${t.name}: ${result.slice(0, TOOL_CHARS)}`;
      ops.push(turn("tool", text, { tool: t.name.slice(0, 64), outcome: t.outcome }));
    }
  }
  if (outcome.answer.trim()) ops.push(turn("assistant", outcome.answer));
  // A turn cut to nothing (a tiny maxItemBytes) is left out rather than refuse the rest.
  return ops.filter((op) => op.op === "add_turn" && op.content.trim() !== "");
}

const encoder = new TextEncoder();

function metadataBytes(metadata: object): number {
  return encoder.encode(JSON.stringify(metadata)).byteLength;
}

/** The text within `max` UTF-8 bytes, cut at a character boundary. */
export function clipBytes(text: string, max: number): string {
  const bytes = encoder.encode(text);
  if (bytes.byteLength <= max) return text;
  // Decoding a cut in the middle of a character leaves a replacement mark: drop it.
  return new TextDecoder()
    .decode(bytes.subarray(0, Math.max(0, max)))
    .replace(/\uFFFD+$/u, "")
    .trimEnd();
}
