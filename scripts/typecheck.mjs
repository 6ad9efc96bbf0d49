#!/usr/bin/env node
/**
 * The type check (`npm run typecheck`): every file of tsconfig.json (src, examples, tests),
 * by TypeScript 7's native compiler (./native-tsc.mjs), with src/ compiled once. src/ is
 * checked by the declarations' build (./declarations.mjs, shared with the API report and
 * the package build, incremental), and the rest (tsconfig.tests.json) is checked against
 * those declarations through its project reference instead of compiling src/ a second time
 * from its sources.
 *
 *   node scripts/typecheck.mjs   fail on a type error anywhere tsconfig.json includes
 */
import { existsSync } from "node:fs";
import { isAbsolute, join, sep } from "node:path";
import { buildDeclarations } from "./declarations.mjs";
import { runTsc } from "./native-tsc.mjs";

const ROOT = join(import.meta.dirname, "..");
const SRC = join(ROOT, "src") + sep;

// 1. src/: checked while its declarations are built (or found up to date).
const { diagnostics } = buildDeclarations();
for (const line of diagnostics) console.error(line);
if (diagnostics.length > 0) process.exitCode = 1;

// 2. The rest, reading src/ from its declarations; --listFiles names every file it read.
const { status, output } = runTsc(["-p", join(ROOT, "tsconfig.tests.json"), "--listFiles"]);
const lines = output ? output.split("\n") : [];
const read = lines.filter((line) => isAbsolute(line) && existsSync(line));
for (const line of lines) if (!read.includes(line)) console.error(line);
if (status !== 0) process.exitCode = 1;
// A file of src/ read from source (not through the reference) would be checked here again.
const fromSource = read.find((file) => join(file).startsWith(SRC) && !file.endsWith(".d.ts"));
if (fromSource) {
  console.error(`typecheck: src/ read from source: ${fromSource}`);
  process.exitCode = 1;
}
if (read.length === 0) {
  console.error("typecheck: tsconfig.tests.json read no file");
  process.exitCode = 1;
}
