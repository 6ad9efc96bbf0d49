/**
 * Bundles an entry point of src/ for plain Node with esbuild (platform "neutral": no Node
 * built-ins, no `cloudflare:*` modules can be resolved, so a stray import fails the
 * build), into a temporary directory.
 */
// @ts-nocheck -- Node-only support (the repository has no @types/node).
import { existsSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { build } from "esbuild";

const ROOT = decodeURIComponent(new URL("../../../", import.meta.url).pathname);

/** Bundles `entries` (name → path from the repo root); answers the output directory. */
export async function bundle(
  entries: Record<string, string>,
  options: { platform?: "neutral" | "node"; banner?: string } = {},
): Promise<string> {
  const outdir = mkdtempSync(join(tmpdir(), "edgelink-bundle-"));
  await build({
    entryPoints: Object.fromEntries(Object.entries(entries).map(([k, v]) => [k, join(ROOT, v)])),
    outdir,
    bundle: true,
    format: "esm",
    platform: options.platform ?? "neutral",
    mainFields: ["module", "main"],
    outExtension: { ".js": ".mjs" },
    target: "node20",
    logLevel: "silent",
    ...(options.banner ? { banner: { js: options.banner } } : {}),
  });
  return outdir;
}

/** The Node executables to try: the one running the tests and the system's, if different. */
export function nodeBinaries(): string[] {
  return [...new Set([process.execPath, "/usr/bin/node"].filter((p) => existsSync(p)))];
}
