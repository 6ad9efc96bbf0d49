/**
 * TypeScript 7's native compiler (`tsc`, the Go port), installed beside TypeScript 6 as the
 * devDependency `typescript7` (an npm alias of `typescript@7`). It does every type check
 * here, several times faster than TypeScript 6; TypeScript 6 stays for what needs its
 * JavaScript API, which 7 does not ship: the API report's walk over the declarations and
 * tsup's bundling of them. Both packages name their command `tsc`, so node_modules/.bin/tsc
 * is whichever npm linked last: this one is called by its path.
 *
 *   import { TSC, runTsc } from "./native-tsc.mjs";
 */
import { spawnSync } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");

/** The native compiler's command (a Node launcher of the platform's binary). */
export const TSC = join(ROOT, "node_modules", "typescript7", "bin", "tsc");

/**
 * Runs the native `tsc` with `args` (`-b` must come first, as tsc wants it) in `cwd` (the repository by default), without colours,
 * so each diagnostic is one `file(line,col): error TSnnnn: message` line.
 * Answers its exit code and output; throws when the compiler could not be started.
 */
export function runTsc(args, cwd = ROOT) {
  const result = spawnSync(process.execPath, [TSC, ...args, "--pretty", "false"], {
    cwd,
    encoding: "utf8",
    maxBuffer: 64 * 1024 * 1024,
  });
  if (result.error) throw new Error(`tsc: ${result.error.message}`);
  return { status: result.status ?? 1, output: `${result.stdout}${result.stderr}`.trim() };
}
