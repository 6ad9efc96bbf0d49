/**
 * The declarations (.d.ts) of every source file under src/, built once into temp/dts for
 * their readers: the type check (scripts/typecheck.mjs checks examples and tests against
 * them), the API report (scripts/api-report.mjs) and the package build (tsup bundles the
 * entries' into dist/*.d.ts). Each used to compile the sources on its own, about 25 s of
 * CPU apiece. The build (tsconfig.src.json, by TypeScript 7's native `tsc -b`, see
 * ./native-tsc.mjs) is incremental (temp/dts/.tsbuildinfo): when the sources have not
 * changed since the last build, the next reader finds it up to date.
 * The readers may run at once (`.ci/run` runs the type check and the API report while the
 * test run packs the package): a lock lets one build while the others wait, then find the
 * build up to date.
 *
 *   node scripts/declarations.mjs   build them; fail on a type error in src/
 */
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { ENTRIES } from "./entries.mjs";
import { runTsc } from "./native-tsc.mjs";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");

/** Where the declarations go: src/<path>.ts becomes temp/dts/<path>.d.ts. */
export const DTS = join(ROOT, "temp", "dts");

/** The declaration file of a source file under src/. */
export const declarationOf = (source) =>
  join(DTS, relative(join(ROOT, "src"), join(ROOT, source))).replace(/\.ts$/, ".d.ts");

/** The project of src/ alone, whose declarations the other programs read. */
export const SRC_PROJECT = join(ROOT, "tsconfig.src.json");

/**
 * Builds (or brings up to date) the declarations of src/ in {@link DTS} with the native
 * compiler (`tsc -b`: with the sources unchanged since the last build it only compares
 * them with its build info). Answers the compiler's diagnostics, one line each (type errors
 * in the sources included); the declarations are written even with them, but are only
 * right without them.
 */
export function buildDeclarations() {
  const release = lock();
  try {
    return buildUnlocked();
  } finally {
    release();
  }
}

function build() {
  const { status, output } = runTsc(["-b", SRC_PROJECT]);
  const diagnostics = output ? output.split("\n") : [];
  if (status !== 0 && diagnostics.length === 0) diagnostics.push(`tsc exited with ${status}`);
  return { diagnostics };
}

function buildUnlocked() {
  let result = build();
  // The build info says what was emitted, not whether it is still there: rebuild in full
  // when an entry's declaration has gone (a cleaned temp/dts keeps no stale build info).
  if (!Object.values(ENTRIES).every((file) => existsSync(declarationOf(file)))) {
    rmSync(DTS, { recursive: true, force: true });
    result = build();
  }
  return result;
}

/** Where the lock is: a folder, created atomically by exactly one process. */
const LOCK = join(ROOT, "temp", "dts.lock");

/**
 * Waits (10 minutes at most) until this process holds the lock; answers its release. A lock
 * whose process has gone (killed mid-build) is taken over.
 */
function lock() {
  mkdirSync(dirname(LOCK), { recursive: true });
  const deadline = Date.now() + 600_000;
  const pause = new Int32Array(new SharedArrayBuffer(4));
  for (;;) {
    try {
      mkdirSync(LOCK);
      writeFileSync(join(LOCK, "pid"), String(process.pid));
      return () => rmSync(LOCK, { recursive: true, force: true });
    } catch (error) {
      if (error.code !== "EEXIST") throw error;
    }
    if (!holderAlive()) rmSync(LOCK, { recursive: true, force: true });
    else if (Date.now() > deadline) throw new Error(`declarations: ${LOCK} held for 10 minutes`);
    else Atomics.wait(pause, 0, 0, 200);
  }
}

function holderAlive() {
  let pid;
  try {
    pid = Number(readFileSync(join(LOCK, "pid"), "utf8"));
  } catch {
    // Created, its pid not yet written: the holder is starting.
    return true;
  }
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return error.code === "EPERM";
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const { diagnostics } = buildDeclarations();
  for (const d of diagnostics) console.error(`declarations: ${d}`);
  if (diagnostics.length > 0) process.exitCode = 1;
}
