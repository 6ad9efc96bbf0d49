import type { TestProject } from "vitest/node";
import { deadUrl, startMcpServer } from "./mcp-server";

declare module "vitest" {
  export interface ProvidedContext {
    mcpUrl: string;
    mcpDownUrl: string;
  }
}

/** Starts the MCP server the `agents` project's workers reach over loopback. */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const mcp = await startMcpServer();
  project.provide("mcpUrl", mcp.url);
  project.provide("mcpDownUrl", await deadUrl());
  return () => mcp.close();
}
