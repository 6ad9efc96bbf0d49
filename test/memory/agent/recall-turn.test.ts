import { describe, expect, it } from "vitest";
import { ask, newCaller, until } from "../../harness/memory/support";
import { Wire } from "../../harness/memory/wire";
import { recordSpans } from "../../telemetry/support";

const { exporter } = recordSpans();

describe("memory in the trace", () => {
  it("recall and extraction are spans of the turn's trace, under its invoke_agent span", async () => {
    const wire = new Wire();
    wire.turn("Noted!").extraction({
      facts: [
        {
          claim: "The user prefers aisle seats.",
          confidence: 0.9,
          action: "add",
          target: "",
          entities: [],
          validFrom: "",
          validTo: "",
        },
      ],
      entities: [],
    });
    const task = await ask(newCaller("traced"), "I always want an aisle seat.");
    const taskId = task.id as string;
    const run = await until(
      "the run's span",
      async () =>
        exporter
          .getFinishedSpans()
          .find((s) => s.name.startsWith("invoke_agent") && s.attributes["a2a.task.id"] === taskId),
      (span) => span !== undefined,
    );
    if (!run) throw new Error("no run span");
    const inTrace = () =>
      exporter
        .getFinishedSpans()
        .filter((s) => s.spanContext().traceId === run.spanContext().traceId);
    const recall = inTrace().find((s) => s.name === "search_memory");
    expect(recall?.attributes["gen_ai.operation.name"]).toBe("search_memory");
    expect(recall?.attributes["gen_ai.conversation.id"]).toBe(task.contextId);
    expect(recall?.parentSpanContext?.spanId).toBe(run.spanContext().spanId);
    // Extraction runs after the answer, in the background, still in the turn's trace.
    const extract = await until(
      "the extraction's span",
      async () => inTrace().find((s) => s.name === "update_memory"),
      (span) => span !== undefined,
    );
    expect(extract?.attributes["gen_ai.operation.name"]).toBe("update_memory");
    expect(extract?.parentSpanContext?.spanId).toBe(run.spanContext().spanId);
  });
});
