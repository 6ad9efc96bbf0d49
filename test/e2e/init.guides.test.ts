/**
 * The documentation against the project `edgelink init` made (./support/installed.ts:
 * installed once per run): every ts block type-checked against the installed package, and
 * the guides' code as written, pasted into a copy of that project and run by one `wrangler dev`
 * (./support/guides-run.ts): every Worker block of README.md and docs/guides behind one
 * router, model calls to a fake OpenAI on loopback, the client blocks in one Node process.
 */
// @ts-nocheck -- Node-only test (the repository has no @types/node).
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MCP_TOKEN, startMcpServer } from "../harness/agents/node/mcp-server";
import { checkBlocks, extractBlocks, repositoryBlocks } from "./support/doc-blocks";
import {
  blockOf,
  CLIENTS,
  type GuidesRun,
  HOOK_PATH,
  type ModelCall,
  startGuides,
  TYPE_ONLY,
  WORKERS,
} from "./support/guides-run";
import { installedProject, TRACING_GUIDE } from "./support/installed";
import { startReceiver } from "./support/otlp-receiver";

const REPO = decodeURIComponent(new URL("../../", import.meta.url).pathname).replace(/\/$/, "");

let root: string;
let echo: string;
/** What `npm install` of the new project printed on stderr (npm's warnings). */
let installWarnings: string;

beforeAll(async () => {
  ({ echo, installWarnings } = await installedProject());
  root = mkdtempSync(join(tmpdir(), "edgelink-guides-"));
}, 900_000);

afterAll(() => {
  if (root) rmSync(root, { recursive: true, force: true });
});

