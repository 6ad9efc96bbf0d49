/**
 * Debian's chromium for the browser tests, driven headless by playwright-core (no browser
 * download). Without it a test file skips, saying so loudly (see `hasBrowser`).
 */
import { existsSync } from "node:fs";
import { type Browser, type BrowserContext, chromium, type Page } from "playwright-core";
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

/** The one context of each browser its pages open in (see `openPage`). */
const contexts = new WeakMap<Browser, Promise<BrowserContext>>();

/**
 * A page of `browser`, closed when the test that opened it ends: a page left open keeps its
 * renderer working (its streams, its drawing) to the file's end. Pages share one context
 * (a context each doubled a page's CPU in chromium, about 1.9 CPU-s against 0.8); a fresh
 * tab still starts with its own sessionStorage, where the inspector keeps its credential.
 */
export async function openPage(
  browser: Browser,
  viewport: { width: number; height: number },
): Promise<Page> {
  let context = contexts.get(browser);
  if (!context) {
    context = browser.newContext();
    contexts.set(browser, context);
  }
  const page = await (await context).newPage();
  onTestFinished(() => page.close());
  await page.setViewportSize(viewport);
  return page;
}
