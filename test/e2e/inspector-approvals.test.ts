/**
 * Issue 34: deciding held calls from the inspector, in a real browser (Debian's chromium
 * driven by playwright-core). The agent's tool needs approval; its model is a fake at the
 * HTTP wire replaying a recorded OpenAI turn that calls the tool, then one that answers.
 * Screenshots go to test/e2e/output/; without chromium the file skips, saying so.
 */
import { mkdirSync } from "node:fs";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hasBrowser as hasBrowserFor, launchChromium, openPage } from "./support/chromium";
import { type FakeProviderServer, startFakeProvider } from "./support/fake-provider-server";
import { type DemoAgent, startWorker } from "./support/worker";

const hasBrowser = hasBrowserFor("the inspector approvals browser test");
const OUTPUT = decodeURIComponent(new URL("./output/", import.meta.url).pathname);

let agent: DemoAgent;
let provider: FakeProviderServer;
let browser: Browser;

beforeAll(async () => {
  if (!hasBrowser) return;
  provider = await startFakeProvider();
  agent = await startWorker("test/e2e/support/approval.wrangler.toml", {
    OPENAI_API_KEY: "sk-e2e",
    OPENAI_BASE_URL: `${provider.origin}/v1`,
  });
  browser = await launchChromium();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await agent?.stop();
  await provider?.close();
});

/** A page on the agent's inspector whose chat asked for a capital: its task now waits. */
async function askForCapital(): Promise<{ page: Page; errors: string[]; taskId: string }> {
  const page = await openPage(browser, { width: 1280, height: 1000 });
  const errors: string[] = [];
  page.on("pageerror", (error) => errors.push(error.message));
  await page.goto(`${agent.baseUrl}/inspector`);
  await expect
    .poll(() => page.locator("#agent-name").textContent(), { timeout: 15_000 })
    .not.toBe("");
  provider.reply("openai-chat/tool-call-split-args.sse");
  await page.getByLabel("Message", { exact: true }).fill("What is the capital of the UK?");
  await page.getByLabel("Message", { exact: true }).press("Enter");
  await expect
    .poll(() => page.locator("#chat-status .state").textContent(), { timeout: 20_000 })
    .toBe("input required");
  await expect.poll(() => page.locator("#task .held").count(), { timeout: 15_000 }).toBe(1);
  const taskId = (await page.locator("#task code").first().textContent()) ?? "";
  return { page, errors, taskId };
}

/** The task as the agent has it (not as the page shows it). */
async function stateOf(taskId: string): Promise<string> {
  const response = await fetch(`${agent.baseUrl}/tasks/${taskId}?historyLength=0`, {
    headers: { "A2A-Version": "1.0" },
  });
  return ((await response.json()) as { status: { state: string } }).status.state;
}

/** What the model was sent on its last call: the tool's results are in it. */
const lastModelRequest = () => JSON.stringify(provider.requests.at(-1)?.body ?? {});

async function screenshot(page: Page, name: string): Promise<void> {
  mkdirSync(OUTPUT, { recursive: true });
  await page.screenshot({ path: `${OUTPUT}${name}.png`, fullPage: true });
}

