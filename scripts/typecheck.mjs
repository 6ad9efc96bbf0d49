#!/usr/bin/env node
/**
 * The type check (`npm run typecheck`): every file of tsconfig.json (src, examples, tests),
 * with src/ compiled once. src/ is checked by the declarations' build (./declarations.mjs,
 * shared with the API report and the package build, incremental), and the rest is checked
 * against those declarations through a project reference, as `tsc -b` does, instead of
 * compiling src/ a second time from its sources.
 *
 *   node scripts/typecheck.mjs   fail on a type error anywhere tsconfig.json includes
 */
import { join, sep } from "node:path";
import ts from "typescript";
import { buildDeclarations, formatDiagnostic, SRC_PROJECT } from "./declarations.mjs";

const ROOT = join(import.meta.dirname, "..");
const SRC = join(ROOT, "src") + sep;

const fail = (d) => {
  console.error(formatDiagnostic(d));
  process.exitCode = 1;
};

// 1. src/: checked while its declarations are built (or found up to date).
for (const d of buildDeclarations().diagnostics) fail(d);

// 2. The rest, reading src/ from its declarations.
const parsed = ts.getParsedCommandLineOfConfigFile(
  join(ROOT, "tsconfig.json"),
  {},
  {
    ...ts.sys,
    onUnRecoverableConfigFileDiagnostic: fail,
  },
);
if (parsed) {
  const program = ts.createProgram({
    rootNames: parsed.fileNames.filter((file) => !join(file).startsWith(SRC)),
    options: parsed.options,
    projectReferences: [{ path: SRC_PROJECT }],
    configFileParsingDiagnostics: ts.getConfigFileParsingDiagnostics(parsed),
  });
  for (const d of ts.getPreEmitDiagnostics(program)) fail(d);
  // A file of src/ read from source (not through the reference) would be checked here again.
  const fromSource = program
    .getSourceFiles()
    .filter((file) => join(file.fileName).startsWith(SRC) && !file.isDeclarationFile);
  if (fromSource.length > 0) {
    console.error(`typecheck: src/ read from source: ${fromSource[0].fileName}`);
    process.exitCode = 1;
  }
}
