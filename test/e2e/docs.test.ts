/**
 * The documentation's TypeScript blocks compile against the package's source: every
 * ```ts block of README.md and docs/ is type-checked as a module of its own, importing
 * `edgelink`, `edgelink/client`, ... (mapped to src/). Fragments are marked ```ts ignore.
 */
import { readFileSync } from "node:fs";
import { relative } from "node:path";
import { describe, expect, it } from "vitest";
import { tocPages, withToc } from "../../scripts/docs-toc.mjs";
import { ERROR_TABLE } from "../../src/protocol/errors";
import {
  checkBlocks,
  type DocBlock,
  type DocDiagnostic,
  docFiles,
  repositoryBlocks,
} from "./support/doc-blocks";
import { brokenLinks } from "./support/doc-links";

const REPO = decodeURIComponent(new URL("../../", import.meta.url).pathname).replace(/\/$/, "");

/**
 * A block with a type error, checked in the same program as the real ones (one program
 * is most of the time): it must be reported, at its line.
 */
const BROKEN: DocBlock = {
  file: "docs/broken.md",
  line: 10,
  code: [
    'import { defineAgent } from "edgelink";',
    "",
    'defineAgent({ card: { name: "X", description: "Y" }, maxIterations: "20" });',
  ].join("\n"),
  ignored: false,
};

describe("documentation code blocks", () => {
  const blocks = repositoryBlocks(REPO);
  const checked = blocks.filter((b) => !b.ignored);
  let diagnostics: DocDiagnostic[] | undefined;
  const check = () => {
    diagnostics ??= checkBlocks(REPO, [...checked, BROKEN]);
    return diagnostics;
  };

  it("finds the blocks, and skips only a few fragments", () => {
    expect(checked.length).toBeGreaterThan(20);
    // `ignore` is for real fragments; past this, make the blocks whole instead.
    expect(blocks.filter((b) => b.ignored).length).toBeLessThanOrEqual(5);
  });

  it("type-checks every ts block of README.md and docs/", { timeout: 240_000 }, () => {
    const errors = check().filter((e) => !e.where.startsWith(`${BROKEN.file}:`));
    expect(errors.map((e) => `${e.where}: ${e.message}`)).toEqual([]);
  });

  it("reports a block with a type error, naming the file and line", { timeout: 240_000 }, () => {
    const errors = check().filter((e) => e.where.startsWith(`${BROKEN.file}:`));
    expect(errors.length).toBeGreaterThan(0);
    expect(errors[0]?.where).toBe("docs/broken.md:13");
    expect(errors[0]?.message).toMatch(/maxIterations|number/);
  });
});

describe("documentation pages", () => {
  const files = [
    ...docFiles(REPO).map((path) => relative(REPO, path)),
    "CONTRIBUTING.md",
    "bench/README.md",
  ];

  it("links only to files and headings that exist", () => {
    expect(brokenLinks(REPO, files)).toEqual([]);
  });

  it("has an up-to-date table of contents on every page (node scripts/docs-toc.mjs)", () => {
    const stale = tocPages(REPO).filter((page) => {
      const text = readFileSync(page, "utf8");
      return withToc(text) !== text;
    });
    expect(stale.map((page) => relative(REPO, page))).toEqual([]);
  });

  it("lists every error of the error table with its JSON-RPC code and HTTP status", () => {
    const errors = readFileSync(`${REPO}/docs/reference/errors.md`, "utf8");
    // Cells as Biome pads them: a row's first three cells, whatever the column widths.
    const rows = errors
      .split("\n")
      .map((line) => line.split("|").map((cell) => cell.trim()))
      .map((cells) => cells.slice(1, 4).join(" | "));
    for (const [kind, { code, http }] of Object.entries(ERROR_TABLE)) {
      expect(rows, kind).toContain(`\`${kind}\` | ${code} | ${http}`);
    }
  });

  it("says the Node version that package.json's engines admit, and why npm warns on it", () => {
    const readme = readFileSync(`${REPO}/README.md`, "utf8");
    const pkg = JSON.parse(readFileSync(`${REPO}/package.json`, "utf8"));
    const said = /Node (\d+) or newer is enough/.exec(readme)?.[1];
    expect(said).toBeDefined();
    // engines is a lower bound on the major version: ">=N".
    const floor = /^>=(\d+)$/.exec(pkg.engines.node)?.[1];
    expect(floor, pkg.engines.node).toBe(said);
    // The dev tools' own engines still warn on that Node: the README says so.
    expect(readme).toContain("EBADENGINE");
  });

  it("keeps catalogue codes out of the prose", () => {
    const found = files.flatMap((file) =>
      readFileSync(`${REPO}/${file}`, "utf8")
        .split("\n")
        .map((line, i) => ({ where: `${file}:${i + 1}`, line }))
        .filter(({ line }) =>
          /\([A-N]\d{1,2}([,–-] ?[A-N]?\d{1,2})*\)|\b[A-N]\d{1,2}\/[A-N]\d{1,2}\b/.test(line),
        ),
    );
    expect(found).toEqual([]);
  });
});
