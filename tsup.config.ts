import { readFileSync, writeFileSync } from "node:fs";
import { buildSync, transformSync } from "esbuild";
import { defineConfig, type Options } from "tsup";
import ts from "typescript";
import { exportCoreLinks, importCoreLinks } from "./scripts/core-links";
import { declarationOf } from "./scripts/declarations.mjs";

type Plugin = NonNullable<Options["esbuildPlugins"]>[number];

/**
 * Two edits of the sources before esbuild reads them, each found with the TypeScript parser:
 *
 * - The SQL of the Durable Objects (every file of src/conversation, src/index, src/storage
 *   but storage-version.ts, src/memory/object, and src/registry/registry-object.ts) and the
 *   inspector's page are template literals indented to read well in the source; a minifier
 *   keeps a string's every space. In those files the indentation after each line break
 *   inside a template literal is dropped (SQL and HTML mean the same without it): about
 *   0.3 KiB gzipped less in every Worker.
 * - Minified, `class TaskNotFoundError` becomes `class ke`, and Node prints a thrown one as
 *   `ke [TaskNotFoundError]`. Every class named `...Error` gets a static block that gives it
 *   back its name. esbuild's `keepNames` would do it for every function and class, at 33 KiB
 *   gzipped in the demo Worker; this costs well under 1 KiB.
 */
const UNINDENTED =
  /src[\\/](conversation[\\/].+|index[\\/][^\\/]+|storage[\\/](?!storage-version\.ts)[^\\/]+|memory[\\/]object[\\/][^\\/]+|registry[\\/]registry-object|worker[\\/]inspector[\\/]inspector-page)\.ts$/;

const editSources: Plugin = {
  name: "edit-sources",
  setup(build) {
    build.onLoad({ filter: /src[\\/].*\.ts$/ }, (args) => {
      const source = readFileSync(args.path, "utf8");
      const unindent = UNINDENTED.test(args.path);
      if (!unindent && !/class \w+Error\b/.test(source)) return undefined;
      const file = ts.createSourceFile(args.path, source, ts.ScriptTarget.Latest, true);
      const edits: { start: number; end: number; text: string }[] = [];
      const visit = (node: ts.Node): void => {
        if (
          unindent &&
          (ts.isNoSubstitutionTemplateLiteral(node) ||
            ts.isTemplateHead(node) ||
            ts.isTemplateMiddle(node) ||
            ts.isTemplateTail(node))
        ) {
          const start = node.getStart(file);
          const text = source.slice(start, node.getEnd());
          const unindented = text.replace(/\n[ \t]+/g, "\n");
          if (unindented !== text) edits.push({ start, end: node.getEnd(), text: unindented });
        }
        if (ts.isClassDeclaration(node) && node.name && /Error$/.test(node.name.text)) {
          // Right after the class body's opening brace.
          const brace = source.indexOf(
            "{",
            node.heritageClauses?.at(-1)?.getEnd() ?? node.name.getEnd(),
          );
          const text = `static { Object.defineProperty(this, "name", { value: "${node.name.text}" }); }`;
          edits.push({ start: brace + 1, end: brace + 1, text });
        }
        ts.forEachChild(node, visit);
      };
      visit(file);
      if (edits.length === 0) return undefined;
      let out = source;
      for (const edit of edits.sort((a, b) => b.start - a.start)) {
        out = out.slice(0, edit.start) + edit.text + out.slice(edit.end);
      }
      return { contents: out, loader: "ts" };
    });
  },
};

/**
 * The inspector's browser script is strings in the source (readable, with their comments)
 * that no bundler minifies: minified here, it costs every Worker about 0.9 KiB gzipped
 * less (the package test holds the demo Worker to its gzipped budget). The script is
 * written in parts (src/worker/inspector/inspector-script*.ts) that share one function's
 * scope, so it is minified whole: its module is bundled and run here for the script it puts
 * together, and the minified script replaces that module and its parts.
 */
const minifyInspectorScript: Plugin = {
  name: "minify-inspector-script",
  setup(build) {
    build.onLoad({ filter: /inspector-script\.ts$/ }, (args) => {
      const bundled = buildSync({
        entryPoints: [args.path],
        bundle: true,
        format: "cjs",
        platform: "neutral",
        write: false,
      });
      const module = { exports: {} as { INSPECTOR_SCRIPT?: unknown } };
      new Function("module", "exports", bundled.outputFiles[0]?.text ?? "")(module, module.exports);
      const script = module.exports.INSPECTOR_SCRIPT;
      if (typeof script !== "string") {
        throw new Error("inspector-script.ts: expected a string export INSPECTOR_SCRIPT");
      }
      const { code } = transformSync(script, { minify: true, target: "es2020" });
      return { contents: `export const INSPECTOR_SCRIPT = ${JSON.stringify(code)};`, loader: "ts" };
    });
  },
};

