/**
 * Something made once per test run and shared by the e2e files that need it (the packed
 * tarball, the project `edgelink init` makes and installs). The files run in several worker
 * processes at once; the e2e global setup (global-setup.ts) hands each the same fresh folder
 * for this run, removed when the run ends, so a second run never finds the first one's.
 * The first caller makes it under a lock (a folder only one process can create), the
 * others wait for its result, or its error.
 */
// @ts-nocheck -- Node-only support (the repository has no @types/node).
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { inject } from "vitest";

/** This run's folder for the things made once (fresh per run, removed after it). */
export function runDir(): string {
  return inject("runDir");
}

/**
 * The value `make` returns, made by the first caller of this run with this `name`; every
 * other caller waits for it (up to `waitMinutes`) and gets the same value, read back as
 * JSON. A failure is every caller's: they throw the maker's error.
 */
export async function oncePerRun<T>(
  name: string,
  make: () => Promise<T>,
  waitMinutes = 15,
): Promise<T> {
  const dir = runDir();
  const done = join(dir, `${name}.json`);
  const failed = join(dir, `${name}.failed`);
  let mine = false;
  try {
    mkdirSync(join(dir, `${name}.making`)); // atomic: exactly one caller creates it
    mine = true;
  } catch {
    // another file makes it; wait below
  }
  if (mine) {
    try {
      const value = await make();
      // Written aside and renamed: a waiting caller never reads a half-written file.
      writeFileSync(`${done}.tmp`, JSON.stringify(value));
      renameSync(`${done}.tmp`, done);
      return value;
    } catch (error) {
      writeFileSync(failed, String(error?.stack ?? error));
      throw error;
    }
  }
  const deadline = Date.now() + waitMinutes * 60_000;
  while (Date.now() < deadline) {
    if (existsSync(done)) return JSON.parse(readFileSync(done, "utf8"));
    if (existsSync(failed)) throw new Error(`${name}: ${readFileSync(failed, "utf8")}`);
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`${name}: not made in ${dir} after ${waitMinutes} minutes`);
}
