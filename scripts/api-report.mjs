#!/usr/bin/env node
/**
 * The public API report: `api/<entry>.api.md`, one per entry point of the package, written
 * by API Extractor from the declarations of the entry's source.
 *
 *   node scripts/api-report.mjs          (npm run api)        rewrite the reports
 *   node scripts/api-report.mjs --check  (npm run api:check)  fail when the surface differs
 *
 * Besides the reports it checks what a report cannot show: every name has one entry point
 * (but the few in SHARED, which must be the same declaration in each), and every exported
 * function has TSDoc with an `@example`.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { CompilerState, Extractor, ExtractorConfig } from "@microsoft/api-extractor";
import ts from "typescript";
import { buildDeclarations, declarationOf } from "./declarations.mjs";
import { ENTRIES } from "./entries.mjs";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");
const REPORTS = join(ROOT, "api");
const REPORTS_TEMP = join(ROOT, "temp", "api", "reports");
const check = process.argv.includes("--check");

/**
 * Names exported by more than one entry, on purpose: the A2A vocabulary that both a handler
 * (`edgelink`, Workers only) and a client (`edgelink/client`, any runtime) read and write.
 */
const SHARED = new Set(["Parts", "textOf"]);

const reportName = (entry) => `${entry.replace("/", "-")}.api.md`;

function fail(message) {
  console.error(`api-report: ${message}`);
  process.exitCode = 1;
}

// 1. The entries' declarations (shared with the package build, built by the native
// compiler), and a TypeScript 6 program over them for the checks below: TypeScript 7 has
// no JavaScript API. Read from declarations, the checker only resolves what is asked.
const { diagnostics } = buildDeclarations();
for (const d of diagnostics) fail(d);
if (process.exitCode) process.exit();
const program = declarationProgram();
const checker = program.getTypeChecker();
rmSync(join(ROOT, "temp", "api"), { recursive: true, force: true });

/** The declarations API Extractor reads for each entry: its own, or the copy edited below. */
const reportInput = Object.fromEntries(
  Object.values(ENTRIES).map((file) => [file, declarationOf(file)]),
);

/**
 * `export type { Task }` of a name that is also a value (a zod schema and its type) puts
 * both in API Extractor's report, as if the schema were exported. In the entry's emitted
 * declarations each such name becomes a type alias of itself, so the report shows the
 * type; the schema's declaration is not part of the surface.
 */
for (const file of Object.values(ENTRIES)) {
  const dtsPath = declarationOf(file);
  const text = readFileSync(dtsPath, "utf8");
  const dts = ts.createSourceFile(dtsPath, text, ts.ScriptTarget.Latest, true);
  const source = program.getSourceFile(dtsPath);
  const typeOnlyValues = new Set();
  for (const statement of source.statements) {
    if (!ts.isExportDeclaration(statement) || !statement.exportClause) continue;
    if (!ts.isNamedExports(statement.exportClause)) continue;
    for (const element of statement.exportClause.elements) {
      if (!statement.isTypeOnly && !element.isTypeOnly) continue;
      const symbol = checker.getAliasedSymbol(checker.getSymbolAtLocation(element.name));
      if (symbol.flags & ts.SymbolFlags.Value) typeOnlyValues.add(element.name.text);
    }
  }
  if (typeOnlyValues.size === 0) continue;
  const edits = [];
  const aliases = [];
  for (const statement of dts.statements) {
    if (!ts.isExportDeclaration(statement) || !statement.exportClause) continue;
    if (!ts.isNamedExports(statement.exportClause) || !statement.moduleSpecifier) continue;
    const keep = [];
    for (const element of statement.exportClause.elements) {
      const name = element.name.text;
      if (typeOnlyValues.has(name)) {
        const from = (element.propertyName ?? element.name).text;
        aliases.push(
          `import type { ${from} as ${name}__type } from ${statement.moduleSpecifier.getText(dts)};\nexport type ${name} = ${name}__type;`,
        );
      } else {
        keep.push(element.getText(dts));
      }
    }
    if (keep.length === statement.exportClause.elements.length) continue;
    const prefix = statement.isTypeOnly ? "export type" : "export";
    edits.push({
      start: statement.getStart(dts),
      end: statement.getEnd(),
      text: keep.length
        ? `${prefix} { ${keep.join(", ")} } from ${statement.moduleSpecifier.getText(dts)};`
        : "",
    });
  }
  let out = text;
  for (const edit of edits.sort((a, b) => b.start - a.start)) {
    out = out.slice(0, edit.start) + edit.text + out.slice(edit.end);
  }
  // Beside the original (its relative imports still resolve), which stays as the package
  // build needs it.
  const edited = dtsPath.replace(/\.d\.ts$/, ".api-report.d.ts");
  writeFileSync(edited, `${out}\n${aliases.join("\n")}\n`);
  reportInput[file] = edited;
}

// 2. One home per name; an example on every function.
const homes = new Map();
const counts = {};
let functions = 0;
for (const [entry, file] of Object.entries(ENTRIES)) {
  const source = program.getSourceFile(declarationOf(file));
  const moduleSymbol = source && checker.getSymbolAtLocation(source);
  if (!moduleSymbol) throw new Error(`${file}: not a module`);
  const exports = checker.getExportsOfModule(moduleSymbol);
  counts[entry] = exports.length;
  for (const exported of exports) {
    const name = exported.getName();
    const symbol =
      exported.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(exported) : exported;
    const earlier = homes.get(name);
    if (earlier && !SHARED.has(name)) {
      fail(`${name} is exported by ${earlier.entry} and ${entry}: give it one entry point`);
    } else if (earlier && earlier.symbol !== symbol) {
      fail(`${name} in ${earlier.entry} and ${entry} are different declarations`);
    }
    if (!earlier) homes.set(name, { entry, symbol });
    // A type-only export of a value (a schema's type) exports no function.
    const typeOnly = exported.declarations?.some((d) => ts.isTypeOnlyExportDeclaration(d));
    if (!typeOnly && isFunction(symbol)) {
      functions++;
      if (!hasExample(symbol)) fail(`${entry}: function ${name} has no TSDoc @example`);
    }
  }
}
for (const name of SHARED) {
  if (!homes.has(name)) fail(`${name} is listed as shared but no entry exports it`);
}

