/**
 * The declarations (.d.ts) of the package's entry points, built once into temp/dts for both
 * of their readers: the API report (scripts/api-report.mjs) and the package build (tsup
 * bundles them into dist/*.d.ts). Each used to compile the sources on its own, about 25 s
 * of CPU apiece. The build is incremental (temp/dts/.tsbuildinfo): when the sources have
 * not changed since the last build, the second reader only re-reads them.
 *
 *   node scripts/declarations.mjs   build them; fail on a type error in the entries' sources
 */
import { existsSync, rmSync } from "node:fs";
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
  let build = checkAndEmit(createProgram());
  // The build info says what was emitted, not whether it is still there: rebuild in full
  // when an entry's declaration has gone (a cleaned temp/dts keeps no stale build info).
  if (!Object.values(ENTRIES).every((file) => existsSync(declarationOf(file)))) {
    rmSync(DTS, { recursive: true, force: true });
    build = checkAndEmit(createProgram());
  }
  return build;
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
