#!/usr/bin/env node
// The `edgelink` command: runs the built CLI (src/cli/main.ts bundled to dist/cli.js).
import("../dist/cli.js").catch((error) => {
  if (error?.code === "ERR_MODULE_NOT_FOUND" && String(error.message).includes("dist/cli.js")) {
    console.error("edgelink: the CLI is not built; run `npm run build` in the package first");
    process.exitCode = 1;
    return;
  }
  throw error;
});
