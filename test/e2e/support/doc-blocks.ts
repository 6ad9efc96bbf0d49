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
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import ts from "typescript";
import { ENTRIES } from "../../../scripts/entries.mjs";

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
 * Type-checks the given blocks in one program (each block a module of its own) and
 * returns every diagnostic that falls in a block or in the prelude.
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
  // In a project the prelude is one of its files too, so its `edgelink` is the installed one.
  const prelude = project ? join(home, ".doc-blocks", "doc-prelude.d.ts") : preludeSource;
  const virtual = new Map<string, DocBlock>();
  blocks.forEach((block, index) => {
    const name = join(
      home,
      ".doc-blocks",
      `${block.file.replace(/[^\w]/g, "_")}_${block.line}_${index}.ts`,
    );
    virtual.set(name, block);
  });
  const options: ts.CompilerOptions = {
    target: ts.ScriptTarget.ES2023,
    module: ts.ModuleKind.ESNext,
    moduleResolution: ts.ModuleResolutionKind.Bundler,
    lib: ["lib.es2023.d.ts"],
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
  const host = ts.createCompilerHost(options);
  const preludeText = project ? readFileSync(preludeSource, "utf8") : undefined;
  const source = (name: string): string | undefined => {
    if (name === prelude && preludeText !== undefined) return preludeText;
    const block = virtual.get(name);
    // `export {}` makes every block a module, so blocks never share top-level names.
    return block ? `${block.code}\nexport {};\n` : undefined;
  };
  const getSourceFile = host.getSourceFile.bind(host);
  host.getSourceFile = (name, languageVersion, onError, shouldCreate) => {
    const text = source(name);
    if (text !== undefined) return ts.createSourceFile(name, text, languageVersion, true);
    return getSourceFile(name, languageVersion, onError, shouldCreate);
  };
  const fileExists = host.fileExists.bind(host);
  host.fileExists = (name) =>
    virtual.has(name) || (name === prelude && preludeText !== undefined) || fileExists(name);
  const readFile = host.readFile.bind(host);
  host.readFile = (name) => source(name) ?? readFile(name);

  const program = ts.createProgram([prelude, ...virtual.keys()], options, host);
  // Only the blocks and the prelude are checked: the checker then reads of src/ just the
  // types they use. Checking every file (getPreEmitDiagnostics) checked all of src/ again,
  // the type check's job, for diagnostics this function dropped: most of its time.
  const own = [prelude, ...virtual.keys()].flatMap((name) => {
    const file = program.getSourceFile(name);
    return file
      ? [...program.getSyntacticDiagnostics(file), ...program.getSemanticDiagnostics(file)]
      : [];
  });
  const diagnostics = [
    ...program.getConfigFileParsingDiagnostics(),
    ...program.getOptionsDiagnostics(),
    ...program.getGlobalDiagnostics(),
    ...own,
  ];
  const out: DocDiagnostic[] = [];
  for (const diagnostic of diagnostics) {
    const message = ts.flattenDiagnosticMessageText(diagnostic.messageText, "\n");
    const file = diagnostic.file;
    if (!file) {
      out.push({ where: "(program)", message });
      continue;
    }
    const block = virtual.get(file.fileName);
    const { line } = file.getLineAndCharacterOfPosition(diagnostic.start ?? 0);
    if (block) out.push({ where: `${block.file}:${block.line + 1 + line}`, message });
    else if (file.fileName === prelude) {
      out.push({ where: relative(repo, preludeSource), message });
    }
  }
  return out;
}

/** Every block of README.md and docs/, read from the repository. */
export function repositoryBlocks(repo: string): DocBlock[] {
  return docFiles(repo).flatMap((path) =>
    extractBlocks(relative(repo, path), readFileSync(path, "utf8")),
  );
}