/**
 * The entries whose code is one module, `dist/bundle.js` (src/bundle.ts): each is written
 * as a list of re-exports from it. Cut into chunks between these entries instead, the
 * modules they share cost every agent's Worker about 1.5 KiB gzipped (the demo: 165.0
 * against 163.5 KiB). The value names come from the entry's source, which must be
 * re-export lists only.
 */
const REEXPORTED = {
  index: "src/index.ts",
  providers: "src/providers/index.ts",
  history: "src/history/index.ts",
  testing: "src/testing/index.ts",
} as const;

function valueExports(path: string): string[] {
  const file = ts.createSourceFile(path, readFileSync(path, "utf8"), ts.ScriptTarget.Latest);
  const names: string[] = [];
  for (const statement of file.statements) {
    if (
      !ts.isExportDeclaration(statement) ||
      !statement.exportClause ||
      !ts.isNamedExports(statement.exportClause)
    ) {
      throw new Error(`${path}: an entry re-exported from bundle.js holds only export lists`);
    }
    if (statement.isTypeOnly) continue;
    for (const element of statement.exportClause.elements) {
      if (!element.isTypeOnly) names.push(element.name.text);
    }
  }
  return names;
}

async function writeReexports(): Promise<void> {
  for (const [entry, path] of Object.entries(REEXPORTED)) {
    const names = valueExports(path).sort();
    writeFileSync(`dist/${entry}.js`, `export { ${names.join(", ")} } from "./bundle.js";\n`);
  }
}

const shared = {
  format: ["esm"],
  target: "es2023",
  platform: "neutral",
  // The build script empties dist/ first: the two builds below write into it side by side.
  clean: false,
  treeshake: true,
  // Minified, because every Worker built on Edgelink uploads it and parses it at each cold
  // start: 63 KiB less gzipped in the demo worker's bundle. Exported names are kept (they
  // are the API); the source maps (with the TypeScript sources) let wrangler map stack
  // traces back to them.
  minify: true,
  sourcemap: true,
  external: [/^cloudflare:/, /^node:/, "hono", /^hono\//, "zod", "eventsource-parser", "jose"],
  outDir: "dist",
  esbuildPlugins: [minifyInspectorScript, editSources],
} satisfies Options;

/**
 * The published package: ESM and bundled .d.ts for the nine entry points, and the CLI.
 * Dependencies and peer dependencies stay imports (the user's bundler, wrangler, resolves
 * them), and `cloudflare:workers` is left to the Workers runtime.
 */
export default defineConfig([
  {
    ...shared,
    esbuildPlugins: [exportCoreLinks, ...shared.esbuildPlugins],
    entry: {
      bundle: "src/bundle.ts",
      client: "src/client/index.ts",
      push: "src/push/receiver.ts",
      // MCP is opt-in: only Workers importing `edgelink/mcp` bundle the MCP SDK.
      mcp: "src/mcp/index.ts",
      // The `edgelink` command; bin/edgelink.mjs imports it (Node only, Web APIs plus a
      // dynamically imported node:http for `push listen`).
      cli: "src/cli/main.ts",
    },
    // The entries' declarations as scripts/declarations.mjs built them (the build script runs
    // it first; the API report reads the same files), bundled one file per entry. Built in
    // one program, a type that two entries name (a memory source, a conversation) is one
    // type, not two that TypeScript refuses to mix.
    dts: {
      entry: {
        index: declarationOf("src/index.ts"),
        providers: declarationOf("src/providers/index.ts"),
        history: declarationOf("src/history/index.ts"),
        testing: declarationOf("src/testing/index.ts"),
        client: declarationOf("src/client/index.ts"),
        push: declarationOf("src/push/receiver.ts"),
        mcp: declarationOf("src/mcp/index.ts"),
        // Their code is built below, on its own.
        memory: declarationOf("src/memory/index.ts"),
        registry: declarationOf("src/registry/index.ts"),
      },
    },
    splitting: true,
    onSuccess: writeReexports,
  },
  {
    // Long-term memory is opt-in (only Workers importing `edgelink/memory` bundle it) and
    // built on its own: in the split build above its modules moved the chunk boundaries and
    // cost every agent's Worker 2.0 KiB gzipped (the demo: 195,080 against 193,067 bytes).
    // The core modules it uses it imports from bundle.js (see scripts/core-links.ts).
    ...shared,
    esbuildPlugins: [importCoreLinks, ...shared.esbuildPlugins],
    entry: { memory: "src/memory/index.ts" },
    // Its declarations are built with the core's (above).
    dts: false,
    splitting: false,
  },
  {
    // The agent registry is its own Worker, built on its own: sharing chunks with the
    // entries above cut their modules at other places and cost an agent's Worker 1.3 KiB
    // gzipped, though it never imports the registry.
    ...shared,
    entry: { registry: "src/registry/index.ts" },
    dts: false,
    splitting: false,
  },
]);
