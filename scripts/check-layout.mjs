#!/usr/bin/env node
// The source layout's rules, checked from the files themselves (run by `npm run lint`, so by
// .ci/run too). It fails on:
//   - an import cycle between folders (a folder is a directory under src/; an edge is a
//     relative import, `import type` included, from a file of one folder to a file of another);
//   - a behaviour catalogue code (a letter A-N and one or two digits) in a src/ comment;
//   - a statement that writes the `tasks` table outside the task store;
//   - a folder of src/ missing from the folder map of docs/architecture.md, or one the map
//     names that does not exist.
// It lists, without failing, the source files with no unit test at their mirrored path
// (src/a/b.ts is tested by test/a/b.test.ts or test/a/b.<aspect>.test.ts).
// `--quiet` leaves that list out; `--json` prints everything found as JSON.
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, posix, relative } from "node:path";
import ts from "typescript";

const ROOT = join(dirname(new URL(import.meta.url).pathname), "..");
const SRC = join(ROOT, "src");
const TEST = join(ROOT, "test");
const TASKS_WRITER = "src/conversation/tasks/task-store.ts";
const ARCHITECTURE = "docs/architecture.md";

/** Every file under `dir` (relative to the repository, with forward slashes). */
function walk(dir, out = []) {
  for (const name of readdirSync(dir).sort()) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) walk(path, out);
    else out.push(relative(ROOT, path).split("\\").join("/"));
  }
  return out;
}

const sourceFiles = walk(SRC).filter((f) => f.endsWith(".ts"));
const folders = [...new Set(sourceFiles.map((f) => posix.dirname(f)))].sort();

/** The file a relative specifier names, as the bundler resolves it (foo, foo.ts, foo/index.ts). */
function resolveImport(from, specifier) {
  const base = posix.normalize(posix.join(posix.dirname(from), specifier));
  for (const candidate of [base, `${base}.ts`, `${base}/index.ts`]) {
    if (sourceFiles.includes(candidate)) return candidate;
  }
  if (base.endsWith(".js") && sourceFiles.includes(base.replace(/\.js$/, ".ts"))) {
    return base.replace(/\.js$/, ".ts");
  }
  return null;
}

/** Folder graph: for each folder, the folders it imports, with one importing file for each. */
function folderGraph() {
  const edges = new Map(folders.map((f) => [f, new Map()]));
  for (const file of sourceFiles) {
    const info = ts.preProcessFile(readFileSync(join(ROOT, file), "utf8"), true, true);
    for (const { fileName } of info.importedFiles) {
      if (!fileName.startsWith(".")) continue;
      const target = resolveImport(file, fileName);
      if (!target) continue;
      const from = posix.dirname(file);
      const to = posix.dirname(target);
      if (from === to) continue;
      const seen = edges.get(from);
      if (!seen.has(to)) seen.set(to, `${file} -> ${target}`);
    }
  }
  return edges;
}

/** Strongly connected components of more than one folder (Tarjan), each a set of cycles. */
function cycles(edges) {
  let index = 0;
  const stack = [];
  const on = new Set();
  const idx = new Map();
  const low = new Map();
  const found = [];
  const visit = (v) => {
    idx.set(v, index);
    low.set(v, index++);
    stack.push(v);
    on.add(v);
    for (const w of edges.get(v).keys()) {
      if (!idx.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v), low.get(w)));
      } else if (on.has(w)) low.set(v, Math.min(low.get(v), idx.get(w)));
    }
    if (low.get(v) === idx.get(v)) {
      const component = [];
      let w;
      do {
        w = stack.pop();
        on.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1) found.push(component.sort());
    }
  };
  for (const v of folders) if (!idx.has(v)) visit(v);
  // One concrete loop per component, with the import behind each step, so the report says
  // which file to change.
  return found.map((component) => {
    const inside = new Set(component);
    const start = component[0];
    const path = [start];
    const back = new Map([[start, null]]);
    const queue = [start];
    let end = null;
    while (queue.length > 0 && end === null) {
      const v = queue.shift();
      for (const w of edges.get(v).keys()) {
        if (!inside.has(w)) continue;
        if (w === start) {
          end = v;
          break;
        }
        if (!back.has(w)) {
          back.set(w, v);
          queue.push(w);
        }
      }
    }
    path.length = 0;
    for (let v = end; v !== null; v = back.get(v)) path.unshift(v);
    path.push(start);
    const steps = path.slice(1).map((to, i) => edges.get(path[i]).get(to));
    return { folders: component, loop: path, steps };
  });
}

/** Every comment of a file, as the TypeScript parser sees them (strings and templates skipped). */
function comments(file, text) {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const ranges = new Map();
  const visit = (node) => {
    if (node.kind < ts.SyntaxKind.FirstNode || node.kind === ts.SyntaxKind.EndOfFileToken) {
      for (const range of ts.getLeadingCommentRanges(text, node.getFullStart()) ?? []) {
        ranges.set(range.pos, range);
      }
    }
    for (const child of node.getChildren(source)) visit(child);
  };
  visit(source);
  return [...ranges.values()].map((r) => ({
    line: source.getLineAndCharacterOfPosition(r.pos).line + 1,
    text: text.slice(r.pos, r.end),
  }));
}

const CATALOGUE_CODE = /\b[A-N]\d{1,2}\b/;

