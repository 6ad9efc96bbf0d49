/**
 * The e2e project's global setup: a fresh folder for what this run makes once (./run-once.ts:
 * the packed package, the installed `edgelink init` project), made on the first file's
 * request, so a run without those files makes nothing. Removed when the run ends.
 */
// @ts-nocheck -- Node-only support (the repository has no @types/node).
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TestProject } from "vitest/node";

declare module "vitest" {
  export interface ProvidedContext {
    runDir: string;
  }
}

export default function setup(project: TestProject): () => void {
  const dir = mkdtempSync(join(tmpdir(), "edgelink-run-"));
  project.provide("runDir", dir);
  return () => rmSync(dir, { recursive: true, force: true });
}
