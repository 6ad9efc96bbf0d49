/**
 * The package packed once per test run (`npm pack`, whose `prepack` builds dist/), shared by
 * the files that install it (package.test.ts, init.test.ts). The e2e files run in several
 * worker processes at once; the project's global setup (global-setup.ts) hands each the
 * same folder, where the first caller packs and the others wait for the tarball. A build
 * costs 15 to 30 s of CPU (less when `npm run api` has just built the declarations in
 * temp/dts): once is enough.
 */
// @ts-nocheck -- Node-only support (the repository has no @types/node).
import { execFile } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { inject } from "vitest";

const REPO = decodeURIComponent(new URL("../../../", import.meta.url).pathname).replace(/\/$/, "");

function npmPack(destination: string): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(
      "npm",
      ["pack", "--silent", "--pack-destination", destination],
      { cwd: REPO, maxBuffer: 64 * 1024 * 1024 },
      (error, stdout, stderr) => {
        if (error) reject(new Error(`npm pack failed: ${stderr || error.message}`));
        // `npm pack` names the tarball on its last line.
        else resolve(join(destination, stdout.trim().split("\n").at(-1) ?? ""));
      },
    );
  });
}

/** The path of this run's tarball, packing it if no other file has. */
export async function packedTarball(): Promise<string> {
  const dir = inject("packDir");
  const done = join(dir, "tarball");
  const failed = join(dir, "failed");
  let mine = false;
  try {
    mkdirSync(join(dir, "packing")); // atomic: exactly one caller creates it, and packs
    mine = true;
  } catch {
    // another file packs; wait below
  }
  if (mine) {
    try {
      // Written aside and renamed: a waiting caller never reads a half-written path.
      writeFileSync(`${done}.tmp`, await npmPack(dir));
      renameSync(`${done}.tmp`, done);
    } catch (error) {
      writeFileSync(failed, String(error));
      throw error;
    }
  }
  const deadline = Date.now() + 600_000;
  while (Date.now() < deadline) {
    if (existsSync(done)) return readFileSync(done, "utf8");
    if (existsSync(failed)) throw new Error(readFileSync(failed, "utf8"));
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`no tarball in ${dir} after 10 minutes`);
}
