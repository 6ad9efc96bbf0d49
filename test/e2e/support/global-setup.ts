/**
 * The e2e project's global setup: a folder for this run's packed package (support/packed.ts
 * packs into it on the first file's request, so a run without those files packs nothing),
 * removed when the run ends.
 */
// @ts-nocheck -- Node-only support (the repository has no @types/node).
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TestProject } from "vitest/node";

declare module "vitest" {
  export interface ProvidedContext {
    packDir: string;
  }
}

export default function setup(project: TestProject): () => void {
  const dir = mkdtempSync(join(tmpdir(), "edgelink-pack-"));
  project.provide("packDir", dir);
  return () => rmSync(dir, { recursive: true, force: true });
}
