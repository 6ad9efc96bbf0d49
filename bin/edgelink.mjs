#!/usr/bin/env node
// The `edgelink` command: runs the built CLI (src/cli/main.ts bundled to dist/cli.js).
// In a clone of the repository before `npm run build`, dist/ is absent: then it bundles the
// TypeScript source with esbuild (a dev dependency there) into node_modules/.cache and runs
// that, so `npx edgelink ...` works in a fresh clone as the README shows.
import { existsSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const built = join(root, "dist", "cli.js");
const source = join(root, "src", "cli", "main.ts");

async function fromSource() {
  let esbuild;
  try {
    esbuild = await import("esbuild");
  } catch {
    return null;
  }
  // One file per process: two commands started at once never read each other's half-written
  // file. It is removed once imported.
  const outfile = join(root, "node_modules", ".cache", "edgelink", `cli-${process.pid}.mjs`);
  await esbuild.build({
    entryPoints: [source],
    outfile,
    bundle: true,
    format: "esm",
    platform: "node",
    target: "node20",
    // Dependencies are imported from node_modules as the built CLI imports them.
    packages: "external",
    logLevel: "error",
  });
  return pathToFileURL(outfile).href;
}

if (existsSync(built)) {
  await import(pathToFileURL(built).href);
} else {
  const bundled = existsSync(source) ? await fromSource() : null;
  if (bundled === null) {
    console.error(
      "edgelink: the CLI is not built, and esbuild is not installed to run it from src/: run `npm install` (or `npm run build`) in the package first",
    );
    process.exitCode = 1;
  } else {
    try {
      await import(bundled);
    } finally {
      rmSync(fileURLToPath(bundled), { force: true });
    }
  }
}
