/**
 * Approvals end to end: `wrangler dev` serving a model-backed agent whose tool needs
 * approval, its model a fake at the HTTP wire (a local server replaying recorded provider
 * streams), answered by the official SDK client over both bindings; and the server killed
 * while an approval is pending, the approval completing the task after the restart with
 * the tool run exactly once.
 */
// @ts-nocheck -- Node-only test (the repository has no @types/node).

import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { TaskState } from "@a2a-js/sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type DevServer, freePort, startDev } from "./support/dev-server";
import {
  asTask,
  type Binding,
  sdkClient,
  sendRequest,
  stateName,
  textRequest,
} from "./support/sdk";

const REPO = decodeURIComponent(new URL("../../", import.meta.url).pathname).replace(/\/$/, "");
const FIXTURES = join(REPO, "test", "fixtures", "providers", "openai-chat");

let dir: string;
let port: number;
let server: DevServer;
let fakeServer: ReturnType<typeof createServer>;
let fakeUrl: string;
/** The model's answers, in order: recorded provider streams. */
const replies: string[] = [];
/** Each run of the tool, as the tool reported it. */
const ran: string[] = [];

function agentSource(): string {
  return `import { defineAgent, tool } from ${JSON.stringify(`${REPO}/src/index`)};
import { openai } from ${JSON.stringify(`${REPO}/src/providers/index`)};
import * as z from ${JSON.stringify(`${REPO}/node_modules/zod/index.js`)};

const worker = defineAgent({
  card: { name: "Approval agent", description: "Asks before it acts" },
  model: openai({ model: "gpt-4o-mini", apiKey: "sk-test", baseUrl: ${JSON.stringify(`${fakeUrl}/v1`)} }),
  tools: {
    get_capital: tool({
      description: "The capital of a country",
      input: z.object({ country: z.string() }),
      approval: () => "Looking up capitals needs approval",
      run: async ({ country }) => {
        await fetch(${JSON.stringify(`${fakeUrl}/ran`)}, { method: "POST", body: country });
        return "London";
      },
    }),
  },
});

export const { EdgelinkContext, EdgelinkIndex } = worker;
export default worker;
`;
}

const CONFIG = `name = "edgelink-approval"
main = "agent.ts"
compatibility_date = "2026-11-01"
compatibility_flags = ["nodejs_compat"]

[[durable_objects.bindings]]
name = "EDGELINK_CONTEXT"
class_name = "EdgelinkContext"

[[durable_objects.bindings]]
name = "EDGELINK_INDEX"
class_name = "EdgelinkIndex"

[[migrations]]
tag = "v1"
new_sqlite_classes = ["EdgelinkContext", "EdgelinkIndex"]
`;

function start(): Promise<DevServer> {
  return startDev({
    cwd: dir,
    command: [
      join(REPO, "node_modules", ".bin", "wrangler"),
      "dev",
      "--persist-to",
      join(dir, "state"),
    ],
    port,
  });
}

beforeAll(async () => {
  fakeServer = createServer((req, res) => {
    let body = "";
    req.on("data", (d) => (body += d));
    req.on("end", () => {
      if (req.url === "/ran") {
        ran.push(body);
        res.end("ok");
        return;
      }
      const next = replies.shift();
      if (!next) {
        res.writeHead(500, { "content-type": "application/json" });
        res.end('{"error":{"message":"no reply scripted"}}');
        return;
      }
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.end(readFileSync(join(FIXTURES, next), "utf8"));
    });
  });
  const fakePort = await freePort();
  await new Promise<void>((resolve) => fakeServer.listen(fakePort, "127.0.0.1", resolve));
  fakeUrl = `http://127.0.0.1:${fakePort}`;
  dir = mkdtempSync(join(tmpdir(), "edgelink-approval-"));
  writeFileSync(join(dir, "agent.ts"), agentSource());
  writeFileSync(join(dir, "wrangler.toml"), CONFIG);
  port = await freePort();
  server = await start();
}, 120_000);

