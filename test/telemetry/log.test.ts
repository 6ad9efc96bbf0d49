import { env, runInDurableObject } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import { resolveAgent } from "../../src/agent/definition";
import { HistoryStore } from "../../src/conversation/history/history-store";
import { PushDispatcher } from "../../src/conversation/push/push-dispatcher";
import { PushStore } from "../../src/conversation/push/push-store";
import { MAX_PUSH_ATTEMPTS_SHOWN, TaskSteps } from "../../src/conversation/tasks/task-steps";
import { TaskStore } from "../../src/conversation/tasks/task-store";
import { Messages } from "../../src/protocol/message";
import { ProviderError } from "../../src/providers/base/errors";
import { contextObjectName } from "../../src/storage/ids";
import { CONTEXT_SCHEMA } from "../../src/storage/schema";
import { ensureSchema } from "../../src/storage/schema-version";
import {
  describeError,
  errorText,
  logEvent,
  redact,
  setLogContent,
  setLogTraceIds,
  stackFrames,
} from "../../src/telemetry/log";

type Json = Record<string, unknown>;

/** Every line written to the console while `run` runs, each parsed as JSON (or it fails). */
async function captured(run: () => unknown): Promise<{ raw: string[]; lines: Json[] }> {
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
    await run();
  } finally {
    for (const spy of spies) spy.mockRestore();
  }
  return { raw, lines: raw.map((line) => JSON.parse(line) as Json) };
}

afterEach(() => {
  setLogContent(false);
  setLogTraceIds(null);
});

describe("structured log lines", () => {
  it("are one JSON line each, with level, message, the ids given and the active span's ids", async () => {
    setLogTraceIds(() => ({
      traceId: "4bf92f3577b34da6a3ce929d0e0e4736",
      spanId: "00f067aa0ba902b7",
    }));
    const { raw, lines } = await captured(() => {
      logEvent("error", "edgelink: handler error ref_1", {
        tenant: "acme",
        taskId: "t1",
        contextId: "c1",
        reference: "ref_1",
        error: new TypeError("x is not a function"),
      });
      logEvent("warn", "edgelink: something to look at", { taskId: undefined, tenant: null });
      logEvent("info", "edgelink: fyi");
    });
    expect(raw).toHaveLength(3);
    for (const line of raw) expect(line).not.toContain("\n");
    expect(lines[0]).toMatchObject({
      level: "error",
      message: "edgelink: handler error ref_1",
      traceId: "4bf92f3577b34da6a3ce929d0e0e4736",
      spanId: "00f067aa0ba902b7",
      tenant: "acme",
      taskId: "t1",
      contextId: "c1",
      reference: "ref_1",
      error: { type: "TypeError", message: "x is not a function" },
    });
    expect(((lines[0] as Json).error as Json).stack).toEqual(
      expect.arrayContaining([expect.stringMatching(/^at /)]),
    );
    // Absent ids are left out, not written as null.
    expect(Object.keys(lines[1] ?? {}).sort()).toEqual(["level", "message", "spanId", "traceId"]);
    expect(lines.map((l) => l.level)).toEqual(["error", "warn", "info"]);
  });

  it("carry no trace ids when no span is active", async () => {
    setLogTraceIds(() => undefined);
    const { lines } = await captured(() => logEvent("error", "edgelink: x"));
    expect(lines[0]).toEqual({ level: "error", message: "edgelink: x" });
  });

  it("mask credentials wherever they appear, and keep configuration advice readable", () => {
    const line = redact(
      JSON.stringify({
        a: "Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJl",
        b: "key sk-proj-abcdefghijklmnop and sk-ant-api03-abcdefghijkl",
        c: "https://generativelanguage.googleapis.com/v1/models?key=AIzaSyA1234567890abcdefghijklmnop&alt=sse",
        d: 'x-api-key: "k-123456789"',
      }),
    );
    for (const secret of ["eyJhbGci", "abcdefghijklmnop", "api03", "AIzaSy", "k-123456789"]) {
      expect(line).not.toContain(secret);
    }
    expect(line).toContain("alt=sse");
    const advice = 'set auth: { apiKeys: { secret: "AGENT_API_KEYS" } }; OPENAI_API_KEY is not set';
    expect(redact(advice)).toBe(advice);
  });

  it("leave random base64url ids whole, even where a key's prefix shows inside them", () => {
    const ids = [
      "A9YkCREdwMgaT-sk-Qx3bN0pLm7vZ2tWc",
      "c.N89oXl-pk_nVangnUTrt4D0N_HQIcEmW",
      "wq-hf-AbCdEfGh12345678",
      "x-AIzaSyA1234567890abcdefghijk",
      "a.Zk-eyJhbGci.eyJzdWIi.c2ln",
    ];
    for (const id of ids) expect(redact(JSON.stringify({ taskId: id }))).toContain(id);
    // The same shapes standing alone are still keys.
    expect(redact("key: sk-Qx3bN0pLm7vZ2tWc")).not.toContain("Qx3bN0pLm7vZ2tWc");
    expect(redact('"AIzaSyA1234567890abcdefghijk"')).not.toContain("AIzaSy");
  });

  it("describe a provider's failure by its kind and status; its text only when the operator opts in", () => {
    const failure = new ProviderError({
      provider: "openai",
      kind: "http",
      status: 400,
      code: "invalid_request_error",
      message: "Your prompt 'the launch codes are 0000' was rejected",
    });
    const plain = describeError(failure);
    expect(plain).toMatchObject({
      type: "ProviderError",
      provider: "openai",
      kind: "http",
      status: 400,
    });
    expect(JSON.stringify(plain)).not.toContain("launch codes");
    setLogContent(true);
    expect(describeError(failure).message).toContain("launch codes");
  });

  it("T2 a span's error text follows the same rule: kind only by default, masked content with the opt-in", () => {
    const failure = new ProviderError({
      provider: "openai",
      kind: "http",
      status: 401,
      message: "bad key: Authorization: Bearer sk-live-0123456789abcdef",
    });
    expect(errorText(failure, "401")).toBe("ProviderError (401)");
    const local = new Error("out of order, token=abcdef0123456789");
    expect(errorText(local, "Error")).toBe("out of order, token=[redacted]");
    expect(stackFrames(failure).every((line) => line.startsWith("at "))).toBe(true);
    setLogContent(true);
    expect(errorText(failure, "401")).toBe("bad key: Authorization: Bearer [redacted]");
  });
});

