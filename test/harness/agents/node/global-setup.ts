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
    tracedBundle: string;
  }
}

/**
 * Starts the MCP server the `agents` project's workers reach over loopback, and bundles
 * the demo agent (examples/demo-agent.ts) as the second Worker that delegation tests
 * call through a service binding, and the traced agent (traced-worker.ts) as a third.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const mcp = await startMcpServer();
  project.provide("mcpUrl", mcp.url);
  project.provide("mcpDownUrl", await deadUrl());
  // Inside the project: workerd resolves module names relative to it.
  const outdir = resolve(import.meta.dirname, "../../../../node_modules/.cache/edgelink-demo");
  mkdirSync(outdir, { recursive: true });
  const bundle = async (entry: string, name: string) => {
    const outfile = join(outdir, name);
    await build({
      entryPoints: [resolve(import.meta.dirname, entry)],
      outfile,
      bundle: true,
      format: "esm",
      platform: "browser",
      conditions: ["workerd", "worker", "browser"],
      external: ["cloudflare:*", "node:*"],
      logLevel: "error",
    });
    return outfile;
  };
  project.provide(
    "demoBundle",
    await bundle("../../../../examples/demo-agent.ts", "demo-agent.mjs"),
  );
  project.provide("tracedBundle", await bundle("../traced-worker.ts", "traced-agent.mjs"));
  return () => mcp.close();
}
