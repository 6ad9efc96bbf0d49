/**
 * The declarations (.d.ts) of the package's entry points, built once into temp/dts for both
 * of their readers: the API report (scripts/api-report.mjs) and the package build (tsup
 * bundles them into dist/*.d.ts). Each used to compile the sources on its own, about 25 s
 * of CPU apiece. The build is incremental (temp/dts/.tsbuildinfo): when the sources have
 * not changed since the last build, the second reader only re-reads them. The readers may run
 * at once (`.ci/run` checks the API report while the test run packs the package): a lock
 * lets one build while the other waits, then finds the build up to date.
 *
 *   node scripts/declarations.mjs   build them; fail on a type error in the entries' sources
 */
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { ENTRIES } from "./entries.mjs";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");

/** Where the declarations go: src/<path>.ts becomes temp/dts/<path>.d.ts. */
export const DTS = join(ROOT, "temp", "dts");

/** The declaration file of a source file under src/. */
export const declarationOf = (source) =>
  join(DTS, relative(join(ROOT, "src"), join(ROOT, source))).replace(/\.ts$/, ".d.ts");

function createProgram() {
  const configFile = ts.readConfigFile(join(ROOT, "tsconfig.json"), ts.sys.readFile);
  const parsed = ts.parseJsonConfigFileContent(configFile.config, ts.sys, ROOT);
  const options = {
    ...parsed.options,
    noEmit: false,
    declaration: true,
    emitDeclarationOnly: true,
    declarationMap: false,
    incremental: true,
    tsBuildInfoFile: join(DTS, ".tsbuildinfo"),
    outDir: DTS,
    rootDir: join(ROOT, "src"),
  };
  return ts.createIncrementalProgram({
    rootNames: Object.values(ENTRIES).map((file) => join(ROOT, file)),
    options,
    host: ts.createIncrementalCompilerHost(options),
  });
}

/**
 * Builds (or brings up to date) the entries' declarations in {@link DTS}.
 * Returns the program, for readers that inspect the entries' exports, and every diagnostic
 * (type errors in the sources included); the declarations are only complete without them.
 */
export function buildDeclarations() {
  const release = lock();
  try {
    return buildUnlocked();
  } finally {
    release();
  }
}

function buildUnlocked() {
  let build = checkAndEmit(createProgram());
  // The build info says what was emitted, not whether it is still there: rebuild in full
  // when an entry's declaration has gone (a cleaned temp/dts keeps no stale build info).
  if (!Object.values(ENTRIES).every((file) => existsSync(declarationOf(file)))) {
    rmSync(DTS, { recursive: true, force: true });
    build = checkAndEmit(createProgram());
  }
  return build;
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

function checkAndEmit(builder) {
  // Checked before the emit, which writes the build info: so it records the files as
  // checked, and the next build with the same sources checks nothing again.
  const diagnostics = [
    ...builder.getConfigFileParsingDiagnostics(),
    ...builder.getOptionsDiagnostics(),
    ...builder.getGlobalDiagnostics(),
    ...builder.getSyntacticDiagnostics(),
    ...builder.getSemanticDiagnostics(),
  ];
  diagnostics.push(...builder.emit().diagnostics);
  return { program: builder.getProgram(), diagnostics };
}

/** A diagnostic as tsc prints it, with paths relative to the repository. */
export function formatDiagnostic(diagnostic) {
  return ts
    .formatDiagnostic(diagnostic, {
      getCanonicalFileName: (f) => f,
      getCurrentDirectory: () => ROOT,
      getNewLine: () => "\n",
    })
    .trim();
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const { diagnostics } = buildDeclarations();
  for (const d of diagnostics) console.error(`declarations: ${formatDiagnostic(d)}`);
  if (diagnostics.length > 0) process.exitCode = 1;
}
