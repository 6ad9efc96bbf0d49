import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { openai } from "../../src/providers/openai/openai-chat";
import { setLogContent } from "../../src/telemetry/log";
import { streamMessage } from "../harness/llm/stream";
import { harness } from "../harness/llm/worker";
import { FakeProvider } from "../providers/fake-provider";
import { rpc } from "../support/helpers";

type Json = Record<string, unknown>;

const API_KEY = "sk-live-logtest-0123456789abcdef";
const SECRET_TEXT = "my locker code is PURPLE-GIRAFFE-42";

let fake: FakeProvider;

beforeEach(() => {
  fake = new FakeProvider({ seed: 5, maxChunk: 64 });
  harness.fetch = fake.fetch;
  harness.requests = [];
  harness.model = openai({
    model: "gpt-4o-mini",
    apiKey: API_KEY,
    baseUrl: "https://fake.test/v1",
  });
});

afterEach(() => setLogContent(false));

/** A provider that refuses the request, quoting it and the key it was sent. */
function refuseQuoting() {
  fake.reply({
    status: 400,
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      error: {
        message: `Request rejected: '${SECRET_TEXT}' (Authorization: Bearer ${API_KEY})`,
        type: "invalid_request_error",
        code: "content_rejected",
      },
    }),
  });
}

/** Runs a failing turn; every console line the agent wrote meanwhile, raw. */
async function failingTurn(): Promise<{ raw: string[]; task: Json }> {
  const raw: string[] = [];
  const keep = (...args: unknown[]) => {
    raw.push(args.map(String).join(" "));
  };
  const spies = [
    vi.spyOn(console, "error").mockImplementation(keep),
    vi.spyOn(console, "warn").mockImplementation(keep),
    vi.spyOn(console, "log").mockImplementation(keep),
  ];
  try {
    refuseQuoting();
    const events = await streamMessage(SECRET_TEXT);
    const end = events.at(-1)?.statusUpdate as Json;
    const { body } = await rpc("GetTask", { id: end.taskId });
    return { raw, task: body.result as Json };
  } finally {
    for (const spy of spies) spy.mockRestore();
  }
}

describe("the operator's log of a failing provider", () => {
  it("is one JSON line with the task's ids and the reference the client sees, without the key, a bearer token or the message", async () => {
    const { raw, task } = await failingTurn();
    expect((task.status as Json).state).toBe("TASK_STATE_FAILED");
    const ours = raw.filter((line) => line.includes("model call failed"));
    expect(ours).toHaveLength(1);
    const line = JSON.parse(ours[0] as string) as Json;
    const reference = String((task.metadata as Json).error).match(/ref_\w+/)?.[0];
    expect(line).toMatchObject({
      level: "error",
      message: `edgelink: model call failed ${reference}`,
      reference,
      taskId: task.id,
      contextId: task.contextId,
      error: { type: "ProviderError", provider: "openai", kind: "http", status: 400 },
    });
    for (const text of raw) {
      expect(text).not.toContain(API_KEY);
      expect(text).not.toMatch(/Bearer\s+(?!\[redacted\])/);
      expect(text).not.toContain("PURPLE-GIRAFFE");
    }
  });

  it("carries the provider's text when the operator opts in, still without the key", async () => {
    setLogContent(true);
    const { raw } = await failingTurn();
    const line = raw.find((text) => text.includes("model call failed")) as string;
    expect(line).toContain("PURPLE-GIRAFFE");
    expect(line).not.toContain(API_KEY);
    expect(line).toContain("Bearer [redacted]");
  });
});
