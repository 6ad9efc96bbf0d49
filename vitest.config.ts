import { cloudflareTest } from "@cloudflare/vitest-plugin";
import { defineConfig } from "vitest/config";
import { providerFixtures } from "./test/providers/fixture-plugin.mjs";

export default defineConfig({
  test: {
    projects: [
      {
        plugins: [
          cloudflareTest({ wrangler: { configPath: "./wrangler.toml" } }),
          providerFixtures(),
        ],
        test: {
          name: "workers",
          include: ["test/**/*.test.ts"],
          exclude: ["test/e2e/**", "test/llm/**"],
        },
      },
      {
        plugins: [
          cloudflareTest({ wrangler: { configPath: "./test/llm/wrangler.toml" } }),
          providerFixtures(),
        ],
        test: { name: "llm", include: ["test/llm/**/*.test.ts"] },
      },
      {
        test: {
          name: "e2e",
          include: ["test/e2e/**/*.test.ts"],
          environment: "node",
          testTimeout: 60_000,
          hookTimeout: 120_000,
        },
      },
    ],
  },
});
