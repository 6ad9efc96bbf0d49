import { pathToFileURL } from "node:url";

/** A bounded number from the environment, or the fallback; anything else stops the run. */
export function envNumber(name, fallback, min, max, { integer = false } = {}) {
  const raw = process.env[name];
  if (raw === undefined || raw === "") return fallback;
  const n = Number(raw);
  if (!(integer ? Number.isInteger(n) : Number.isFinite(n)) || n < min || n > max) {
    throw new Error(
      `${name} must be ${integer ? "an integer" : "a number"} between ${min} and ${max}, got ${raw}`,
    );
  }
  return n;
}

/**
 * Runs a benchmark section when its file is run directly (`node bench/x.mjs`): exit code 1
 * when a target is missed or it throws, `cleanup` on the way out and on Ctrl-C.
 * @param {string} moduleUrl the section's `import.meta.url`
 * @param {string} name
 * @param {() => Promise<boolean>} run
 * @param {() => void} cleanup
 */
export async function runIfMain(moduleUrl, name, run, cleanup) {
  if (moduleUrl !== pathToFileURL(process.argv[1] ?? "").href) return;
  const stop = () => {
    cleanup();
    process.exit(130);
  };
  process.on("SIGINT", stop);
  process.on("SIGTERM", stop);
  try {
    if (!(await run())) process.exitCode = 1;
  } catch (error) {
    console.error(`\n${name} benchmark failed:`, error);
    process.exitCode = 1;
  } finally {
    cleanup();
  }
}
