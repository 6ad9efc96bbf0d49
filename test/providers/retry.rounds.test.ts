import { beforeEach, describe, expect, it } from "vitest";
import { openai } from "../../src/providers/openai/openai-chat";
import { withRetry } from "../../src/providers/retry";
import { streamMessage } from "../harness/llm/stream";
import { harness } from "../harness/llm/worker";
import { FakeProvider } from "./fake-provider";

type Json = Record<string, unknown>;

let fake: FakeProvider;
/** The waits withRetry asked for, instead of sleeping them. */
let waits: number[];

beforeEach(() => {
  fake = new FakeProvider({ seed: 5, maxChunk: 7 });
  waits = [];
  harness.fetch = fake.fetch;
  harness.requests = [];
  harness.toolRuns = [];
  harness.holdTools = false;
  harness.toolThrows = null;
  harness.toolOutput = null;
});

const useModel = (maxAttempts: number) => {
  harness.model = withRetry(
    openai({ model: "gpt-4o-mini", apiKey: "sk-test", baseUrl: "https://fake.test/v1" }),
    {
      maxAttempts,
      sleep: async (ms) => {
        waits.push(ms);
      },
    },
  );
};

const OVERLOADED = {
  status: 503,
  headers: { "content-type": "application/json", "retry-after": "1" },
  body: '{"error":{"message":"The server is overloaded","type":"server_error","code":null}}',
};

const text = (events: Json[]) =>
  events
    .flatMap((e) => (e.artifactUpdate ? [e.artifactUpdate as Json] : []))
    .flatMap((u) => ((u.artifact as Json).parts as { text?: string }[]).map((p) => p.text ?? ""))
    .join("");
const finalState = (events: Json[]) => {
  const statuses = events.flatMap((e) => (e.statusUpdate ? [e.statusUpdate as Json] : []));
  return (statuses.at(-1)?.status as Json | undefined)?.state;
};

describe("H9: only the provider call is retried, never the tool loop", () => {
  it("H9: round 2's call fails 503 then 429 (recorded), then answers: the tool ran once, 4 provider requests, the answer complete", async () => {
    useModel(3);
    fake.reply(
      { fixture: "openai-chat/tool-call-split-args.sse" },
      OVERLOADED,
      { fixture: "openai-compatible/openrouter-error-429.json" },
      { fixture: "openai-chat/after-tool-result-text.sse" },
    );
    const events = await streamMessage("What is the capital of the UK? Use the tool, then answer.");

    expect(harness.toolRuns).toEqual(["UK"]);
    expect(fake.requests).toHaveLength(4);
    expect(fake.pending).toBe(0);
    // The agent asked its model twice (two rounds); the retries happened below it.
    expect(harness.requests).toHaveLength(2);
    // Each retry resent round 2's request as it was: the one tool result, threaded once.
    const [, failed503, failed429, answered] = fake.requests.map((r) => r.body);
    expect(failed429).toEqual(failed503);
    expect(answered).toEqual(failed503);
    const messages = (answered as { messages: Json[] }).messages;
    expect(messages.filter((m) => m.role === "tool")).toEqual([
      { role: "tool", tool_call_id: "call_ZR5UUuTt3pf61kjwAJIYdVMj", content: "London" },
    ]);
    // The 503's Retry-After (1 s) was obeyed; the recorded 429 sent none (backoff).
    expect(waits[0]).toBe(1000);
    expect(waits).toHaveLength(2);

    expect(text(events)).toBe("The capital of the UK is London.");
    expect(finalState(events)).toBe("TASK_STATE_COMPLETED");
  });

  it("H9: without the retry the same failure ends the task after the tool's one run (the retry is what completes it)", async () => {
    useModel(1);
    fake.reply({ fixture: "openai-chat/tool-call-split-args.sse" }, OVERLOADED);
    const events = await streamMessage("What is the capital of the UK? Use the tool, then answer.");
    expect(harness.toolRuns).toEqual(["UK"]);
    expect(fake.requests).toHaveLength(2);
    expect(text(events)).toBe("");
    expect(finalState(events)).toBe("TASK_STATE_FAILED");
  });
});
