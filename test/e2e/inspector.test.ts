/**
 * Issue 13: the inspector page in a real browser. Debian's chromium, driven headless by
 * playwright-core (no browser download), loads /inspector from the demo worker, sends a
 * message, sees the answer stream in and the task completed, and saves a screenshot to
 * test/e2e/output/inspector.png. `.ci/run` installs chromium; where it is missing this
 * test is skipped with a loud message, never silently.
 */
import { existsSync, mkdirSync } from "node:fs";
import { type Browser, chromium } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type DemoAgent, startDemoAgent } from "./support/worker";

declare const process: { env: Record<string, string | undefined> };

const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
const hasBrowser = existsSync(CHROMIUM);
if (!hasBrowser) {
  console.warn(
    `\n!!! SKIPPING the inspector browser test: no chromium at ${CHROMIUM}.\n!!! Install it (apt-get install -y chromium) or set CHROMIUM_PATH.\n`,
  );
}
const OUTPUT = decodeURIComponent(new URL("./output/", import.meta.url).pathname);

let agent: DemoAgent;
let browser: Browser;

beforeAll(async () => {
  if (!hasBrowser) return;
  agent = await startDemoAgent(20);
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-background-networking",
      "--disable-component-update",
      "--no-first-run",
      "--disable-sync",
    ],
  });
});

afterAll(async () => {
  await browser?.close();
  await agent?.stop();
});

describe.skipIf(!hasBrowser)("the inspector in chromium (issue 13)", () => {
  it("loads the card, streams an answer, shows the task completed with its timeline", async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    const errors: string[] = [];
    page.on("pageerror", (error) => errors.push(error.message));
    await page.goto(`${agent.baseUrl}/inspector`);
    await expect.poll(() => page.locator("#agent-name").textContent()).not.toBe("");

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
    await expect
      .poll(() => page.locator("#chat-status .state").textContent(), { timeout: 15_000 })
      .toBe("completed");

    // The task list and the task panel show it completed, with its events in order.
    await expect
      .poll(() => page.locator("#tasks .state").first().textContent(), { timeout: 15_000 })
      .toBe("completed");
    const timeline = page.locator("#task ol.timeline li");
    await expect.poll(() => timeline.count(), { timeout: 15_000 }).toBeGreaterThan(3);
    expect(await timeline.first().textContent()).toContain("TASK_STATE_WORKING");
    expect(await timeline.last().textContent()).toContain("TASK_STATE_COMPLETED");
    await expect
      .poll(() => page.locator("#history li").count(), { timeout: 15_000 })
      .toBeGreaterThan(0);

    mkdirSync(OUTPUT, { recursive: true });
    await page.screenshot({ path: `${OUTPUT}inspector.png`, fullPage: true });
    expect(errors).toEqual([]);
  });
});
