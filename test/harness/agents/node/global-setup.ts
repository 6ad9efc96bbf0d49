import { mkdirSync } from "node:fs";
import { join, resolve } from "node:path";
import { build } from "esbuild";
import type { TestProject } from "vitest/node";
import { deadUrl, startMcpServer } from "./mcp-server";

declare module "vitest" {
  export interface ProvidedContext {
    mcpUrl: string;
    mcpDownUrl: string;
    demoBundle: string;
  }
}

/**
 * Starts the MCP server the `agents` project's workers reach over loopback, and bundles
 * the demo agent (examples/demo-agent.ts) as the second Worker that delegation tests
 * call through a service binding.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const mcp = await startMcpServer();
  project.provide("mcpUrl", mcp.url);
  project.provide("mcpDownUrl", await deadUrl());
  // Inside the project: workerd resolves module names relative to it.
  const outdir = resolve(import.meta.dirname, "../../../../node_modules/.cache/edgelink-demo");
  mkdirSync(outdir, { recursive: true });
  const outfile = join(outdir, "demo-agent.mjs");
  await build({
    entryPoints: [resolve(import.meta.dirname, "../../../../examples/demo-agent.ts")],
    outfile,
    bundle: true,
    format: "esm",
    platform: "browser",
    conditions: ["workerd", "worker", "browser"],
    external: ["cloudflare:*", "node:*"],
    logLevel: "error",
  });
  project.provide("demoBundle", outfile);
  return () => mcp.close();
}
