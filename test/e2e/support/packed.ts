/**
 * The package packed once per test run (`npm pack`, whose `prepack` builds dist/), shared by
 * the files that install it (through ./installed.ts). A build costs 15 to 30 s of CPU (less
 * when `npm run api` has just built the declarations in temp/dts): once is enough.
 */
// @ts-nocheck -- Node-only support (the repository has no @types/node).
import { execFile } from "node:child_process";
import { join } from "node:path";
import { oncePerRun, runDir } from "./run-once";

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
export function packedTarball(): Promise<string> {
  return oncePerRun("tarball", () => npmPack(runDir()), 10);
}