function catalogueCodes() {
  const found = [];
  for (const file of sourceFiles) {
    const text = readFileSync(join(ROOT, file), "utf8");
    for (const comment of comments(file, text)) {
      comment.text.split("\n").forEach((line, i) => {
        const match = CATALOGUE_CODE.exec(line);
        if (match) found.push(`${file}:${comment.line + i}: ${match[0]} in "${line.trim()}"`);
      });
    }
  }
  return found;
}

const TASKS_WRITE =
  /\b(UPDATE\s+tasks|INSERT\s+(OR\s+\w+\s+)?INTO\s+tasks|DELETE\s+FROM\s+tasks)\b/i;

function tasksWriters() {
  return sourceFiles.filter(
    (file) => file !== TASKS_WRITER && TASKS_WRITE.test(readFileSync(join(ROOT, file), "utf8")),
  );
}

/** Source files whose mirrored unit test does not exist (entries and type-only files too). */
function untested() {
  const tests = new Set(existsSync(TEST) ? walk(TEST) : []);
  return sourceFiles.filter((file) => {
    const stem = file.replace(/^src\//, "test/").replace(/\.ts$/, "");
    if (tests.has(`${stem}.test.ts`)) return false;
    const dir = posix.dirname(stem);
    const name = posix.basename(stem);
    return ![...tests].some(
      (t) =>
        posix.dirname(t) === dir &&
        posix.basename(t).startsWith(`${name}.`) &&
        t.endsWith(".test.ts"),
    );
  });
}

/**
 * The folder map of the architecture page is the code block under "Source layout": one
 * folder a line, indented two spaces per level under `src/`.
 */
function mapDrift() {
  const text = readFileSync(join(ROOT, ARCHITECTURE), "utf8");
  const section = text.split(/^## Source layout$/m)[1]?.split(/^## /m)[0] ?? "";
  const block = section.split("```")[1] ?? "";
  const named = new Set();
  const parents = [];
  for (const line of block.split("\n")) {
    const match = /^( *)(\S+\/)(?:\s|$)/.exec(line);
    if (!match) continue;
    const depth = match[1].length / 2;
    parents.length = depth;
    parents[depth] = match[2].replace(/\/$/, "");
    // Several folders on one line (`anthropic/   gemini/ ...`) are siblings.
    const siblings = line
      .trim()
      .split(/\s+/)
      .filter((w) => /^[a-z0-9-]+\/$/.test(w));
    for (const sibling of siblings) {
      named.add([...parents.slice(0, depth), sibling.replace(/\/$/, "")].join("/"));
    }
  }
  const inMap = [...named].filter((f) => f.startsWith("src/"));
  const problems = [];
  for (const folder of folders) {
    if (folder !== "src" && !named.has(folder)) problems.push(`${folder} is not in the map`);
  }
  for (const folder of inMap) {
    if (!folders.includes(folder)) problems.push(`${folder} is in the map but not in src/`);
  }
  return problems;
}

/** Test files that call `vi.useFakeTimers` but are not listed to run first in their workerd. */
async function unlistedFakeClocks() {
  const { FAKE_CLOCK_FILES } = await import("../test/support/fake-clock-files.mjs");
  const tests = existsSync(TEST) ? walk(TEST).filter((f) => f.endsWith(".test.ts")) : [];
  return tests.filter(
    (file) =>
      !file.startsWith("test/e2e/") &&
      /\bvi\.useFakeTimers\(/.test(readFileSync(join(ROOT, file), "utf8")) &&
      !FAKE_CLOCK_FILES.includes(file),
  );
}

const report = {
  cycles: cycles(folderGraph()),
  catalogueCodes: catalogueCodes(),
  tasksWriters: tasksWriters(),
  mapDrift: mapDrift(),
  unlistedFakeClocks: await unlistedFakeClocks(),
  untested: untested(),
};

if (process.argv.includes("--json")) {
  console.log(JSON.stringify(report, null, 2));
  process.exit(0);
}

let failed = false;
const fail = (title, lines) => {
  if (lines.length === 0) return;
  failed = true;
  console.error(`✘ ${title}`);
  for (const line of lines) console.error(`  ${line}`);
};
fail(
  "import cycles between folders (move the shared piece inward, or invert the dependency)",
  report.cycles.map(
    (c) =>
      `${c.loop.join(" -> ")}\n    ${c.steps.join("\n    ")}\n    (all of: ${c.folders.join(", ")})`,
  ),
);
fail("catalogue codes in comments (say what the code does instead)", report.catalogueCodes);
fail(`the tasks table written outside ${TASKS_WRITER}`, report.tasksWriters);
fail(`the folder map of ${ARCHITECTURE} does not match src/`, report.mapDrift);
fail(
  "test files with a fake clock not in test/support/fake-clock-files.mjs (it must run first in its workerd)",
  report.unlistedFakeClocks,
);
if (!process.argv.includes("--quiet") && report.untested.length > 0) {
  console.log(
    `Source files without a unit test at their mirrored path (${report.untested.length}):`,
  );
  for (const file of report.untested) console.log(`  ${file}`);
}
if (failed) process.exit(1);
console.log(
  `check-layout: ${folders.length} folders without import cycles, no catalogue codes in comments, one writer of tasks, the folder map matches, fake clocks run first.`,
);