function declarationProgram() {
  const parsed = ts.getParsedCommandLineOfConfigFile(
    join(ROOT, "tsconfig.json"),
    {},
    {
      ...ts.sys,
      onUnRecoverableConfigFileDiagnostic: (d) => {
        throw new Error(ts.flattenDiagnosticMessageText(d.messageText, "\n"));
      },
    },
  );
  const roots = Object.values(ENTRIES).map(declarationOf);
  return ts.createProgram({ rootNames: roots, options: { ...parsed.options, noEmit: true } });
}

function isFunction(symbol) {
  if (symbol.flags & ts.SymbolFlags.Function) return true;
  if (!(symbol.flags & ts.SymbolFlags.Variable)) return false;
  const declaration = symbol.valueDeclaration;
  if (declaration === undefined) return false;
  const type = checker.getTypeOfSymbolAtLocation(symbol, declaration);
  if (type.getCallSignatures().length > 0) return true;
  // An object of functions (`Parts.text(...)`) is used as functions are.
  if (!(type.flags & ts.TypeFlags.Object)) return false;
  const members = type.getProperties();
  return (
    members.length > 0 &&
    members.every(
      (m) => checker.getTypeOfSymbolAtLocation(m, declaration).getCallSignatures().length > 0,
    )
  );
}

function hasExample(symbol) {
  return (symbol.declarations ?? []).some((declaration) =>
    ts.getJSDocTags(declaration).some((tag) => tag.tagName.text === "example"),
  );
}

// 3. The reports.
mkdirSync(REPORTS, { recursive: true });
const changed = [];
const configs = Object.entries(ENTRIES).map(([entry, file]) => {
  const config = ExtractorConfig.prepare({
    configObjectFullPath: undefined,
    packageJsonFullPath: join(ROOT, "package.json"),
    configObject: {
      projectFolder: ROOT,
      newlineKind: "lf",
      mainEntryPointFilePath: reportInput[file],
      compiler: { tsconfigFilePath: join(ROOT, "tsconfig.json") },
      apiReport: {
        enabled: true,
        reportFolder: REPORTS,
        reportTempFolder: REPORTS_TEMP,
        reportFileName: reportName(entry),
        includeForgottenExports: false,
      },
      docModel: { enabled: false },
      dtsRollup: { enabled: false },
      tsdocMetadata: { enabled: false },
      messages: {
        compilerMessageReporting: { default: { logLevel: "warning" } },
        extractorMessageReporting: {
          default: { logLevel: "warning" },
          // No release tags (@public, @beta): an entry point is the release boundary.
          "ae-missing-release-tag": { logLevel: "none", addToApiReportFile: false },
          // TSDoc {@link} to a name of another entry point.
          "ae-unresolved-link": { logLevel: "none", addToApiReportFile: false },
          // A declaration an exported signature uses but the entry does not export: named
          // in the report, not listed (with them the reports run to 9,000 lines).
          "ae-forgotten-export": { logLevel: "none", addToApiReportFile: false },
          // Members without TSDoc are marked "(undocumented)" in the report instead.
          "ae-undocumented": { logLevel: "none" },
        },
        tsdocMessageReporting: { default: { logLevel: "none" } },
      },
    },
  });
  return { entry, config };
});
// One compiler program for all the entries; by default API Extractor builds one per entry.
const compilerState = CompilerState.create(configs[0].config, {
  additionalEntryPoints: configs.map(({ config }) => config.mainEntryPointFilePath),
});
for (const { entry, config } of configs) {
  const result = Extractor.invoke(config, {
    compilerState,
    localBuild: !check,
    showVerboseMessages: false,
    messageCallback: (message) => {
      // In check mode the changed report is reported below, with its diff.
      if (message.messageId === "console-api-report-not-copied") message.handled = true;
    },
  });
  if (result.apiReportChanged) changed.push(entry);
  if (result.errorCount > 0 || (result.warningCount > 0 && !result.apiReportChanged)) {
    fail(`${entry}: ${result.errorCount} errors, ${result.warningCount} warnings`);
  }
}

if (check && changed.length > 0) {
  for (const entry of changed) {
    const committed = join(REPORTS, reportName(entry));
    const fresh = join(REPORTS_TEMP, reportName(entry));
    console.error(`\n${entry}: the public API differs from ${relative(ROOT, committed)}`);
    if (existsSync(committed)) {
      const diff = spawnSync("diff", ["-u", committed, fresh], { encoding: "utf8" });
      console.error(diff.stdout || readFileSync(fresh, "utf8"));
    }
  }
  fail(
    `the public API of ${changed.join(", ")} changed: if that is meant, run \`npm run api\` and commit api/`,
  );
} else if (!check) {
  const each = Object.entries(counts).map(([entry, n]) => `${entry} ${n}`);
  console.log(
    `api-report: ${homes.size} names (${each.join(", ")}), ${functions} functions with examples${changed.length ? `; updated ${changed.join(", ")}` : ""}`,
  );
}
