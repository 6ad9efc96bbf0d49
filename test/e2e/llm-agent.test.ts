/**
 * Issue 4 end to end: the model-backed example agent (examples/llm-agent.ts) as a real
 * local Worker, its OpenAI calls going over a real socket to a fake provider that replays
 * recorded OpenAI streams, and the official A2A SDK client streaming the answer.
 */
import { TaskState } from "@a2a-js/sdk";
import type { Client } from "@a2a-js/sdk/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type FakeProviderServer, startFakeProvider } from "./support/fake-provider-server";
import {
  artifactNamed,
  asTask,
  collect,
  describeEvent,
  sdkClient,
  textOf,
  textRequest,
} from "./support/sdk";
import { type DemoAgent, startWorker } from "./support/worker";

let provider: FakeProviderServer;
let agent: DemoAgent;

beforeAll(async () => {
  provider = await startFakeProvider();
  agent = await startWorker("examples/llm.wrangler.toml", {
    OPENAI_API_KEY: "sk-e2e",
    OPENAI_BASE_URL: `${provider.origin}/v1`,
  });
});

afterAll(async () => {
  await agent?.stop();
  await provider?.close();
});

describe.each(["JSONRPC", "HTTP+JSON"] as const)("LLM agent over %s (SDK client)", (binding) => {
  let client: Client;
  beforeAll(async () => {
    client = await sdkClient(agent.baseUrl, binding);
  });

  it("G13: the provider's tokens arrive as artifact append chunks; completed with usage and cost", async () => {
    provider.reply("openai-chat/text-with-usage.sse");
    const events = await collect(
      client.sendMessageStream(textRequest("What is the capital of Mexico?"), {
        signal: AbortSignal.timeout(20_000),
      }),
    );
    const labels = events.map(describeEvent);
    const chunks = events.flatMap((e) =>
      e.payload?.$case === "artifactUpdate" ? [e.payload.value] : [],
    );
    expect(chunks.length, labels.join(" | ")).toBeGreaterThan(1);
    expect(new Set(chunks.map((c) => c.artifact?.artifactId)).size).toBe(1);
    expect(chunks.map((c) => c.append)).toEqual(chunks.map((_, i) => i > 0));
    expect(chunks.at(-1)?.lastChunk).toBe(true);
    expect(chunks.map((c) => textOf(c.artifact?.parts)).join("")).toBe(
      "The capital of Mexico is Mexico City.",
    );
    const last = events.at(-1)?.payload;
    expect(last?.$case).toBe("statusUpdate");
    if (last?.$case !== "statusUpdate") return;
    expect(last.value.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);

    const stored = asTask(await client.getTask({ tenant: "", id: last.value.taskId }));
    expect(textOf(artifactNamed(stored, "response")?.parts)).toBe(
      "The capital of Mexico is Mexico City.",
    );
    expect(stored.metadata?.usage).toMatchObject({
      promptTokens: 14,
      completionTokens: 8,
      totalTokens: 22,
    });
    expect(stored.metadata?.cost).toBeGreaterThan(0);

    // What went over the wire to the provider: its key, the streaming flags, the instructions.
    const seen = provider.requests.at(-1);
    expect(seen?.url).toBe("/v1/chat/completions");
    expect(seen?.headers.authorization).toBe("Bearer sk-e2e");
    expect(seen?.body).toMatchObject({
      model: "gpt-4o-mini",
      stream: true,
      stream_options: { include_usage: true },
      temperature: 0.2,
    });
    const messages = seen?.body.messages as { role: string; content: string }[];
    expect(messages[0]?.role).toBe("system");
    expect(messages.at(-1)).toEqual({ role: "user", content: "What is the capital of Mexico?" });
  });

  it("a provider error fails the task with the provider's message (blocking SendMessage)", async () => {
    provider.reply("openai-chat/error-404-model-not-found.json");
    const task = asTask(await client.sendMessage(textRequest("Hi")));
    expect(task.status?.state).toBe(TaskState.TASK_STATE_FAILED);
    expect(textOf(task.status?.message?.parts)).toMatch(/404/);
    // The example's fallback tried every provider: OpenAI answered 404, the others have no key.
    const error = task.metadata?.providerError as { provider: string; failures: object[] };
    expect(error.provider).toBe("fallback");
    expect(error.failures[0]).toMatchObject({ provider: "openai", kind: "http", status: 404 });
    expect(error.failures.slice(1)).toEqual(
      error.failures.slice(1).map(() => expect.objectContaining({ kind: "config" })),
    );
  });
});
