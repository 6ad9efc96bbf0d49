import { defineConfig } from "tsup";

/**
 * The published package: ESM and bundled .d.ts for the four entry points, and the CLI. Dependencies
 * and peer dependencies stay imports (the user's bundler, wrangler, resolves them), and
 * `cloudflare:workers` is left to the Workers runtime.
 */
export default defineConfig({
  entry: {
    index: "src/index.ts",
    client: "src/client/index.ts",
    push: "src/push/receiver.ts",
    // MCP is opt-in: only Workers importing `edgelink/mcp` bundle the MCP SDK.
    mcp: "src/mcp/index.ts",
    // The `edgelink` command; bin/edgelink.mjs imports it (Node only, Web APIs plus a
    // dynamically imported node:http for `push listen`).
    cli: "src/cli/main.ts",
  },
  format: ["esm"],
  target: "es2023",
  platform: "neutral",
  dts: {
    entry: {
      index: "src/index.ts",
      client: "src/client/index.ts",
      push: "src/push/receiver.ts",
      mcp: "src/mcp/index.ts",
    },
  },
  clean: true,
  splitting: true,
  treeshake: true,
  // Minified, because every Worker built on Edgelink uploads it and parses it at each cold
  // start: 63 KiB less gzipped in the demo worker's bundle. Exported names are kept (they
  // are the API); the source maps (with the TypeScript sources) let wrangler map stack
  // traces back to them.
  minify: true,
  sourcemap: true,
  external: [/^cloudflare:/, /^node:/, "hono", /^hono\//, "zod", "eventsource-parser"],
  outDir: "dist",
});
