/**
 * Debian's chromium for the browser tests, driven headless by playwright-core (no browser
 * download). Without it a test file skips, saying so loudly (see `hasBrowser`).
 */
import { existsSync } from "node:fs";
import { type Browser, chromium } from "playwright-core";

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
