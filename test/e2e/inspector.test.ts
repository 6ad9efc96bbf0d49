/**
 * Issue 13: the inspector page in a real browser. Debian's chromium, driven headless by
 * playwright-core (no browser download), loads /inspector from real local Workers: the
 * demo agent (streaming, a tool call, a cancel), an agent behind API keys, and a model
 * agent that thinks aloud and calls a tool (its provider a fake replaying a recorded
 * Anthropic turn). Screenshots go to test/e2e/output/. `.ci/run` installs chromium; where
 * it is missing this test is skipped with a loud message, never silently.
 */
import { mkdirSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hasBrowser as hasBrowserFor, launchChromium, openPage } from "./support/chromium";
import { type FakeProviderServer, startFakeProvider } from "./support/fake-provider-server";
import { type DemoAgent, startDemoAgent, startWorker } from "./support/worker";

const hasBrowser = hasBrowserFor("the inspector browser test");
const OUTPUT = decodeURIComponent(new URL("./output/", import.meta.url).pathname);
const API_KEY = "inspector-e2e-key-0123456789";
const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/;

let demo: DemoAgent;
let guarded: DemoAgent;
let thinker: DemoAgent;
let provider: FakeProviderServer;
let browser: Browser;

beforeAll(async () => {
  if (!hasBrowser) return;
  provider = await startFakeProvider();
  [demo, guarded, thinker] = await Promise.all([
    startDemoAgent(20),
    startWorker("test/e2e/support/auth.wrangler.toml", { AGENT_API_KEYS: API_KEY }),
    startWorker("test/e2e/support/reasoning.wrangler.toml", {
      ANTHROPIC_API_KEY: "sk-ant-e2e",
      ANTHROPIC_BASE_URL: provider.origin,
    }),
  ]);
  browser = await launchChromium();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await Promise.all([demo?.stop(), guarded?.stop(), thinker?.stop()]);
  await provider?.close();
});

