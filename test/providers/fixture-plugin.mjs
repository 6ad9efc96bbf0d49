import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative, resolve } from "node:path";

/**
 * Serves the recorded provider streams in `../shared/fixtures/providers` to tests inside
 * workerd (which has no file system) as `virtual:provider-fixtures`: a map from path
 * (`openai-chat/text-with-usage.sse`) to the file's bytes in base64, so the fake provider
 * replays them byte for byte. The files are read in place, never copied.
 * @param {string} [root]
 * @returns {import("vitest/config").Plugin}
 */
export function providerFixtures(
  root = process.env.EDGELINK_FIXTURES ??
    resolve(import.meta.dirname, "../../../shared/fixtures/providers"),
) {
  const id = "virtual:provider-fixtures";
  return {
    name: "edgelink-provider-fixtures",
    resolveId: (source) => (source === id ? `\0${id}` : undefined),
    load(resolved) {
      if (resolved !== `\0${id}`) return undefined;
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
      return `export default ${JSON.stringify(files)};`;
    },
  };
}
