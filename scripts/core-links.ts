/**
 * Build plugins for tsup.config.ts: `edgelink/memory` sharing the core's modules.
 */
import { existsSync, readFileSync } from "node:fs";
import { dirname, relative, resolve } from "node:path";
import { build as esbuild } from "esbuild";
import type { Options } from "tsup";
import ts from "typescript";

type Plugin = NonNullable<Options["esbuildPlugins"]>[number];

/**
 * `edgelink/memory` is built on its own (below), but it must not carry copies of the core
 * modules it imports: a copied class (A2AError) is another class, so an error thrown by
 * memory code would fail `instanceof` with the class from `edgelink`, and a copied module's
 * state (the tracer, the log settings) would be another's. So memory imports them from
 * `dist/bundle.js`, the module behind `edgelink`:
 *
 * - a first pass of esbuild over both graphs finds the core modules that memory's own
 *   modules import (the links), and the TypeScript parser the names they import from
 *   each; another pass keeps those that are value exports;
 * - the core build adds an export of each of those names to bundle.js under an alias
 *   (`__core_<module>$<name>`; no entry's .d.ts lists them), which a Worker's bundler drops
 *   when nothing imports it;
 * - the memory build resolves each link to a module re-exporting its names from
 *   "./bundle.js" under those aliases, so the core's modules are not in memory.js at all.
 */
interface CoreLink {
  /** The link's path from the repository's root, `src/telemetry/log.ts`. */
  path: string;
  alias: string;
  names: string[];
}

const bareImportsExternal: Plugin = {
  name: "bare-imports-external",
  setup(build) {
    build.onResolve({ filter: /^[^./]/ }, (args) =>
      args.kind === "entry-point" ? undefined : { path: args.path, external: true },
    );
  },
};

async function findCoreLinks(): Promise<Map<string, CoreLink>> {
  const pass = {
    bundle: true,
    write: false,
    metafile: true,
    format: "esm",
    platform: "neutral",
    logLevel: "silent",
    plugins: [bareImportsExternal],
  } as const;
  const inputsOf = async (entry: string) => {
    const { metafile } = await esbuild({ ...pass, entryPoints: [entry] });
    return metafile.inputs;
  };
  const [core, memory] = await Promise.all([
    inputsOf("src/bundle.ts"),
    inputsOf("src/memory/index.ts"),
  ]);
  // The names memory's own modules import from each link ("*": all of them).
  const wanted = new Map<string, Set<string>>();
  for (const [path, input] of Object.entries(memory)) {
    if (core[path]) continue;
    const links = input.imports.filter(
      (i) => !i.external && core[i.path] && i.path.startsWith("src/"),
    );
    if (links.length === 0) continue;
    for (const [link, names] of importedNames(path)) {
      if (!links.some((i) => i.path === link)) continue;
      const set = wanted.get(link) ?? new Set<string>();
      for (const name of names) set.add(name);
      wanted.set(link, set);
    }
    for (const link of links) if (!wanted.has(link.path)) wanted.set(link.path, new Set(["*"]));
  }
  const { metafile } = await esbuild({
    ...pass,
    entryPoints: [...wanted.keys()],
    outdir: "links",
    splitting: true,
  });
  const links = new Map<string, CoreLink>();
  for (const output of Object.values(metafile.outputs)) {
    if (!output.entryPoint) continue;
    const path = output.entryPoint;
    const want = wanted.get(path) ?? new Set(["*"]);
    // A name imported for its type only is no value export: esbuild drops that import.
    const names = want.has("*") ? output.exports : output.exports.filter((n) => want.has(n));
    const slug = path
      .replace(/^src\//, "")
      .replace(/\.ts$/, "")
      .replace(/[^\w]/g, "_");
    links.set(path, { path, alias: `__core_${slug}$`, names: [...names].sort() });
  }
  return links;
}

/** Resolves a relative import of `from` to a source file's path from the root, or null. */
function sourceOf(from: string, specifier: string): string | null {
  if (!specifier.startsWith(".")) return null;
  const base = resolve(dirname(from), specifier);
  const file = [`${base}.ts`, `${base}/index.ts`, base].find((f) => existsSync(f));
  return file ? relative(process.cwd(), file).replaceAll("\\", "/") : null;
}

/** The value names a module imports or re-exports from each module ("*" for all). */
function importedNames(path: string): Map<string, string[]> {
  const file = ts.createSourceFile(path, readFileSync(path, "utf8"), ts.ScriptTarget.Latest);
  const out = new Map<string, string[]>();
  const add = (specifier: ts.Expression | undefined, names: string[]) => {
    if (!specifier || !ts.isStringLiteral(specifier)) return;
    const source = sourceOf(path, specifier.text);
    if (source) out.set(source, [...(out.get(source) ?? []), ...names]);
  };
  for (const statement of file.statements) {
    if (ts.isImportDeclaration(statement)) {
      const clause = statement.importClause;
      if (!clause || clause.isTypeOnly) continue;
      const bindings = clause.namedBindings;
      if (clause.name || (bindings && ts.isNamespaceImport(bindings))) {
        add(statement.moduleSpecifier, ["*"]);
      } else if (bindings) {
        const names = bindings.elements
          .filter((e) => !e.isTypeOnly)
          .map((e) => (e.propertyName ?? e.name).text);
        add(statement.moduleSpecifier, names);
      }
    } else if (ts.isExportDeclaration(statement) && !statement.isTypeOnly) {
      const clause = statement.exportClause;
      const names =
        clause && ts.isNamedExports(clause)
          ? clause.elements.filter((e) => !e.isTypeOnly).map((e) => (e.propertyName ?? e.name).text)
          : ["*"];
      add(statement.moduleSpecifier, names);
    }
  }
  return out;
}

let coreLinks: Promise<Map<string, CoreLink>> | null = null;
const linksOnce = () => {
  coreLinks ??= findCoreLinks();
  return coreLinks;
};

/** The core build: bundle.js also exports each link's names under their aliases. */
export const exportCoreLinks: Plugin = {
  name: "export-core-links",
  setup(build) {
    build.onLoad({ filter: /src[\\/]bundle\.ts$/ }, async (args) => {
      const lines = [...(await linksOnce()).values()].map((link) => {
        const from = `./${relative("src", link.path).replace(/\.ts$/, "")}`;
        const names = link.names.map((name) => `${name} as ${link.alias}${name}`);
        return `export { ${names.join(", ")} } from ${JSON.stringify(from)};`;
      });
      return {
        contents: `${readFileSync(args.path, "utf8")}\n${lines.join("\n")}\n`,
        loader: "ts",
      };
    });
  },
};

/** The memory build: each link becomes its names imported from "./bundle.js". */
export const importCoreLinks: Plugin = {
  name: "import-core-links",
  setup(build) {
    build.onResolve({ filter: /^\.\.?\// }, async (args) => {
      if (args.namespace === "core-link") return { path: "./bundle.js", external: true };
      const path = sourceOf(args.importer, args.path);
      if (!path) return undefined;
      return (await linksOnce()).has(path) ? { path, namespace: "core-link" } : undefined;
    });
    build.onLoad({ filter: /.*/, namespace: "core-link" }, async (args) => {
      const link = (await linksOnce()).get(args.path);
      if (!link) throw new Error(`import-core-links: no link ${args.path}`);
      const names = link.names.map((name) => `${link.alias}${name} as ${name}`);
      return { contents: `export { ${names.join(", ")} } from "./bundle.js";`, loader: "js" };
    });
  },
};
