/**
 * The reference truncation algorithm (the VideoSDK agents' ChatContext.truncate described
 * in /work/shared/seeds/videosdk-agents-llm.txt), ported literally for the benchmark
 * only: it is what Edgelink's `truncateItems` (src/history/truncate.ts) is compared with.
 *
 * The reference, step by step: protect the first system/developer message, the first
 * summary, the last user message and every handoff and config update; then, while the
 * list is over a limit (the token total recounted over the whole list each time), take
 * the first unprotected item out (a function call together with the first later output
 * of the same call id); stop when nothing unprotected is left. Finally drop calls without
 * an output and outputs without a call, and put back a protected item that this dropped.
 *
 * Each removal recounts every token and shifts the array, so removing r of n items costs
 * O(r * n): O(n^2) when a long history is cut to a context window. Token estimates use
 * Edgelink's own `estimateItemTokens`, so the comparison is of the algorithm alone.
 */
import {
  type Item,
  isInstruction,
  isStructural,
  isSummary,
  isUserMessage,
} from "../src/history/items";
import { estimateItemTokens } from "../src/history/tokens";

export interface NaiveLimits {
  maxItems?: number;
  maxTokens?: number;
}

export function naiveTruncate(items: readonly Item[], limits: NaiveLimits): Item[] {
  const { maxItems, maxTokens } = limits;
  if (maxItems === undefined && maxTokens === undefined) return [...items];

  const instruction = items.find(isInstruction);
  const summary = items.find(isSummary);
  const lastUser = items.findLast(isUserMessage);
  const guarded = new Set<Item>(items.filter(isStructural));
  for (const item of [instruction, summary, lastUser]) if (item) guarded.add(item);

  const list = [...items];
  const overLimit = () => {
    if (maxItems !== undefined && list.length > maxItems) return true;
    if (maxTokens !== undefined) {
      let total = 0;
      for (const item of list) total += estimateItemTokens(item);
      if (total > maxTokens) return true;
    }
    return false;
  };

  while (overLimit()) {
    const i = list.findIndex((item) => !guarded.has(item));
    if (i < 0) break; // only protected items left: stay over the limit
    const item = list[i] as Item;
    if (item.type === "function_call") {
      let j = -1;
      for (let k = i + 1; k < list.length; k++) {
        const other = list[k] as Item;
        if (other.type === "function_call_output" && other.callId === item.callId) {
          j = k;
          break;
        }
      }
      if (j >= 0) list.splice(j, 1);
    }
    list.splice(i, 1);
  }

  const calls = new Set<string>();
  const outputs = new Set<string>();
  for (const item of list) {
    if (item.type === "function_call") calls.add(item.callId);
    else if (item.type === "function_call_output") outputs.add(item.callId);
  }
  const kept = list.filter(
    (item) =>
      !(
        (item.type === "function_call" && !outputs.has(item.callId)) ||
        (item.type === "function_call_output" && !calls.has(item.callId))
      ),
  );
  if (instruction && !kept.includes(instruction)) kept.unshift(instruction);
  if (summary && !kept.includes(summary)) {
    kept.splice(instruction && kept.includes(instruction) ? 1 : 0, 0, summary);
  }
  if (lastUser && !kept.includes(lastUser)) kept.push(lastUser);
  return kept;
}