describe("the documentation against the installed package", () => {
  it("npm install of a new project on this Node warns EBADENGINE for no Edgelink package", () => {
    expect(installWarnings).not.toMatch(/EBADENGINE +package: 'edgelink@/);
  });

  it("npm install of a new project has every install script its toolchain needs allowed (npm 12 skips the others)", () => {
    expect(installWarnings).not.toMatch(/install-scripts +(node|workerd|esbuild)@/);
  });

  it("declares each public type once across the package's entries (one MemorySource, one Conversation)", () => {
    const dist = join(echo, "node_modules/edgelink/dist");
    const declared = (text: string) =>
      new Set(
        [
          ...text.matchAll(
            /^(?:export )?(?:declare )?(?:abstract )?(?:interface|type|class) ([A-Za-z_$][\w$]*)/gm,
          ),
        ].map((m) => m[1]),
      );
    const files = new Map<string, number>();
    for (const file of readdirSync(dist).filter((f) => f.endsWith(".d.ts"))) {
      for (const name of declared(readFileSync(join(dist, file), "utf8"))) {
        files.set(name, (files.get(name) ?? 0) + 1);
      }
    }
    // A name declared in two .d.ts files must be two declarations in the source too.
    const sources = new Map<string, number>();
    const walk = (dir: string) => {
      for (const entry of readdirSync(dir, { withFileTypes: true })) {
        const path = join(dir, entry.name);
        if (entry.isDirectory()) walk(path);
        else if (entry.name.endsWith(".ts")) {
          for (const name of declared(readFileSync(path, "utf8"))) {
            sources.set(name, (sources.get(name) ?? 0) + 1);
          }
        }
      }
    };
    walk(join(REPO, "src"));
    const copied = [...files].filter(([name, n]) => n > (sources.get(name) ?? 1));
    expect(files.get("MemorySource")).toBe(1);
    expect(files.get("Conversation")).toBe(1);
    expect(copied).toEqual([]);
  });

  it("every ts block of README.md and docs/ type-checks against the installed package", () => {
    const blocks = repositoryBlocks(REPO).filter((b) => !b.ignored);
    expect(blocks.some((b) => b.file === TRACING_GUIDE)).toBe(true);
    const errors = checkBlocks(REPO, blocks, echo);
    expect(errors.map((e) => `${e.where}: ${e.message}`)).toEqual([]);
  }, 240_000);
});

describe("the guides run as written in the new project: one wrangler dev serves every guide's Worker", () => {
  let guides: GuidesRun;
  let clients: Record<string, { out: string; error?: string }>;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let mcp: Awaited<ReturnType<typeof startMcpServer>>;

  /** A JSON-RPC call of a guide Worker's agent, as any A2A client sends it. */
  const rpc = async (slug: string, method: string, params: object, apiKey?: string) => {
    const response = await fetch(guides.url(slug), {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "a2a-version": "1.0",
        ...(apiKey ? { "x-api-key": apiKey } : {}),
      },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
    });
    return { status: response.status, body: await response.json() };
  };
  const send = async (slug: string, text: string, more: object = {}, apiKey?: string) => {
    const { status, body } = await rpc(
      slug,
      "SendMessage",
      {
        message: { messageId: crypto.randomUUID(), role: "ROLE_USER", parts: [{ text }], ...more },
      },
      apiKey,
    );
    expect(status, JSON.stringify(body)).toBe(200);
    return body.result.task;
  };
  const answer = (task) =>
    (task.artifacts ?? []).flatMap((a) => a.parts.map((p) => p.text ?? "")).join("");
  /** The tasks of a guide's agent, with their artifacts. */
  const tasksOf = async (slug: string, historyLength?: number) =>
    (await rpc(slug, "ListTasks", { includeArtifacts: true, historyLength })).body.result.tasks;

  /** A call of a guide agent's /memory routes, signed in with an API key. */
  const memoryApi = async (slug: string, apiKey: string, path: string, init: RequestInit = {}) => {
    const response = await fetch(`${guides.url(slug)}/memory${path}`, {
      ...init,
      headers: { "content-type": "application/json", "x-api-key": apiKey },
    });
    return { status: response.status, body: await response.json() };
  };
  /** The text of every message of a model call, joined. */
  const said = (call: ModelCall) => call.messages.map((m) => JSON.stringify(m.content)).join("\n");

  beforeAll(async () => {
    receiver = await startReceiver();
    mcp = await startMcpServer();
    guides = await startGuides(REPO, root, echo, {
      OTLP_URL: receiver.url,
      DOCS_MCP_URL: `${mcp.url}/mcp`,
      DOCS_MCP_TOKEN: MCP_TOKEN,
    });
  }, 180_000);
  afterAll(async () => {
    await guides?.close();
    receiver?.server.close();
    await mcp?.close();
  });

  it("every ts block of README.md and docs/guides is run here, or listed as type-checked only with why", () => {
    const blocks = repositoryBlocks(REPO).filter(
      (b) => !b.ignored && (b.file === "README.md" || b.file.startsWith("docs/guides/")),
    );
    const listed = [...WORKERS, ...CLIENTS, ...TYPE_ONLY].map((l) => blockOf(REPO, l.file, l.find));
    const unlisted = blocks.filter(
      (b) => !listed.some((l) => l.file === b.file && l.line === b.line),
    );
    expect(unlisted.map((b) => `${b.file}:${b.line}`)).toEqual([]);
  });

  it("new-project and your-own-worker: the Worker a new project pastes answers a message", async () => {
    expect(answer(await send("new-project", "hello"))).toBe("You said: hello");
    expect(answer(await send("own-worker", "hi"))).toBe("Hello!");
  });

  it("getting-started: an empty message asks for a name (input-required), the reply in the same task greets with GREETING", async () => {
    const asked = await send("getting-started", " ");
    expect(asked.status.state).toBe("TASK_STATE_INPUT_REQUIRED");
    expect(asked.status.message.parts[0].text).toBe("What's your name?");
    const done = await send("getting-started", "Ada", {
      taskId: asked.id,
      contextId: asked.contextId,
    });
    expect(done.status.state).toBe("TASK_STATE_COMPLETED");
    expect(answer(done)).toBe("Hello, Ada!");
  });

  it("inspector: inspector: false is never served, even on localhost where another agent's is", async () => {
    const off = await fetch(`${guides.url("inspector")}/inspector`);
    expect(off.status).toBe(404);
    expect(await off.text()).toContain("EDGELINK_INSPECTOR");
    expect((await fetch(`${guides.url("own-worker")}/inspector`)).status).toBe(200);
    expect(answer(await send("inspector", "where is my order?"))).toBe(
      "You asked: where is my order?",
    );
  });

  it("compose-with-hono: the agent lives under /agent, with CORS, beside the app's own /health", async () => {
    // The app's own route answers, with cors() headers: the middleware runs for every route.
    const health = await fetch(`${guides.url("compose")}/health`, {
      headers: { origin: "https://app.example.com" },
    });
    expect(await health.text()).toBe("ok");
    expect(health.headers.get("access-control-allow-origin")).toBe("*");
    const card = await fetch(`${guides.url("compose")}/agent/.well-known/agent-card.json`, {
      headers: { origin: "https://app.example.com" },
    });
    expect(card.status).toBe(200);
    const body = await card.json();
    expect(body.name).toBe("Greeter");
    expect(body.supportedInterfaces[0].url).toContain("/compose/agent");
    expect(answer(await send("compose/agent", "hi"))).toBe("Hello!");
  });

  it("compose-with-hono, endpoints: a path input is validated by its schema (400 naming the field), a stream endpoint sends SSE frames", async () => {
    const ok = await fetch(`${guides.url("endpoints")}/forecast/Paris`);
    expect(ok.status).toBe(200);
    expect(await ok.json()).toMatchObject({ city: "Paris", sky: "clear" });
    const bad = await fetch(`${guides.url("endpoints")}/forecast/ab`);
    expect(bad.status).toBe(400);
    const problem = await bad.json();
    expect(problem.error.status).toBe("INVALID_ARGUMENT");
    expect(problem.error.message).toContain("path.city");
    const ticker = await fetch(`${guides.url("endpoints")}/ticker`);
    expect(ticker.headers.get("content-type")).toContain("text/event-stream");
    const frames = (await ticker.text()).match(/^data: .*$/gm);
    expect(frames).toEqual(['data: {"tick":0}', 'data: {"tick":1}', 'data: {"tick":2}']);
  });

  it("model-agents and tools: the model's tool call runs and its result is the answer", async () => {
    const before = guides.modelCalls.length;
    for (const slug of ["model-agents", "tools"]) {
      const task = await send(slug, "What is 2 + 3?");
      expect(task.status.state, JSON.stringify(task.status)).toBe("TASK_STATE_COMPLETED");
      expect(answer(task)).toBe("5");
    }
    const calls = guides.modelCalls.slice(before);
    expect(calls.map((c) => c.tools.sort().join(","))).toEqual([
      "add",
      "add",
      "add,weather",
      "add,weather",
    ]);
    expect(calls[1].messages.at(-1)).toMatchObject({ role: "tool", content: "5" });
  });

  it("model-agents, prompt composition: the system prompt is the global prompt, the tools prompt, the profile's enabled sections by order, then the additional context", async () => {
    const before = guides.modelCalls.length;
    const task = await send("model-prompt", "Hello there");
    expect(task.status.state, JSON.stringify(task.status)).toBe("TASK_STATE_COMPLETED");
    const system = guides.modelCalls[before].messages.find((m) => m.role === "system");
    const prompt = String(system?.content);
    const at = [
      "You work for Acme.",
      "Looks up an order",
      "You are a patient support agent.",
      "Never promise refunds.",
      "Customers are on the Pro plan.",
    ].map((part) => prompt.indexOf(part));
    expect(
      at.every((i) => i >= 0),
      prompt,
    ).toBe(true);
    expect(at).toEqual([...at].sort((a, b) => a - b));
    expect(prompt).not.toContain("Q: hi"); // the disabled section
  });

  it("model-agents, withStrategy: a plan first (no tools), the draft with the plan in its system prompt, then a review of the draft whose answer is the answer", async () => {
    const before = guides.modelCalls.length;
    const task = await send("model-strategy", "A line about rain");
    expect(task.status.state, JSON.stringify(task.status)).toBe("TASK_STATE_COMPLETED");
    const calls = guides.modelCalls.slice(before);
    expect(calls).toHaveLength(3);
    expect(said(calls[0])).toContain("short numbered plan");
    const draftSystem = String(calls[1].messages.find((m) => m.role === "system")?.content);
    expect(draftSystem).toContain("Your plan for this turn:\nok");
    expect(calls[2].messages.slice(-2)).toMatchObject([
      { role: "assistant", content: "ok" },
      { role: "user", content: expect.stringContaining("Review your answer above") },
    ]);
    expect(answer(task)).toBe("ok");
  });

  it("approvals: a refund over 100 waits for a decision; 100 or less runs at once", async () => {
    const held = await send("refunds-tool", "Refund order A-18, 150 euros");
    expect(held.status.state).toBe("TASK_STATE_INPUT_REQUIRED");
    expect(answer(held)).not.toContain("Refunded");
    expect(JSON.stringify(held.status.message)).toContain("Refunds over 100 need approval");
    const small = await send("refunds-tool", "Refund order A-19, 50 euros");
    expect(small.status.state).toBe("TASK_STATE_COMPLETED");
    expect(answer(small)).toBe("Refunded 50 on order A-19");
    const asked = await send("refunds-handler", "anything");
    expect(asked.status.state).toBe("TASK_STATE_INPUT_REQUIRED");
  });

  it("memory, a handler of your own: a signed-in caller's claim is noted once (a duplicate in other case and spacing is known), recalled as the rendered section; another caller's memory is empty", async () => {
    const anonymous = await rpc("memory-handler", "SendMessage", {
      message: { messageId: "m-anon", role: "ROLE_USER", parts: [{ text: "Remember: x" }] },
    });
    expect(anonymous.status).toBe(401);
    expect(
      answer(await send("memory-handler", "Remember: I drink my coffee black", {}, "k-ada")),
    ).toBe("Noted.");
    expect(
      answer(await send("memory-handler", "Remember: i drink  my Coffee black ", {}, "k-ada")),
    ).toBe("I knew that already.");
    const recalled = answer(await send("memory-handler", "coffee", {}, "k-ada"));
    expect(recalled).toContain("## What you remember about this user");
    expect(recalled).toContain("- I drink my coffee black (stated by the user)");
    expect(answer(await send("memory-handler", "coffee", {}, "k-bob"))).toBe(
      "I remember nothing about that.",
    );
  });

  it("memory, turned on: a fact added through /memory is recalled into the caller's next model turn (fenced as data), the memory tools offered; not into another caller's", async () => {
    const added = await memoryApi("memory-model", "k-ada", "/facts", {
      method: "POST",
      body: JSON.stringify({ claim: "The user is vegetarian." }),
    });
    expect(added.status, JSON.stringify(added.body)).toBe(200);
    const bobs = await memoryApi("memory-model", "k-bob", "/facts", {
      method: "POST",
      body: JSON.stringify({ claim: "The user flies from Oslo." }),
    });
    expect(bobs.status).toBe(200);
    const before = guides.modelCalls.length;
    const task = await send("memory-model", "Plan a dinner in Rome for me", {}, "k-ada");
    expect(task.status.state, JSON.stringify(task.status)).toBe("TASK_STATE_COMPLETED");
    const turn = guides.modelCalls.slice(before).find((c) => said(c).includes("Plan a dinner"));
    expect(turn?.tools).toEqual(
      expect.arrayContaining(["remember", "forget", "set_goal", "update_goal", "describe_entity"]),
    );
    expect(said(turn)).toMatch(
      /<recalled_memory>[\s\S]*The user is vegetarian\.[\s\S]*<\/recalled_memory>/,
    );
    expect(said(turn)).not.toContain("Oslo");
  });

  it("memory, recording turns: what a caller said in one conversation is recalled, quoted, in another", async () => {
    await send("memory-turns", "For the party we picked the riverside venue", {}, "k-ada");
    // Recording runs just after the answer: ask until it has landed (a few tries at most).
    let recalled = "";
    for (let i = 0; i < 20 && !recalled.includes("riverside"); i++) {
      const before = guides.modelCalls.length;
      await send("memory-turns", "Which venue did we pick for the party?", {}, "k-ada");
      recalled = guides.modelCalls.slice(before).map(said).join("\n");
      if (!recalled.includes("riverside")) await new Promise((r) => setTimeout(r, 250));
    }
    expect(recalled).toContain("From past conversations");
    expect(recalled).toContain("the user said: ");
    expect(recalled).toContain("For the party we picked the riverside venue");
    const before = guides.modelCalls.length;
    await send("memory-turns", "Which venue did we pick for the party?", {}, "k-bob");
    expect(guides.modelCalls.slice(before).map(said).join("\n")).not.toContain("riverside");
  }, 30_000);

  it("push: the guide's agent signs each event's delivery; the guide's receiver Worker verifies it against the agent's JWKS (fetched from it) and logs it, in order; an unsigned POST is refused", async () => {
    const card = await (
      await fetch(`${guides.url("push-agent")}/.well-known/agent-card.json`)
    ).json();
    expect(card.capabilities.pushNotifications).toBe(true);
    const { status, body } = await rpc("push-agent", "SendMessage", {
      message: { messageId: "m-push", role: "ROLE_USER", parts: [{ text: "ship it" }] },
      configuration: {
        taskPushNotificationConfig: { url: `${guides.server.baseUrl}${HOOK_PATH}`, token: "t1" },
      },
    });
    expect(status, JSON.stringify(body)).toBe(200);
    const taskId = body.result.task.id;
    expect(answer(body.result.task)).toBe("Done: ship it");
    // The receiver logs `taskId eventId kind` for each delivery it verified.
    const logged = () =>
      guides.server
        .output()
        .split("\n")
        .filter((line) => line.includes(`${taskId} `))
        .map((line) => line.slice(line.indexOf(taskId)).split(" ")[2]);
    const deadline = Date.now() + 20_000;
    while (!logged().includes("status-update") && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 200));
    }
    expect(logged()[0], guides.server.output()).toBe("task");
    expect(logged()).toContain("status-update");
    const unsigned = await fetch(`${guides.server.baseUrl}${HOOK_PATH}`, {
      method: "POST",
      headers: { "content-type": "application/a2a+json", "x-a2a-signature": "e30.e30.e30" },
      body: JSON.stringify({ task: body.result.task }),
    });
    expect(unsigned.status).toBe(401);
  }, 30_000);

  it("calling other agents: the Editor forwards its writer's answer (a service binding to another guide's agent), asks an agent by URL for a title, and follows a third child's events", async () => {
    const task = await send("editor", "draft a haiku");
    expect(task.status.state, JSON.stringify(task.status)).toBe("TASK_STATE_COMPLETED");
    expect(answer(task)).toBe("You said: draft a haikuTitle: Hello!");
    // The third child's events, each kind logged on a line of its own as they came.
    const kinds = guides.server
      .output()
      .split("\n")
      .filter((l) => /^[a-z-]+$/.test(l.trim()));
    expect(kinds.map((l) => l.trim())).toEqual(expect.arrayContaining(["task", "artifact-update"]));
  });

  it("mcp: the MCP server's tools are offered beside the agent's own (a clashing name prefixed with the server's), its URL and bearer token read from vars, and a call's result answers", async () => {
    await fetch(`${mcp.url}/stats`, { method: "POST" });
    const before = guides.modelCalls.length;
    const task = await send("mcp", "What is the capital of France?");
    expect(task.status.state, JSON.stringify(task.status)).toBe("TASK_STATE_COMPLETED");
    expect(answer(task)).toBe("Paris");
    expect(guides.modelCalls[before].tools).toEqual(
      expect.arrayContaining(["add", "docs_add", "get_capital"]),
    );
    const stats = await (await fetch(`${mcp.url}/stats`)).json();
    expect(stats.calls).toEqual([{ name: "get_capital", args: { country: "France" } }]);
    expect(stats.unauthorized).toBe(0);
  });

  it("the client blocks run in Node against their guide's Worker: README's assistant, and the approvals client's decision resumes the held call", async () => {
    clients = await guides.runClients();
    for (const [name, ran] of Object.entries(clients)) expect(ran.error, name).toBeUndefined();
    // README: the add tool's answer, then the streamed turn's states.
    const readme = clients["readme-client"].out.split("\n");
    expect(readme[0]).toBe("42");
    expect(readme).toContain("completed");
    // Approvals: the client approved the held call (150 ≤ 500), and the task completed.
    // The front desk's own call of refunds-tool (below) asks the same and is decided the
    // same; the listing shows it once the index has it (seconds later, under load): it is
    // told apart by its reply, whose message id starts with the front desk's task id.
    const deskIds = (await tasksOf("front-desk")).map((t) => t.id);
    const viaDesk = (t) =>
      (t.history ?? []).some((m) => deskIds.some((id) => String(m.messageId).startsWith(`${id}:`)));
    for (const slug of ["refunds-tool", "refunds-handler"]) {
      const tasks = await tasksOf(slug, 20);
      const decided = tasks.filter((t) => answer(t) === "Refunded 150 on order A-17");
      const seen = JSON.stringify({ deskIds, decided: decided.map((t) => t.history) });
      expect(
        decided.filter((t) => !viaDesk(t)).map((t) => t.status.state),
        `${slug}: ${seen}`,
      ).toEqual(["TASK_STATE_COMPLETED"]);
      const relayed = decided.filter(viaDesk).map((t) => t.status.state);
      expect(relayed, slug).toEqual(
        slug === "refunds-tool" ? relayed.map(() => "TASK_STATE_COMPLETED") : [],
      );
      expect(relayed.length, slug).toBeLessThanOrEqual(1);
    }
    // The front desk relayed its refunds agent's question to the client and the decision
    // back: it answers the state of the refunds agent's task once that ran the refund (the
    // model got the refund's result twice: for the client's own task and the front desk's).
    const refunded = guides.modelCalls.filter(
      (c) =>
        c.messages.at(-1)?.role === "tool" &&
        c.messages.at(-1)?.content === "Refunded 150 on order A-17",
    );
    expect(refunded).toHaveLength(2);
    const desk = await tasksOf("front-desk");
    expect(desk.map((t) => [t.status.state, answer(t)])).toEqual([
      ["TASK_STATE_COMPLETED", "completed"],
    ]);
    // Memory: the client added, corrected and erased the signed-in caller's memory, and
    // only theirs (the other caller's fact is still there).
    const ada = await memoryApi("memory-model", "k-ada", "?kind=fact");
    expect(ada).toEqual({ status: 200, body: expect.objectContaining({ items: [] }) });
    expect((await memoryApi("memory-model", "k-ada", "?kind=entity")).body.items).toEqual([]);
    const bob = await memoryApi("memory-model", "k-bob", "?kind=fact");
    expect(bob.body.items.map((f) => f.claim)).toEqual(["The user flies from Oslo."]);
    expect(guides.server.output()).not.toMatch(/Uncaught|TypeError|ReferenceError/);
  }, 60_000);

  // Last: once called, otel-cf-workers wraps the isolate's global fetch.
  it("tracing: the instrumented Worker serves a request and its spans (SendMessage, invoke_agent) reach an OTLP receiver", async () => {
    const guide = readFileSync(join(REPO, TRACING_GUIDE), "utf8");
    const block = extractBlocks(TRACING_GUIDE, guide).find((b) => b.code.includes("Traced agent"));
    expect(block?.ignored).toBe(false);
    const traceId = "5bf92f3577b34da6a3ce929d0e0e4736";
    const response = await fetch(`${guides.url("tracing")}/`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "a2a-version": "1.0",
        traceparent: `00-${traceId}-00f067aa0ba902b7-01`,
      },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "SendMessage",
        params: {
          message: { messageId: "m1", role: "ROLE_USER", parts: [{ text: "traced hello" }] },
        },
      }),
    });
    expect(response.status, guides.server.output()).toBe(200);
    const body = await response.json();
    expect(body.result?.task?.artifacts?.[0]?.parts?.[0]?.text).toBe("You said: traced hello");
    const names = () => receiver.spans.filter((s) => s.traceId === traceId).map((s) => s.name);
    const deadline = Date.now() + 30_000;
    while (!names().some((n) => n.startsWith("invoke_agent")) && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 200));
    }
    expect(names(), guides.server.output()).toContain("SendMessage");
    expect(names()).toContain("invoke_agent Traced agent");
    expect(guides.server.output()).not.toMatch(/Uncaught|TypeError|ReferenceError/);
  }, 60_000);
});