describe.skipIf(!hasBrowser)("held calls in the inspector, in chromium (issue 34)", () => {
  it("K1: shows the held call; bad edits are refused and the task waits; approve runs it once", async () => {
    const { page, errors, taskId } = await askForCapital();
    const held = page.locator("#task .held");
    const text = (await held.textContent()) ?? "";
    expect(text).toContain("get_capital");
    expect(text).toContain("Looking up capitals needs approval");
    expect(text).toMatch(/Deadline: .+\(\d{4}-\d\d-\d\dT/);
    expect(text).not.toContain("relayed");
    expect(JSON.parse((await held.locator("pre").textContent()) ?? "")).toEqual({ country: "UK" });
    await screenshot(page, "inspector-held-call");

    // Not a JSON object: refused in the page, nothing sent.
    const asked = provider.requests.length;
    const sent: string[] = [];
    page.on("request", (r) => r.method() === "POST" && sent.push(new URL(r.url()).pathname));
    await held.getByText("Approve with edited arguments").click();
    const editor = held.getByLabel("Edited arguments (a JSON object)");
    await editor.fill('["UK"]');
    await held.getByRole("button", { name: "Approve edited" }).click();
    await expect
      .poll(() => held.locator(".error").textContent())
      .toBe("Edited arguments must be a JSON object.");
    await editor.fill("{ country: UK }");
    await held.getByRole("button", { name: "Approve edited" }).click();
    await expect.poll(() => held.locator(".error").textContent()).toMatch(/^Edited arguments: /);
    expect(sent).toEqual([]);

    // An object the tool's schema refuses: the server's error, naming the field, is shown.
    await editor.fill('{"country": 5}');
    await held.getByRole("button", { name: "Approve edited" }).click();
    const note = page.locator("#task .held-note");
    await expect.poll(() => note.textContent(), { timeout: 15_000 }).toMatch(/^Refused: /);
    expect(await note.textContent()).toContain("message.parts[0].data.arguments.country");
    expect(sent).toEqual(["/message:send"]);
    expect(await stateOf(taskId)).toBe("TASK_STATE_INPUT_REQUIRED");
    expect(provider.requests.length).toBe(asked);
    // The controls work again after a refusal.
    expect(await held.getByRole("button", { name: "Approve", exact: true }).isEnabled()).toBe(true);
    await screenshot(page, "inspector-held-refused");

    // Approve: the tool runs once, the model gets its result, the task completes.
    provider.reply("openai-chat/after-tool-result-text.sse");
    await held.getByRole("button", { name: "Approve", exact: true }).click();
    await expect
      .poll(() => page.locator("#task .state").first().textContent(), { timeout: 20_000 })
      .toBe("completed");
    expect(await stateOf(taskId)).toBe("TASK_STATE_COMPLETED");
    expect(await page.locator("#task .held").count()).toBe(0);
    expect(provider.requests.length).toBe(asked + 1);
    const told = lastModelRequest();
    expect(told.match(/London \(run \d+\)/g)).toHaveLength(1);
    // Each test's agent has run the tool once by now: only this approval ran it.
    expect(told).toContain("London (run 1)");
    await screenshot(page, "inspector-held-approved");
    expect(errors).toEqual([]);
  });

  it("K1: rejecting with a reason tells the model, and the tool does not run", async () => {
    const { page, errors, taskId } = await askForCapital();
    const held = page.locator("#task .held");
    provider.reply("openai-chat/after-tool-result-text.sse");
    await held.getByLabel("Reason for rejecting").fill("Not <b>today</b>");
    await held.getByRole("button", { name: "Reject" }).click();
    await expect
      .poll(() => page.locator("#task .state").first().textContent(), { timeout: 20_000 })
      .toBe("completed");
    expect(await stateOf(taskId)).toBe("TASK_STATE_COMPLETED");
    const told = lastModelRequest();
    expect(told).toContain("Rejected by the user: Not <b>today</b>");
    expect(told).not.toMatch(/London \(run/);
    expect(errors).toEqual([]);
  });
});

describe.skipIf(!hasBrowser)("questions in the inspector, in chromium (issue 34)", () => {
  it("K1: a question's choices are buttons, a question without them gets an answer box", async () => {
    const asker = await startWorker("test/e2e/support/question.wrangler.toml");
    try {
      const page = await openPage(browser, { width: 1280, height: 1000 });
      const errors: string[] = [];
      page.on("pageerror", (error) => errors.push(error.message));
      await page.goto(`${asker.baseUrl}/inspector`);
      await expect
        .poll(() => page.locator("#agent-name").textContent(), { timeout: 15_000 })
        .not.toBe("");
      await page.getByLabel("Message", { exact: true }).fill("Order a shirt");
      await page.getByLabel("Message", { exact: true }).press("Enter");
      const held = page.locator("#task .held");
      await expect.poll(() => held.count(), { timeout: 20_000 }).toBe(1);
      expect(await held.textContent()).toContain("Which size?");
      expect(await held.locator(".choices button").allTextContents()).toEqual(["S", "M", "L"]);
      await screenshot(page, "inspector-question");

      // A choice answers; the handler asks its next question, which the panel shows.
      await held.getByRole("button", { name: "M", exact: true }).click();
      await expect
        .poll(() => held.textContent(), { timeout: 20_000 })
        .toContain("Any note for the order?");
      expect(await held.locator(".choices").count()).toBe(0);
      await held.getByRole("button", { name: "Answer" }).click();
      expect(await held.locator(".error").textContent()).toBe("Type an answer first.");
      await held.getByLabel("Answer", { exact: true }).fill("gift wrap");
      await held.getByRole("button", { name: "Answer" }).click();
      await expect
        .poll(() => page.locator("#task .state").first().textContent(), { timeout: 20_000 })
        .toBe("completed");
      const id = (await page.locator("#task code").first().textContent()) ?? "";
      const task = await fetch(`${asker.baseUrl}/tasks/${id}`, {
        headers: { "A2A-Version": "1.0" },
      });
      expect(JSON.stringify(await task.json())).toContain("Size M, note: gift wrap");
      expect(errors).toEqual([]);
    } finally {
      await asker.stop();
    }
  });
});
