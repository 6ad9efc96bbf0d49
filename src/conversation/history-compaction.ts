/**
 * Compacting a conversation's stored history as a control call: one at a time, planned by
 * the history model, and only the rows it removes or adds written, in one transaction.
 */

import type { Agent } from "../agent/definition";
import { CompactionRequest, type CompactionResult } from "../history/compaction";
import { Conversation } from "../history/conversation";
import { diffItems } from "../history/diff";
import { A2AError, invalidParams } from "../protocol/errors";
import { attempt, type Result } from "../storage/rpc-result";
import type { TraceCarrier } from "../telemetry";
import { traceCompaction } from "./runs/run-trace";
import type { TaskStore } from "./tasks/task-store";

export class HistoryCompaction<Env> {
  constructor(
    private readonly store: TaskStore,
    /** The agent, read at each call (a test may replace it). */
    private readonly agent: () => Agent<Env>,
  ) {}

  private compacting: Promise<void> = Promise.resolve();

  /**
   * Compacts the conversation once `input` is valid and `requireContext`
   * passed. A bad request, an unknown context or a failing summarizer changes nothing.
   */
  compact(
    input: unknown,
    requireContext: () => void,
    trace?: TraceCarrier,
  ): Promise<Result<CompactionResult>> {
    // One at a time: a compaction plans from the rows it read, then awaits the summarizer
    // (a model call, during which other calls run); a second one planned from the same
    // rows would write a second summary of the same turns.
    const run = this.compacting.then(() => this.compactNow(input, requireContext, trace));
    this.compacting = run.then(
      () => {},
      () => {},
    );
    return run;
  }

  private compactNow(
    input: unknown,
    requireContext: () => void,
    trace: TraceCarrier | undefined,
  ): Promise<Result<CompactionResult>> {
    return attempt("context object", async () => {
      // Strict: compaction deletes history, and a misspelt limit must not fall back to
      // the default and delete more than the caller asked for.
      const parsed = CompactionRequest.strict().safeParse(input ?? {});
      if (!parsed.success) throw invalidParams(parsed.error.issues, "params");
      requireContext();
      const summarizer = this.agent().summarizer;
      if (parsed.data.strategy === "summary" && !summarizer) {
        throw new A2AError(
          "UnsupportedOperation",
          "Summary compaction needs a summarizer; configure `summarizer` in defineAgent",
        );
      }
      const history = this.store.history;
      const rows = history.all();
      const before = rows.map((r) => r.item);
      const taskOf = new Map(rows.map((r) => [r.item.id, r.taskId]));
      const conversation = Conversation.fromStored([...before]);
      const result = await traceCompaction(trace, parsed.data.strategy, before.length, () =>
        conversation.compact(parsed.data, { summarizer: summarizer ?? undefined }),
      );
      const diff = diffItems(before, [...conversation.items]);
      history.apply(diff, (item) => taskOf.get(item.id) ?? null);
      // Task messages may have gone with the compaction: read the tasks again.
      this.store.cache.clear();
      return result;
    });
  }
}
