import { env, runDurableObjectAlarm, SELF } from "cloudflare:test";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { resolveApprovals } from "../../../src/agent/access/approval-options";
import type { Agent } from "../../../src/agent/definition";
import { tool } from "../../../src/agent/tool";
import { openai } from "../../../src/providers/openai/openai-chat";
import { verifyPushNotification } from "../../../src/push/verify";
import { contextObjectName } from "../../../src/storage/ids";
import worker, { harness } from "../../harness/llm/worker";
import { FakeProvider } from "../../providers/fake-provider";
import { rpc, sleep } from "../../support/helpers";

type Json = Record<string, unknown>;

const HOOK = "https://hooks.example.com/approvals";
const TOKEN = "notify-a-person";
const agent = worker.agent as Agent<unknown>;
const defaults = { ...agent };
const realFetch = globalThis.fetch;
let fake: FakeProvider;
/** What the webhook receiver (a person's notifier) got: plain data (read in the object). */
let received: { url: string; headers: [string, string][]; body: string }[] = [];
const asRequest = (r: (typeof received)[number]) =>
  new Request(r.url, { method: "POST", headers: r.headers, body: r.body });
let counter = 0;

const ALICE = { "x-user": "alice" };
const BOB = { "x-user": "bob", "x-role": "approver" };

beforeEach(() => {
  received = [];
  fake = new FakeProvider({ seed: 5, maxChunk: 19 });
  harness.fetch = fake.fetch;
  harness.requests = [];
  harness.toolRuns = [];
  harness.model = openai({
    model: "gpt-4o-mini",
    apiKey: "sk-test",
    baseUrl: "https://fake.test/v1",
  });
  // The conversation object runs in this isolate: its deliveries come here.
  globalThis.fetch = (async (input: RequestInfo | URL, init?: RequestInit) => {
    const request = new Request(input, init);
    if (!request.url.startsWith(HOOK)) return realFetch(input, init);
    received.push({ url: request.url, headers: [...request.headers], body: await request.text() });
    return new Response(null, { status: 200 });
  }) as typeof fetch;
  agent.auth = {
    authenticate: (request: Request) => {
      const subject = request.headers.get("x-user");
      const role = request.headers.get("x-role");
      return subject ? { subject, ...(role ? { claims: { role } } : {}) } : null;
    },
  };
  agent.approvals = resolveApprovals({
    timeoutMs: 60 * 60 * 1000,
    approvers: { claims: { role: ["approver"] } },
  });
  agent.tools = {
    ...defaults.tools,
    get_capital: tool({
      description: "The capital of a country",
      input: z.object({ country: z.string() }),
      approval: () => "A person approves every lookup",
      run: ({ country }: { country: string }) => {
        harness.toolRuns.push(country);
        return "London";
      },
    }),
  };
});
afterEach(() => {
  globalThis.fetch = realFetch;
  Object.assign(agent, defaults);
});

const message = (parts: Json[], extra: Json = {}): Json => ({
  messageId: `held-push-${Date.now()}-${++counter}`,
  role: "ROLE_USER",
  parts,
  ...extra,
});

/** Runs the conversation's alarm until the receiver got `n` notifications. */
async function deliveries(contextId: string, n: number): Promise<Request[]> {
  const ns = env.EDGELINK_CONTEXT;
  const owner = JSON.stringify(["custom", "", "alice"]);
  const stub = ns.get(ns.idFromName(contextObjectName("", contextId, owner)));
  for (let i = 0; i < 50 && received.length < n; i++) {
    await runDurableObjectAlarm(stub);
    if (received.length < n) await sleep(20);
  }
  return received.map(asRequest);
}

describe("push carries the pending approval", () => {
  it("M9: a signed webhook gets input-required with the request (calls, tool, arguments, reason, deadline, how to answer), and the approver answers from it alone", async () => {
    fake.reply({ fixture: "openai-chat/tool-call-split-args.sse" });
    const sent = await rpc(
      "SendMessage",
      {
        message: message([{ text: "What is the capital of the UK?" }]),
        configuration: { taskPushNotificationConfig: { url: HOOK, token: TOKEN } },
      },
      { headers: ALICE },
    );
    const task = (sent.body.result as { task: Json }).task;
    expect((task.status as Json).state).toBe("TASK_STATE_INPUT_REQUIRED");
    const got = await deliveries(task.contextId as string, 3);
    const jwks = (await (
      await SELF.fetch("http://agent.test/.well-known/jwks.json")
    ).json()) as Json;
    const events = [];
    for (const request of got) {
      const verified = await verifyPushNotification(request, {
        keys: jwks as never,
        audience: HOOK,
        token: TOKEN,
      });
      expect(verified.taskId).toBe(task.id);
      events.push(verified.payload);
    }
    const asked = events
      .map((e) => e.statusUpdate as Json | undefined)
      .find((u) => (u?.status as Json | undefined)?.state === "TASK_STATE_INPUT_REQUIRED");
    expect(asked).toBeDefined();
    const parts = (((asked as Json).status as Json).message as Json).parts as Json[];
    const text = parts.find((p) => typeof p.text === "string")?.text as string;
    expect(text).toContain("Approval needed to run get_capital");
    expect(text).toContain("edgelink.approval.decision");
    const request = parts.find((p) => p.data)?.data as Json;
    const [call] = request.calls as Json[];
    expect(request).toMatchObject({ kind: "edgelink.approval.request" });
    expect(call).toMatchObject({
      tool: "get_capital",
      arguments: { country: "UK" },
      reason: "A person approves every lookup",
      type: "approval",
    });
    expect(Date.parse(call?.deadline as string)).toBeGreaterThan(Date.now() + 59 * 60 * 1000);
    expect(request.approverTaskId).toMatch(/^a\./);
    // The person answers with what the notification carried, nothing else.
    fake.reply({ fixture: "openai-chat/after-tool-result-text.sse" });
    const decided = await rpc(
      "SendMessage",
      {
        message: message(
          [
            {
              data: {
                kind: "edgelink.approval.decision",
                callId: call?.callId,
                decision: "approve",
              },
            },
          ],
          { taskId: request.approverTaskId },
        ),
      },
      { headers: BOB },
    );
    expect(decided.body.error).toBeUndefined();
    const done = await deliveries(task.contextId as string, got.length + 2);
    const last = done.at(-1);
    const final = await verifyPushNotification(last as Request, {
      keys: jwks as never,
      audience: HOOK,
    });
    expect(JSON.stringify(final.payload)).toMatch(/TASK_STATE_COMPLETED|London|Paris/);
    expect(harness.toolRuns).toEqual(["UK"]);
  });
});
