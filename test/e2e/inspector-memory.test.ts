/**
 * The inspector's memory panel (K8) in a real browser: Debian's chromium, driven headless by
 * playwright-core as in inspector.test.ts, on a local Worker with memory and its routes on
 * behind API keys (test/e2e/support/memory-agent.ts). The panel lists the signed-in user's
 * memory, searches it, corrects a fact, deletes one and erases everything; each step is
 * checked on the page and in what the memory API then holds. Without chromium the test is
 * skipped with a loud message.
 */
import { mkdirSync } from "node:fs";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hasBrowser as hasBrowserFor, launchChromium, openPage } from "./support/chromium";
import { type DemoAgent, startWorker } from "./support/worker";

const hasBrowser = hasBrowserFor("the inspector's memory panel test");
const OUTPUT = decodeURIComponent(new URL("./output/", import.meta.url).pathname);
/** Two users: the one signed in to the page, and another whose memory it must not show. */
const USER_KEY = "memory-e2e-user-key-0123456789";
const OTHER_KEY = "memory-e2e-other-key-0123456789";

type Json = Record<string, unknown>;
interface Fact {
  id: string;
  claim: string;
  supersedes?: string;
  supersededBy?: string;
}

let agent: DemoAgent;
let browser: Browser;

beforeAll(async () => {
  if (!hasBrowser) return;
  agent = await startWorker("test/e2e/support/memory.wrangler.toml", {
    AGENT_API_KEYS: `${USER_KEY},${OTHER_KEY}`,
  });
  browser = await launchChromium();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await agent?.stop();
});

/** A memory route as the user with `key`: the status and the JSON body. */
async function memoryApi(
  key: string,
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; body: Json }> {
  const response = await fetch(`${agent.baseUrl}${path}`, {
    method,
    headers: { "X-API-Key": key, ...(body ? { "Content-Type": "application/json" } : {}) },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });
  const text = await response.text();
  return { status: response.status, body: text ? (JSON.parse(text) as Json) : {} };
}

/** The facts the user's memory holds (superseded ones too when asked). */
async function facts(key: string, includeSuperseded = false): Promise<Fact[]> {
  const query = includeSuperseded ? "&includeSuperseded=true" : "";
  const { status, body } = await memoryApi(key, "GET", `/memory?kind=fact${query}`);
  expect(status).toBe(200);
  return body.items as Fact[];
}

/** The panel's status line. */
const note = (page: Page) => page.locator("#memory-title ~ p[role=status]");
const shown = (page: Page) => page.locator("#memory-items tr td:first-child").allTextContents();
const sorted = (list: string[]) => [...list].sort();

describe.skipIf(!hasBrowser)("the inspector's memory panel in chromium", () => {
  it("K8 lists, searches, corrects, deletes an item and erases the signed-in user's memory", async () => {
    for (const claim of [
      "The user prefers window seats",
      "The user drinks oolong tea",
      "The user lives in Lyon",
    ]) {
      expect((await memoryApi(USER_KEY, "POST", "/memory/facts", { claim })).status).toBe(200);
    }
    await memoryApi(OTHER_KEY, "POST", "/memory/facts", { claim: "The other user owns a boat" });

    const page = await openPage(browser, { width: 1280, height: 1000 });
    const errors: string[] = [];
    page.on("pageerror", (error) => errors.push(error.message));
    await page.goto(`${agent.baseUrl}/inspector`);
    await expect
      .poll(() => page.locator("#agent-name").textContent(), { timeout: 15_000 })
      .not.toBe("");
    // Signed out, the panel says why it shows nothing.
    await expect.poll(() => note(page).textContent(), { timeout: 15_000 }).toMatch(/^Memory: /);
    await page.getByLabel("Credential", { exact: true }).fill(USER_KEY);
    await page.getByRole("button", { name: "Use" }).click();

    // List: the user's facts, not the other user's.
    await expect
      .poll(async () => sorted(await shown(page)), { timeout: 15_000 })
      .toEqual([
        "The user drinks oolong tea",
        "The user lives in Lyon",
        "The user prefers window seats",
      ]);

    // Search by words.
    await page.getByLabel("Search memory").fill("tea");
    await page.getByLabel("Search memory").press("Enter");
    await expect.poll(() => shown(page)).toEqual(["The user drinks oolong tea"]);
    await page.getByLabel("Search memory").fill("boat");
    await page.getByLabel("Search memory").press("Enter");
    await expect.poll(() => shown(page)).toEqual([]);
    expect(await note(page).textContent()).toBe("Nothing remembered matches.");

    // Correct a fact: the correction is listed, the old fact superseded and linked to it.
    await page.getByLabel("Search memory").fill("window");
    await page.getByLabel("Search memory").press("Enter");
    await expect.poll(() => shown(page)).toEqual(["The user prefers window seats"]);
    const window = (await facts(USER_KEY)).find((f) => f.claim.includes("window")) as Fact;
    page.once("dialog", (dialog) => {
      expect(dialog.type()).toBe("prompt");
      expect(dialog.defaultValue()).toBe("The user prefers window seats");
      void dialog.accept("The user prefers aisle seats");
    });
    await page.getByRole("button", { name: `Correct ${window.id}` }).click();
    await page.getByLabel("Search memory").fill("");
    await page.getByLabel("Search memory").press("Enter");
    await expect
      .poll(async () => sorted(await shown(page)))
      .toEqual([
        "The user drinks oolong tea",
        "The user lives in Lyon",
        "The user prefers aisle seats",
      ]);
    const live = await facts(USER_KEY);
    const aisle = live.find((f) => f.claim === "The user prefers aisle seats") as Fact;
    expect(live.map((f) => f.claim)).not.toContain("The user prefers window seats");
    expect(aisle.supersedes).toBe(window.id);
    const old = (await facts(USER_KEY, true)).find((f) => f.id === window.id);
    expect(old?.supersededBy).toBe(aisle.id);

    // Delete one item.
    const lyon = live.find((f) => f.claim === "The user lives in Lyon") as Fact;
    await page.getByRole("button", { name: `Delete ${lyon.id}` }).click();
    await expect
      .poll(async () => sorted(await shown(page)))
      .toEqual(["The user drinks oolong tea", "The user prefers aisle seats"]);
    expect((await memoryApi(USER_KEY, "GET", `/memory/fact/${lyon.id}`)).status).toBe(404);
    expect(sorted((await facts(USER_KEY)).map((f) => f.claim))).toEqual([
      "The user drinks oolong tea",
      "The user prefers aisle seats",
    ]);
    await mkdirSync(OUTPUT, { recursive: true });
    await page.screenshot({ path: `${OUTPUT}inspector-memory.png`, fullPage: true });

    // Erase everything, after a confirmation: nothing is listed or recalled, and the other
    // user's memory is untouched.
    page.once("dialog", (dialog) => {
      expect(dialog.type()).toBe("confirm");
      void dialog.accept();
    });
    await page.getByRole("button", { name: "Erase all" }).click();
    await expect.poll(() => shown(page)).toEqual([]);
    await expect.poll(() => note(page).textContent()).toBe("Nothing remembered.");
    expect(await facts(USER_KEY, true)).toEqual([]);
    const recalled = await memoryApi(USER_KEY, "POST", "/memory/search", {
      text: "seats tea Lyon",
    });
    expect(recalled.body.facts).toEqual([]);
    expect((await facts(OTHER_KEY)).map((f) => f.claim)).toEqual(["The other user owns a boat"]);
    expect(errors).toEqual([]);
  });
});
