/**
 * Debian's chromium for the browser tests, driven headless by playwright-core (no browser
 * download). Without it a test file skips, saying so loudly (see `hasBrowser`).
 */
import { existsSync } from "node:fs";
import { type Browser, chromium, type Page } from "playwright-core";
import { onTestFinished } from "vitest";

declare const process: { env: Record<string, string | undefined> };

export const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";

/** Whether chromium is there; warns once per file that asks when it is not. */
export function hasBrowser(what: string): boolean {
  if (existsSync(CHROMIUM)) return true;
  console.warn(
    `\n!!! SKIPPING ${what}: no chromium at ${CHROMIUM}.\n!!! Install it (apt-get install -y chromium) or set CHROMIUM_PATH.\n`,
  );
  return false;
}

/** A headless chromium, quiet: no background networking, updates or first-run pages. */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
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
}

/** Each browser's one page (see `openPage`). */
const pages = new WeakMap<Browser, Promise<Page>>();

/**
 * The page of `browser` for the running test, at `viewport`. One tab serves the file's
 * tests one after another: a new tab is a new renderer process, about 2 CPU-s of chromium
 * each (the inspector file's chromium took 28.5 CPU-s with a tab per test, 10 to 12 with
 * one). When the test ends the tab forgets it: its listeners are removed, the origin's
 * sessionStorage (where the inspector keeps a credential) is cleared, and it goes to
 * about:blank, which ends the page's streams. A function given to `exposeFunction` stays:
 * a file exposes a name once.
 */
export async function openPage(
  browser: Browser,
  viewport: { width: number; height: number },
): Promise<Page> {
  let opened = pages.get(browser);
  if (!opened) {
    opened = browser.newPage();
    pages.set(browser, opened);
  }
  const page = await opened;
  onTestFinished(async () => {
    await page.removeAllListeners();
    await page.evaluate(() => sessionStorage.clear()).catch(() => {});
    await page.goto("about:blank");
  });
  await page.setViewportSize(viewport);
  return page;
}
