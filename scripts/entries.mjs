/**
 * The package's public entry points, as package.json `exports` names them, and the source
 * each is built from: one list for the API report (scripts/api-report.mjs) and the docs
 * test, which maps documentation imports to the sources.
 */
export const ENTRIES = {
  edgelink: "src/index.ts",
  "edgelink/providers": "src/providers/index.ts",
  "edgelink/history": "src/history/index.ts",
  "edgelink/testing": "src/testing/index.ts",
  "edgelink/client": "src/client/index.ts",
  "edgelink/push": "src/push/receiver.ts",
  "edgelink/mcp": "src/mcp/index.ts",
  "edgelink/memory": "src/memory/index.ts",
  "edgelink/registry": "src/registry/index.ts",
};
