import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative, resolve } from "node:path";

/** Where the recorded provider streams live (origins and licences in SOURCES.md there). */
export const FIXTURES_ROOT = resolve(import.meta.dirname, "../fixtures/providers");

/**
 * Serves the recorded provider streams in `test/fixtures/providers` to tests inside
 * workerd (which has no file system) as `virtual:provider-fixtures`: a map from path
 * (`openai-chat/text-with-usage.sse`) to the file's bytes in base64, so the fake provider
 * replays them byte for byte.
 * @param {string} [root]
 * @returns {import("vitest/config").Plugin}
 */
export function providerFixtures(root = FIXTURES_ROOT) {
  const id = "virtual:provider-fixtures";
  return {
    name: "edgelink-provider-fixtures",
    resolveId: (source) => (source === id ? `\0${id}` : undefined),
    load(resolved) {
      if (resolved !== `\0${id}`) return undefined;
      if (!existsSync(root)) {
        throw new Error(`edgelink: the provider fixtures are missing (no folder ${root})`);
      }
      /** @type {Record<string, string>} */
      const files = {};
      const walk = (/** @type {string} */ dir) => {
        for (const name of readdirSync(dir)) {
          const path = join(dir, name);
          if (statSync(path).isDirectory()) walk(path);
          else files[relative(root, path)] = readFileSync(path).toString("base64");
        }
      };
      walk(root);
      // No source map: a map of this one line of data would repeat the megabyte it maps.
      return { code: `export default ${JSON.stringify(files)};`, map: { mappings: "" } };
    },
  };
}