describe("a failing webhook, as the operator's log and the inspector's task steps see it", () => {
  const HOOK = "https://hooks.example.com/a2a";
  const TOKEN = "push-token-must-not-leak-0123";
  const CREDENTIALS = "webhook-bearer-must-not-leak-4567";

  it("logs each failed attempt as a JSON line without the receiver's answer or any credential, and keeps the latest attempts with their timing", async () => {
    const ns = env.EDGELINK_CONTEXT;
    const stub = ns.get(ns.idFromName(contextObjectName("", "log-push-failing")));
    const result = await runInDurableObject(stub, async (_i, state) => {
      ensureSchema(state.storage, CONTEXT_SCHEMA); // white-box: the schema a first write makes
      const push = new PushStore(state.storage.sql);
      const store = new TaskStore(state.storage, new HistoryStore(state.storage), push);
      store.create({
        id: "t1",
        contextId: "c1",
        status: { state: "submitted", message: null, timestamp: new Date().toISOString() },
        history: [Messages.user("the secret recipe is in the blue box")],
        artifacts: [],
        metadata: {},
        stateHistory: [],
        createdAt: new Date().toISOString(),
        flowState: {},
      });
      push.saveConfig({
        id: "cfg",
        taskId: "t1",
        url: HOOK,
        protocolVersion: "1.0",
        token: TOKEN,
        authentication: { scheme: "Bearer", credentials: CREDENTIALS },
      });
      store.transition("t1", "working");
      const agent = resolveAgent({
        card: { name: "p", description: "" },
        push: { maxAttempts: 100, unhealthyAfter: 1000 },
      });
      const seen: Headers[] = [];
      const fetchFn = (async (input: RequestInfo | URL, init?: RequestInit) => {
        seen.push(new Request(input, init).headers);
        // A receiver that echoes what it was sent, credentials included.
        return new Response(`rejected ${TOKEN} ${CREDENTIALS} the secret recipe`, { status: 500 });
      }) as typeof fetch;
      const dispatcher = new PushDispatcher(
        push,
        store,
        agent,
        {},
        () => "https://agent.example.com",
        (id) => store.read(id) ?? (undefined as never),
        fetchFn,
      );
      // The inspector on: its steps keep the attempts (never the task's metadata).
      const steps = new TaskSteps(state.storage.sql, () => true);
      dispatcher.steps = steps;
      const logged = await captured(async () => {
        for (let i = 0; i < MAX_PUSH_ATTEMPTS_SHOWN + 3; i++) {
          // White-box: due again at once, past the backoff.
          for (const head of push.heads()) {
            push.reschedule(head.seq, head.attempts, head.firstAttemptAt ?? Date.now(), 0, "x");
          }
          await dispatcher.run();
        }
      });
      return {
        logged,
        sent: seen.length,
        metadata: store.read("t1")?.metadata as Json,
        steps: steps.read("t1"),
      };
    });
    expect(result.sent).toBe(MAX_PUSH_ATTEMPTS_SHOWN + 3);
    const { raw, lines } = result.logged;
    expect(lines).toHaveLength(MAX_PUSH_ATTEMPTS_SHOWN + 3);
    expect(lines[0]).toMatchObject({
      level: "warn",
      message: "edgelink: push delivery attempt failed",
      taskId: "t1",
      config: "cfg",
      attempt: 1,
      status: 500,
      reason: "HTTP 500",
    });
    for (const line of raw) {
      expect(line).not.toContain(TOKEN);
      expect(line).not.toContain(CREDENTIALS);
      expect(line).not.toContain("secret recipe");
    }
    expect(result.metadata.pushAttempts).toBeUndefined();
    const attempts = result.steps.pushAttempts as Json[];
    expect(attempts).toHaveLength(MAX_PUSH_ATTEMPTS_SHOWN);
    for (const attempt of attempts) {
      expect(attempt).toEqual({
        config: "cfg",
        at: expect.any(Number),
        ms: expect.any(Number),
        status: 500,
        ok: false,
      });
    }
  });
});