afterAll(async () => {
  await server?.stop();
  await new Promise((resolve) => fakeServer?.close(resolve));
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** The approval request's data part of an input-required task, as the SDK reads it. */
function requestOf(task) {
  for (const part of task.status?.message?.parts ?? []) {
    if (part.content?.$case === "data") return part.content.value;
  }
  throw new Error(`no data part in ${JSON.stringify(task.status)}`);
}

const decision = (callId: string, decision: string, extra = {}) => ({
  data: { kind: "edgelink.approval.decision", callId, decision, ...extra },
});

describe.each<Binding>(["JSONRPC", "HTTP+JSON"])(
  "the official SDK client answers an approval over %s",
  (binding) => {
    it("M2: the tool waits for the decision, runs once when approved, and the task completes", async () => {
      ran.length = 0;
      replies.push("tool-call-split-args.sse", "after-tool-result-text.sse");
      const client = await sdkClient(server.baseUrl, binding);
      const asked = asTask(await client.sendMessage(textRequest("What is the capital of the UK?")));
      expect(stateName(asked.status?.state)).toBe("TASK_STATE_INPUT_REQUIRED");
      const request = requestOf(asked);
      expect(request).toMatchObject({
        kind: "edgelink.approval.request",
        calls: [{ tool: "get_capital", arguments: { country: "UK" }, type: "approval" }],
      });
      expect(ran).toEqual([]);
      const done = asTask(
        await client.sendMessage(
          sendRequest([decision(request.calls[0].callId, "approve")], {
            taskId: asked.id,
            contextId: asked.contextId,
          }),
        ),
      );
      expect(stateName(done.status?.state)).toBe("TASK_STATE_COMPLETED");
      expect(ran).toEqual(["UK"]);
    });

    it("M5: an incomplete answer is refused and the task keeps waiting", async () => {
      replies.length = 0;
      replies.push("tool-call-split-args.sse");
      const client = await sdkClient(server.baseUrl, binding);
      const asked = asTask(await client.sendMessage(textRequest("What is the capital of the UK?")));
      await expect(
        client.sendMessage(
          sendRequest([decision("no-such-call", "approve")], {
            taskId: asked.id,
            contextId: asked.contextId,
          }),
        ),
      ).rejects.toThrow(/callId/);
      const now = await client.getTask({ id: asked.id });
      expect(stateName(now.status?.state)).toBe("TASK_STATE_INPUT_REQUIRED");
    });
  },
);

describe("a pending approval outlives a killed server", () => {
  it("M13: killed with SIGKILL while the approval is pending, restarted, the approval completes the task and the tool runs exactly once", async () => {
    ran.length = 0;
    replies.length = 0;
    replies.push("tool-call-split-args.sse");
    let client = await sdkClient(server.baseUrl, "HTTP+JSON");
    const asked = asTask(await client.sendMessage(textRequest("What is the capital of the UK?")));
    expect(stateName(asked.status?.state)).toBe("TASK_STATE_INPUT_REQUIRED");
    const callId = requestOf(asked).calls[0].callId;
    await server.kill();
    server = await start();
    client = await sdkClient(server.baseUrl, "JSONRPC");
    const still = await client.getTask({ id: asked.id });
    expect(stateName(still.status?.state)).toBe("TASK_STATE_INPUT_REQUIRED");
    expect(ran).toEqual([]);
    replies.push("after-tool-result-text.sse");
    const done = asTask(
      await client.sendMessage(
        sendRequest([decision(callId, "approve")], {
          taskId: asked.id,
          contextId: asked.contextId,
        }),
      ),
    );
    expect(stateName(done.status?.state)).toBe("TASK_STATE_COMPLETED");
    expect(ran).toEqual(["UK"]);
    expect(done.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
  }, 180_000);
});
