/**
 * Webhook push end to end (issue 5): the demo agent on wrangler's local runtime, a real
 * HTTP receiver on 127.0.0.1, the config registered with the official @a2a-js/sdk client,
 * and every delivery checked with the public receiver helper against the agent's JWKS.
 */
// @ts-nocheck -- Node-only test (the repository has no @types/node).
import { createServer } from "node:http";
import { TaskPushNotificationConfig } from "@a2a-js/sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { verifyPushNotification } from "../../src/push/verify";
import { sdkClient, sendRequest } from "./support/sdk";
import { type DemoAgent, startDemoAgent } from "./support/worker";

interface Received {
  headers: Record<string, string>;
  body: string;
  path: string;
}

let agent: DemoAgent;
let server: ReturnType<typeof createServer>;
let hookUrl: string;
const received: Received[] = [];
/** How many more requests the receiver's /flaky path answers with 500 (Retry-After: 0). */
let failuresLeft = 0;

beforeAll(async () => {
  agent = await startDemoAgent();
  server = createServer((req, res) => {
    let body = "";
    req.setEncoding("utf8");
    req.on("data", (chunk: string) => {
      body += chunk;
    });
    req.on("end", () => {
      received.push({ headers: req.headers as Record<string, string>, body, path: req.url });
      if (req.url === "/flaky" && failuresLeft > 0) {
        failuresLeft -= 1;
        res.statusCode = 500;
        res.setHeader("Retry-After", "0");
      } else {
        res.statusCode = 200;
      }
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  hookUrl = `http://127.0.0.1:${server.address().port}/hook`;
});

afterAll(async () => {
  await agent?.stop();
  await new Promise((resolve) => server?.close(resolve));
});

async function until<T>(check: () => T | undefined, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error("timed out waiting for webhook deliveries");
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe("push notifications to a real receiver", () => {
  it("a webhook registered with the SDK receives the task's events in order, signed", async () => {
    const client = await sdkClient(agent.baseUrl, "JSONRPC");
    const started = await client.sendMessage(
      sendRequest([{ text: "count 3" }], { returnImmediately: true }),
    );
    const taskId = started.id as string;
    const config = await client.createTaskPushNotificationConfig(
      TaskPushNotificationConfig.fromJSON({ taskId, url: hookUrl, token: "e2e-token" }),
    );
    expect(config.taskId).toBe(taskId);
    expect(config.id).not.toBe("");

    const mine = () => received.filter((r) => r.body.includes(taskId));
    await until(() =>
      mine().some((r) => r.body.includes("TASK_STATE_COMPLETED")) ? true : undefined,
    );

    const events = [];
    for (const delivery of mine()) {
      expect(delivery.headers["content-type"]).toBe("application/a2a+json");
      expect(delivery.headers["x-a2a-notification-token"]).toBe("e2e-token");
      const request = new Request(hookUrl, {
        method: "POST",
        headers: delivery.headers,
        body: delivery.body,
      });
      const verified = await verifyPushNotification(request, {
        jwksUrl: `${agent.baseUrl}/.well-known/jwks.json`,
        audience: hookUrl,
      });
      expect(verified.taskId).toBe(taskId);
      events.push(verified.event);
    }
    // The first delivery is the task itself; the stream of its events follows in order.
    expect(events[0]?.kind).toBe("task");
    const states = events.filter((e) => e.kind === "status-update").map((e) => e.status.state);
    expect(states.at(-1)).toBe("completed");
    const texts = events
      .filter((e) => e.kind === "status-update" && e.status.message)
      .map((e) => e.status.message.parts[0].content);
    // The count ticks once a second from the task's start; a config registered after the
    // first tick (a loaded machine) gets the task as it stands, then the later ticks, in order.
    expect(texts.length).toBeGreaterThanOrEqual(2);
    expect(texts).toEqual(["1…", "2…", "3…"].slice(3 - texts.length));
    const ids = mine().map((d) => d.headers["x-a2a-event-id"]);
    expect(new Set(ids).size).toBe(ids.length);

    const listed = await client.listTaskPushNotificationConfig({
      tenant: "",
      taskId,
      pageSize: 10,
      pageToken: "",
    });
    expect(listed.configs.map((c) => c.id)).toEqual([config.id]);
  });

  it("a streamed 12-word answer reaches the webhook as its status changes and one artifact, which the receiver rebuilds", async () => {
    const path = "/chunks";
    const url = hookUrl.replace("/hook", path);
    const words = "one two three four five six seven eight nine ten"; // "You said: " adds 2
    const sent = await fetch(`${agent.baseUrl}/message:send`, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({
        message: { messageId: crypto.randomUUID(), role: "ROLE_USER", parts: [{ text: words }] },
        configuration: { taskPushNotificationConfig: { url } },
      }),
    });
    const task = (await sent.json()).task;
    const mine = () => received.filter((r) => r.path === path && r.body.includes(task.id));
    await until(() =>
      mine().some((r) => r.body.includes("TASK_STATE_COMPLETED")) ? true : undefined,
    );
    const events = [];
    for (const delivery of mine()) {
      const request = new Request(url, {
        method: "POST",
        headers: delivery.headers,
        body: delivery.body,
      });
      const verified = await verifyPushNotification(request, {
        jwksUrl: `${agent.baseUrl}/.well-known/jwks.json`,
        audience: url,
      });
      events.push(verified.event);
    }
    // The receiver applies the deliveries in order (an append adds its parts).
    const parts = [];
    for (const event of events) {
      if (event.kind === "task")
        parts.splice(0, parts.length, ...(event.task.artifacts[0]?.parts ?? []));
      if (event.kind !== "artifact-update") continue;
      if (!event.append) parts.length = 0;
      parts.push(...event.artifact.parts);
    }
    expect(parts.map((p) => p.content).join("")).toBe(`You said: ${words}`);
    expect(parts).toHaveLength(12);
    const updates = events.filter((e) => e.kind === "artifact-update");
    // One in the normal case; a machine too loaded to stream 12 words within a chunk's
    // one-second wait sends what was there first. Never one per chunk.
    expect(updates.length).toBeGreaterThanOrEqual(1);
    expect(updates.length).toBeLessThanOrEqual(2);
    expect(updates.at(-1).lastChunk).toBe(true);
    expect(events.at(-1).kind).toBe("status-update");
    expect(events.at(-1).status.state).toBe("completed");
  });

  it("a receiver failing 3 times gets the same event again until it answers, then once", async () => {
    const client = await sdkClient(agent.baseUrl, "HTTP+JSON");
    const done = await client.sendMessage(sendRequest([{ text: "flaky receiver" }]));
    const taskId = done.id as string;
    failuresLeft = 3;
    const flakyUrl = hookUrl.replace("/hook", "/flaky");
    await client.createTaskPushNotificationConfig(
      TaskPushNotificationConfig.fromJSON({ taskId, url: flakyUrl }),
    );
    const mine = () => received.filter((r) => r.path === "/flaky" && r.body.includes(taskId));
    await until(() => (mine().length >= 4 ? true : undefined));
    await new Promise((r) => setTimeout(r, 300));
    const ids = mine().map((r) => r.headers["x-a2a-event-id"]);
    expect(ids).toHaveLength(4);
    expect(new Set(ids).size).toBe(1);
  });

  it("a receiver down past the attempts dead-letters the delivery; redelivery reaches it", async () => {
    const client = await sdkClient(agent.baseUrl, "JSONRPC");
    const done = await client.sendMessage(sendRequest([{ text: "down receiver" }]));
    const taskId = done.id as string;
    failuresLeft = 12; // every attempt of the default 12 fails
    const flakyUrl = hookUrl.replace("/hook", "/flaky");
    await client.createTaskPushNotificationConfig(
      TaskPushNotificationConfig.fromJSON({ taskId, url: flakyUrl }),
    );
    const deadLetters = async () =>
      (await (await fetch(`${agent.baseUrl}/tasks/${taskId}/deadLetters`)).json()).deliveries;
    let letters: unknown[] = [];
    for (let i = 0; i < 100 && letters.length === 0; i++) {
      letters = await deadLetters();
      if (letters.length === 0) await new Promise((r) => setTimeout(r, 100));
    }
    expect(letters).toHaveLength(1);
    expect(letters[0]).toMatchObject({ attempts: 12, state: "dead" });
    const task = await (await fetch(`${agent.baseUrl}/tasks/${taskId}`)).json();
    expect(task.status.state).toBe("TASK_STATE_COMPLETED");
    expect(task.metadata?.pushDeadLetters).toBeUndefined();

    const before = received.filter((r) => r.path === "/flaky" && r.body.includes(taskId)).length;
    const again = await fetch(`${agent.baseUrl}/tasks/${taskId}/deadLetters:redeliver`, {
      method: "POST",
    });
    expect(await again.json()).toEqual({ redelivered: 1 });
    await until(() =>
      received.filter((r) => r.path === "/flaky" && r.body.includes(taskId)).length > before
        ? true
        : undefined,
    );
    expect(await deadLetters()).toEqual([]);
  });
});