/** A webhook receiver on loopback (the demo, served from localhost, may push there). */
async function startReceiver(): Promise<{ url: string; bodies: string[]; close(): Promise<void> }> {
  const bodies: string[] = [];
  const server = createServer((request, response) => {
    let body = "";
    request.on("data", (chunk) => {
      body += chunk;
    });
    request.on("end", () => {
      bodies.push(body);
      response.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    bodies,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/** A fresh page on `agent`'s inspector, its card loaded; page errors are collected. */
async function openInspector(agent: DemoAgent): Promise<{ page: Page; errors: string[] }> {
  const page = await openPage(browser, { width: 1280, height: 900 });
  const errors: string[] = [];
  page.on("pageerror", (error) => errors.push(error.message));
  await page.goto(`${agent.baseUrl}/inspector`);
  await expect
    .poll(() => page.locator("#agent-name").textContent(), { timeout: 15_000 })
    .not.toBe("");
  return { page, errors };
}

async function screenshot(page: Page, name: string): Promise<void> {
  mkdirSync(OUTPUT, { recursive: true });
  await page.screenshot({ path: `${OUTPUT}${name}.png`, fullPage: true });
}

const chatState = (page: Page) => page.locator("#chat-status .state").textContent();
const rows = (page: Page, selector: string) => page.locator(selector).allTextContents();

describe.skipIf(!hasBrowser)("the inspector in chromium (issue 13)", () => {
  it("loads the card, streams an answer, shows the task completed with its timeline", async () => {
    const { page, errors } = await openInspector(demo);
    // No auth on the demo: no credential field.
    expect(await page.locator("#auth-form").isHidden()).toBe(true);

    // Keyboard only: focus the labelled message box, type, Enter sends.
    await page.getByLabel("Message", { exact: true }).fill("streams are fun to watch");
    const chunks: string[] = [];
    await page.exposeFunction("seen", (text: string) => chunks.push(text));
    await page.evaluate(() => {
      const log = document.getElementById("chat-log") as HTMLElement;
      new MutationObserver(() => {
        const agentBubble = log.querySelector(".bubble.agent");
        if (agentBubble)
          (window as unknown as { seen(t: string): void }).seen(agentBubble.textContent ?? "");
      }).observe(log, { subtree: true, childList: true, characterData: true });
    });
    await page.getByLabel("Message", { exact: true }).press("Enter");

    const answer = page.locator("#chat-log .bubble.agent").first();
    await expect
      .poll(() => answer.textContent(), { timeout: 15_000 })
      .toBe("You said: streams are fun to watch");
    // The answer arrived in pieces, not at once.
    expect(new Set(chunks).size).toBeGreaterThan(2);
    await expect.poll(() => chatState(page), { timeout: 15_000 }).toBe("completed");

    // The task list names the task by what was asked and shows it completed.
    await expect
      .poll(() => page.locator("#tasks .state").first().textContent(), { timeout: 15_000 })
      .toBe("completed");
    expect(await page.locator("#tasks button").first().textContent()).toBe(
      "streams are fun to watch",
    );
    // The task panel: its events in order, states and artifact chunks in words, no UUIDs.
    const timeline = page.locator("#task ol.timeline li");
    await expect.poll(() => timeline.count(), { timeout: 15_000 }).toBeGreaterThan(3);
    const events = await timeline.allTextContents();
    expect(events[0]).toBe("working");
    expect(events.at(-1)).toBe("completed");
    expect(events[1]).toBe("echo You ");
    expect(events[2]).toBe("echo, chunk 2 said: ");
    expect(events.at(-2)).toBe("echo, chunk 7 (last) watch");
    expect(events.join("\n")).not.toMatch(UUID);
    expect(await page.locator("#task button", { hasText: "Cancel task" }).isHidden()).toBe(true);
    await expect
      .poll(() => page.locator("#history li").count(), { timeout: 15_000 })
      .toBeGreaterThan(0);

    await screenshot(page, "inspector");
    expect(errors).toEqual([]);
  });

  it("B10: a tool_call part sent as JSON shows the call and its result, by tool name", async () => {
    const { page, errors } = await openInspector(demo);
    await page.getByLabel("Parts as JSON").check();
    await page.getByLabel("Message", { exact: true }).fill(
      JSON.stringify([
        {
          data: { toolName: "add", args: { a: 2, b: 3 }, callId: "call-add" },
          metadata: { "edgelink/part": "tool_call" },
        },
        {
          data: { toolName: "reverse", args: { text: "inspector" } },
          metadata: { "edgelink/part": "tool_call" },
        },
      ]),
    );
    await page.getByLabel("Message", { exact: true }).press("Enter");
    await expect.poll(() => chatState(page), { timeout: 15_000 }).toBe("completed");
    const tools = await rows(page, "#chat-log .bubble.tool");
    expect(tools).toEqual([
      'tool call: add {"a":2,"b":3}',
      "tool result: add → 5",
      'tool call: reverse {"text":"inspector"}',
      'tool result: reverse → "rotcepsni"',
    ]);
    expect(await page.locator("#chat-log .bubble.user").textContent()).toBe(
      'tool call: add {"a":2,"b":3}\ntool call: reverse {"text":"inspector"}',
    );

    // The timeline shows each call and result where it happened, the artifact by its name.
    const timeline = page.locator("#task ol.timeline li");
    await expect.poll(() => timeline.count(), { timeout: 15_000 }).toBe(7);
    expect(await timeline.allTextContents()).toEqual([
      "working",
      'working tool call: add {"a":2,"b":3}',
      "working tool result: add → 5",
      'working tool call: reverse {"text":"inspector"}',
      'working tool result: reverse → "rotcepsni"',
      'result tool result: add → 5\ntool result: reverse → "rotcepsni"',
      "completed",
    ]);
    await expect
      .poll(() => rows(page, "#history li"), { timeout: 15_000 })
      .toEqual(['user: tool call: add {"a":2,"b":3}\ntool call: reverse {"text":"inspector"}']);

    // Event numbers past 9 fit in the list's margin: the widest, "100.", is narrower than it.
    const fits = await page.evaluate(() => {
      const list = document.querySelector("#task ol.timeline") as HTMLElement;
      const probe = document.createElement("span");
      probe.textContent = "100. ";
      list.append(probe);
      const width = probe.getBoundingClientRect().width;
      probe.remove();
      return { width, padding: Number.parseFloat(getComputedStyle(list).paddingLeft) };
    });
    expect(fits.width).toBeLessThan(fits.padding);

    await expect
      .poll(() => page.locator("#tasks button").first().textContent(), { timeout: 15_000 })
      .toBe('tool call: add {"a":2,"b":3} tool call:…');
    await screenshot(page, "inspector-tools");
    expect(errors).toEqual([]);
  });

  it("cancels a running task from the chat; the button is off once the task has ended", async () => {
    const { page, errors } = await openInspector(demo);
    const cancel = page.getByRole("button", { name: "Cancel task" }).first();
    expect(await cancel.isDisabled()).toBe(true);
    await page.getByLabel("Message", { exact: true }).fill("count 20");
    await page.getByLabel("Message", { exact: true }).press("Enter");
    await expect.poll(() => chatState(page), { timeout: 15_000 }).toBe("working");
    await expect
      .poll(() => page.locator("#chat-status").textContent(), { timeout: 5_000 })
      .toContain("2…");
    expect(await cancel.isEnabled()).toBe(true);
    await cancel.click();

    await expect.poll(() => chatState(page), { timeout: 15_000 }).toBe("canceled");
    expect(await cancel.isDisabled()).toBe(true);
    // Well before 20 seconds: the count stopped where it was canceled.
    expect(await page.locator("#chat-status").textContent()).not.toContain("20…");
    const timeline = page.locator("#task ol.timeline li");
    await expect.poll(() => timeline.last().textContent(), { timeout: 15_000 }).toBe("canceled");
    expect(await page.locator("#task button", { hasText: "Cancel task" }).isHidden()).toBe(true);
    await expect
      .poll(() => page.locator("#tasks .state").first().textContent(), { timeout: 15_000 })
      .toBe("canceled");

    // A task started elsewhere, chosen in the list, canceled from the task panel.
    const started = await fetch(`${demo.baseUrl}/message:send`, {
      method: "POST",
      headers: { "Content-Type": "application/json", "A2A-Version": "1.0" },
      body: JSON.stringify({
        message: {
          messageId: crypto.randomUUID(),
          role: "ROLE_USER",
          parts: [{ text: "count 30" }],
        },
        configuration: { returnImmediately: true },
      }),
    });
    expect(started.status).toBe(200);
    await expect
      .poll(
        async () => {
          await page.getByRole("button", { name: "Refresh" }).click();
          return page.locator("#tasks button").first().textContent();
        },
        { timeout: 15_000, interval: 500 },
      )
      .toBe("count 30");
    await page.locator("#tasks button").first().click();
    const panelCancel = page.locator("#task button", { hasText: "Cancel task" });
    await expect.poll(() => panelCancel.isVisible(), { timeout: 15_000 }).toBe(true);
    expect(await page.locator("#task .state").textContent()).toBe("working");
    await panelCancel.click();
    await expect
      .poll(() => page.locator("#task .state").textContent(), { timeout: 15_000 })
      .toBe("canceled");
    expect(await panelCancel.isHidden()).toBe(true);
    expect(await page.locator("#task ol.timeline li").last().textContent()).toBe("canceled");
    expect(await page.locator("#tasks .state").first().textContent()).toBe("canceled");

    await screenshot(page, "inspector-cancel");
    expect(errors).toEqual([]);
  });

  it("draws a task's webhook attempts from its steps, which the task itself does not carry", async () => {
    const hook = await startReceiver();
    try {
      const sent = await fetch(`${demo.baseUrl}/`, {
        method: "POST",
        headers: { "Content-Type": "application/json", "A2A-Version": "1.0" },
        body: JSON.stringify({
          jsonrpc: "2.0",
          id: 1,
          method: "SendMessage",
          params: {
            message: {
              messageId: crypto.randomUUID(),
              role: "ROLE_USER",
              parts: [{ text: "hooked" }],
            },
            configuration: { taskPushNotificationConfig: { id: "hook-1", url: hook.url } },
          },
        }),
      });
      const task = ((await sent.json()) as { result: { task: { id: string } } }).result.task;
      await expect
        .poll(() => hook.bodies.some((b) => b.includes("TASK_STATE_COMPLETED")), {
          timeout: 15_000,
        })
        .toBe(true);
      // Neither the receiver nor a client reading the task learns of the attempts.
      for (const body of hook.bodies) expect(body).not.toContain("pushAttempts");
      const read = await fetch(`${demo.baseUrl}/tasks/${task.id}`, {
        headers: { "A2A-Version": "1.0" },
      });
      expect(JSON.stringify(await read.json())).not.toContain("pushAttempts");

      const { page, errors } = await openInspector(demo);
      const row = page.locator(`#tasks tr[data-task="${task.id}"] button`);
      await expect.poll(() => row.count(), { timeout: 15_000 }).toBe(1);
      await row.click();
      const push = page.locator("#task .waterfall .step.push");
      await expect.poll(() => push.count(), { timeout: 15_000 }).toBeGreaterThan(0);
      const texts = await push.allTextContents();
      expect(texts.length).toBe(hook.bodies.length);
      for (const text of texts) expect(text).toMatch(/^push webhook hook-1.*\d+ ms · HTTP 200$/);
      const bar = await push
        .first()
        .evaluate(
          (node) => (node.querySelector(".bar") as HTMLElement).getBoundingClientRect().width,
        );
      expect(bar).toBeGreaterThan(0);
      await screenshot(page, "inspector-webhook-steps");
      expect(errors).toEqual([]);
    } finally {
      await hook.close();
    }
  });

  it("sends the API key named by the card's scheme on every request, never in a URL", async () => {
    const { page, errors } = await openInspector(guarded);
    // Without a credential the agent refuses the task list, and the page says what to do.
    await expect
      .poll(() => page.locator("#tasks-note").textContent(), { timeout: 15_000 })
      .toContain("enter a credential");
    expect(await page.locator("#auth-form").isVisible()).toBe(true);
    expect(await page.locator("#auth-scheme option").allTextContents()).toEqual([
      "API key (X-API-Key)",
    ]);

    const sent: { url: string; key: string | undefined }[] = [];
    page.on("request", (request) => {
      sent.push({ url: request.url(), key: request.headers()["x-api-key"] });
    });
    await page.getByLabel("Credential", { exact: true }).fill(API_KEY);
    await page.getByRole("button", { name: "Use" }).click();
    await expect
      .poll(() => page.locator("#tasks-note").textContent(), { timeout: 15_000 })
      .toBe("No tasks yet.");
    await page.getByLabel("Message", { exact: true }).fill("Ada");
    await page.getByLabel("Message", { exact: true }).press("Enter");
    await expect
      .poll(() => page.locator("#chat-log .bubble.agent").textContent(), { timeout: 15_000 })
      .toBe("Hello Ada");
    // The task panel's timeline is an SSE stream: it carried the key too.
    await expect
      .poll(() => page.locator("#task ol.timeline li").last().textContent(), { timeout: 15_000 })
      .toBe("completed");

    // The task's steps (the waterfall's delegations and webhook attempts) carry it too.
    const steps = sent.filter((r) => /\/inspector\/tasks\/[^/]+\/steps$/.test(r.url));
    expect(steps.length).toBeGreaterThan(0);
    for (const request of steps) expect(request.key, request.url).toBe(API_KEY);
    const api = sent.filter((r) => !r.url.includes("/inspector"));
    expect(api.map((r) => new URL(r.url).pathname)).toEqual(
      expect.arrayContaining(["/message:stream", "/tasks", expect.stringMatching(/:subscribe$/)]),
    );
    for (const request of api) expect(request.key, request.url).toBe(API_KEY);
    for (const request of sent) expect(request.url).not.toContain(API_KEY);
    // Kept for this tab only.
    const stored = await page.evaluate(() => ({
      session: JSON.stringify(sessionStorage),
      local: JSON.stringify(localStorage),
      cookie: document.cookie,
    }));
    expect(stored.session).toContain(API_KEY);
    expect(stored.local).not.toContain(API_KEY);
    expect(stored.cookie).toBe("");

    await screenshot(page, "inspector-auth");
    expect(errors).toEqual([]);
  });

  it("G13: shows a model's streamed thinking, its tool call and result, and its answer", async () => {
    provider.reply(
      "anthropic/thinking-then-tool-use.sse",
      "anthropic/after-thinking-tool-result-text.sse",
    );
    const { page, errors } = await openInspector(thinker);
    await page.getByLabel("Message", { exact: true }).fill("What version are you? Then a joke.");
    await page.getByLabel("Message", { exact: true }).press("Enter");
    await expect.poll(() => chatState(page), { timeout: 20_000 }).toBe("completed");

    expect(await page.locator("#chat-log .bubble.thinking").first().textContent()).toContain(
      "Let me first call the fixed_version tool",
    );
    expect(await rows(page, "#chat-log .bubble.tool")).toEqual([
      "tool call: fixed_version {}",
      'tool result: fixed_version → "0.32a0"',
    ]);
    expect(await page.locator("#chat-log .bubble.agent").last().textContent()).toContain(
      "The version is **0.32a0**.",
    );

    const timeline = page.locator("#task ol.timeline li");
    await expect.poll(() => timeline.last().textContent(), { timeout: 15_000 }).toBe("completed");
    const events = await timeline.allTextContents();
    expect(events).toContain("working tool call: fixed_version {}");
    expect(events).toContain('working tool result: fixed_version → "0.32a0"');
    expect(events.some((e) => e.startsWith("working thinking: "))).toBe(true);
    expect(events.some((e) => e.startsWith("response, chunk 2 "))).toBe(true);

    // The waterfall: both model calls and the tool call between them, as bars placed in time.
    const steps = page.locator("#task .waterfall .step");
    await expect.poll(() => steps.count(), { timeout: 15_000 }).toBe(3);
    const drawn = await steps.evaluateAll((nodes) =>
      nodes.map((node) => {
        const bar = (node.querySelector(".bar") as HTMLElement).getBoundingClientRect();
        const track = (node.querySelector(".track") as HTMLElement).getBoundingClientRect();
        return {
          kind: (node as HTMLElement).dataset.kind,
          text: `${node.querySelector(".what")?.textContent} | ${node.lastElementChild?.textContent}`,
          left: bar.left - track.left,
          width: bar.width,
          inside: bar.right <= track.right + 1,
        };
      }),
    );
    expect(drawn.map((s) => s.kind)).toEqual(["model", "tool", "model"]);
    expect(drawn[0]?.text).toMatch(/^model anthropic\/claude\S* \| \d+ ms · \d+ tokens/);
    expect(drawn[1]?.text).toMatch(/^tool fixed_version \| \d+ ms$/);
    for (const step of drawn) {
      expect(step.width, step.text).toBeGreaterThan(0);
      expect(step.inside, step.text).toBe(true);
    }
    // In order: the tool starts after the first call began, the second call after the tool.
    expect(drawn[1]?.left).toBeGreaterThanOrEqual(drawn[0]?.left ?? 0);
    expect(drawn[2]?.left).toBeGreaterThan(drawn[0]?.left ?? 0);
    // The history has the model's call and its result as their own items.
    await expect
      .poll(() => rows(page, "#history li"), { timeout: 15_000 })
      .toEqual(
        expect.arrayContaining([
          expect.stringMatching(/^tool call: fixed_version /),
          "tool result: fixed_version → 0.32a0",
        ]),
      );

    await expect
      .poll(() => page.locator("#tasks button").first().textContent(), { timeout: 15_000 })
      .toBe("What version are you? Then a joke.");
    await screenshot(page, "inspector-thinking");
    expect(errors).toEqual([]);
  });
});
