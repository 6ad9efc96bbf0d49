/**
 * Type-checks the TypeScript blocks of the documentation against the package's source, so
 * that an example that no longer compiles (a renamed option, a changed signature) fails a
 * test instead of misleading a reader.
 *
 * Each ```ts block of README.md and docs/**\/*.md is its own module, importing the
 * package by its published names (`edgelink`, `edgelink/client`, ...), which map to
 * `src/`. A fragment that cannot stand alone is marked ```ts ignore (used sparingly).
 * Names a fragment may use without declaring them (`card`, `handler`, `env`, ...) are
 * declared once in ./doc-prelude.d.ts.
 */
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { ENTRIES } from "../../../scripts/entries.mjs";
import { TSC } from "../../../scripts/native-tsc.mjs";

/** One fenced block: where it is, and whether it is checked. */
export interface DocBlock {
  /** The Markdown file, relative to the repository. */
  file: string;
  /** The line of the opening fence (1-based). */
  line: number;
  code: string;
  ignored: boolean;
}

/** One type error, placed at its line in the Markdown file. */
export interface DocDiagnostic {
  where: string;
  message: string;
}

const ENTRY_POINTS: Record<string, string> = ENTRIES;

/** README.md and every Markdown file under docs/, in a stable order. */
export function docFiles(repo: string): string[] {
  const found: string[] = [join(repo, "README.md")];
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith(".md")) found.push(path);
    }
  };
  walk(join(repo, "docs"));
  return found.sort();
}

/** The ```ts / ```typescript blocks of one Markdown text. */
export function extractBlocks(file: string, text: string): DocBlock[] {
  const blocks: DocBlock[] = [];
  const lines = text.split("\n");
  let open: { line: number; info: string; fence: string; body: string[] } | null = null;
  lines.forEach((raw, index) => {
    if (open === null) {
      const start = /^(`{3,}|~{3,})(.*)$/.exec(raw);
      if (start)
        open = {
          line: index + 1,
          fence: start[1] ?? "```",
          info: (start[2] ?? "").trim(),
          body: [],
        };
      return;
    }
    if (raw.trim() === open.fence) {
      const [lang, ...flags] = open.info.split(/\s+/);
      if (lang === "ts" || lang === "typescript") {
        blocks.push({
          file,
          line: open.line,
          code: open.body.join("\n"),
          ignored: flags.includes("ignore"),
        });
      }
      open = null;
      return;
    }
    open.body.push(raw);
  });
  if (open !== null)
    throw new Error(
      `${file}: a code fence opened at line ${(open as { line: number }).line} is never closed`,
    );
  return blocks;
}

/**
 * Type-checks the given blocks in one run of TypeScript 7's native compiler (each block a
 * module of its own, written to a folder of its own with the prelude and a tsconfig.json)
 * and returns every diagnostic that falls in a block or in the prelude.
 *
 * By default `edgelink` and its entries map to the repository's src/. With `project` (a
 * folder where the packed package is installed, as `edgelink init` makes one) the blocks
 * are modules of that project instead, and import what it installed: the published
 * `.d.ts` files, as a user's code sees them.
 */
export function checkBlocks(
  repo: string,
  blocks: readonly DocBlock[],
  project?: string,
): DocDiagnostic[] {
  const home = project ?? repo;
  const preludeSource = join(repo, "test/e2e/support/doc-prelude.d.ts");
  // In the repository the folder is under temp/ (ignored by git); in a project it is one of
  // the project's folders, so that `edgelink` resolves to the installed package.
  const parent = project ? home : join(repo, "temp");
  mkdirSync(parent, { recursive: true });
  const dir = mkdtempSync(join(parent, ".doc-blocks-"));
  try {
    // In a project the prelude is one of its files too, so its `edgelink` is the installed one.
    const prelude = project ? join(dir, "doc-prelude.d.ts") : preludeSource;
    if (project) writeFileSync(prelude, readFileSync(preludeSource, "utf8"));
    const written = new Map<string, DocBlock>();
    blocks.forEach((block, index) => {
      const name = join(dir, `${block.file.replace(/[^\w]/g, "_")}_${block.line}_${index}.ts`);
      // `export {}` makes every block a module, so blocks never share top-level names.
      writeFileSync(name, `${block.code}\nexport {};\n`);
      written.set(name, block);
    });
    const compilerOptions = {
      target: "ES2023",
      module: "ESNext",
      moduleResolution: "Bundler",
      lib: ["ES2023"],
      types: ["@cloudflare/workers-types"],
      typeRoots: [join(home, "node_modules/@types"), join(home, "node_modules")],
      strict: true,
      noUncheckedIndexedAccess: true,
      isolatedModules: true,
      skipLibCheck: true,
      noEmit: true,
      resolveJsonModule: true,
      ...(project
        ? {}
        : {
            paths: Object.fromEntries(
              Object.entries(ENTRY_POINTS).map(([name, path]) => [name, [join(repo, path)]]),
            ),
          }),
    };
    writeFileSync(
      join(dir, "tsconfig.json"),
      JSON.stringify({ compilerOptions, files: [prelude, ...written.keys()] }),
    );
    const run = spawnSync(process.execPath, [TSC, "-p", dir, "--pretty", "false"], {
      cwd: dir,
      encoding: "utf8",
      maxBuffer: 64 * 1024 * 1024,
    });
    if (run.error) throw run.error;
    const out: DocDiagnostic[] = [];
    // The diagnostics of files other than the blocks and the prelude (src/, read from source
    // through `paths`) are the type check's to report, not this one's.
    for (const diagnostic of parseDiagnostics(`${run.stdout}${run.stderr}`, dir)) {
      if (diagnostic.file === undefined) {
        out.push({ where: "(program)", message: diagnostic.message });
        continue;
      }
      const block = written.get(diagnostic.file);
      if (block) {
        out.push({
          where: `${block.file}:${block.line + diagnostic.line}`,
          message: diagnostic.message,
        });
      } else if (diagnostic.file === prelude) {
        out.push({ where: relative(repo, preludeSource), message: diagnostic.message });
      }
    }
    if (run.status !== 0 && out.length === 0 && !/error TS/.test(`${run.stdout}${run.stderr}`)) {
      out.push({ where: "(program)", message: `tsc exited with ${run.status}: ${run.stderr}` });
    }
    return out;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * tsc's diagnostics without colours: `file(line,col): error TSnnnn: message`, an
 * elaboration on the indented lines after it, and `error TSnnnn: message` for the program.
 */
function parseDiagnostics(
  output: string,
  cwd: string,
): { file?: string; line: number; message: string }[] {
  const found: { file?: string; line: number; message: string }[] = [];
  for (const text of output.split("\n")) {
    const placed = /^(.+)\((\d+),(\d+)\): error TS\d+: (.*)$/.exec(text);
    const unplaced = placed ? null : /^error TS\d+: (.*)$/.exec(text);
    if (placed) {
      found.push({
        file: resolve(cwd, placed[1] ?? ""),
        line: Number(placed[2]),
        message: placed[4] ?? "",
      });
    } else if (unplaced) {
      found.push({ line: 0, message: unplaced[1] ?? "" });
    } else if (text.trim() && found.length > 0) {
      const last = found[found.length - 1];
      if (last) last.message += `\n${text.trim()}`;
    }
  }
  return found;
}

/** Every block of README.md and docs/, read from the repository. */
export function repositoryBlocks(repo: string): DocBlock[] {
  return docFiles(repo).flatMap((path) =>
    extractBlocks(relative(repo, path), readFileSync(path, "utf8")),
  );
}
