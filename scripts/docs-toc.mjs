#!/usr/bin/env node
/**
 * Writes the table of contents at the top of every page under docs/ (docs/README.md, the
 * index, excepted), between `<!-- toc -->` and `<!-- /toc -->`, placed after the page's
 * first paragraph. `node scripts/docs-toc.mjs` rewrites the pages; `--check` only says
 * which are out of date (and exits 1), as the docs test does.
 */
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";

const START = "<!-- toc -->";
const END = "<!-- /toc -->";

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens. */
export function slug(heading) {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\- _]/gu, "")
    .replace(/ /g, "-");
}

/** The `##` and `###` headings of a Markdown text (outside code fences), in order. */
export function headings(text) {
  const out = [];
  let fence = false;
  const seen = new Map();
  for (const line of text.split("\n")) {
    if (/^(```|~~~)/.test(line)) fence = !fence;
    if (fence) continue;
    const match = /^(#{1,6}) (.*)$/.exec(line);
    if (!match) continue;
    const base = slug(match[2]);
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    out.push({
      level: match[1].length,
      title: match[2],
      anchor: count ? `${base}-${count}` : base,
    });
  }
  return out;
}

/** The contents list of a page: its `##` and `###` headings, linked. */
export function tocOf(text) {
  const withoutToc = stripToc(text);
  return headings(withoutToc)
    .filter((h) => (h.level === 2 || h.level === 3) && h.title !== "Contents")
    .map((h) => `${"  ".repeat(h.level - 2)}- [${h.title.replace(/`/g, "`")}](#${h.anchor})`)
    .join("\n");
}

function stripToc(text) {
  const start = text.indexOf(START);
  if (start < 0) return text;
  const end = text.indexOf(END, start);
  return text.slice(0, start) + text.slice(end + END.length).replace(/^\n+/, "");
}

/** The page with its contents written after the first paragraph (none for one heading). */
export function withToc(text) {
  const bare = stripToc(text).replace(/\n{3,}/g, "\n\n");
  const toc = tocOf(bare);
  if (toc.split("\n").length < 2) return bare;
  const lines = bare.split("\n");
  // After the title, and after the first paragraph when there is one before a heading.
  let at = 1;
  while (at < lines.length && lines[at]?.trim() === "") at++;
  if (at < lines.length && !/^(#|```|\||- )/.test(lines[at] ?? "")) {
    while (at < lines.length && lines[at]?.trim() !== "") at++;
  } else {
    at = 1;
  }
  const block = ["", START, "## Contents", "", toc, END, ""];
  const out = [...lines.slice(0, at), ...block, ...lines.slice(at)].join("\n");
  return out.replace(/\n{3,}/g, "\n\n");
}

/** Every page that gets a table of contents. */
export function tocPages(repo) {
  const pages = [];
  const walk = (dir) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith(".md") && path !== join(repo, "docs", "README.md")) {
        pages.push(path);
      }
    }
  };
  walk(join(repo, "docs"));
  return pages.sort();
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const repo = join(new URL(".", import.meta.url).pathname, "..");
  const check = process.argv.includes("--check");
  const stale = [];
  for (const page of tocPages(repo)) {
    const text = readFileSync(page, "utf8");
    const next = withToc(text);
    if (next === text) continue;
    stale.push(relative(repo, page));
    if (!check) writeFileSync(page, next);
  }
  if (check && stale.length) {
    console.error(
      `Out-of-date tables of contents (run node scripts/docs-toc.mjs):\n${stale.join("\n")}`,
    );
    process.exit(1);
  }
  if (!check) console.log(stale.length ? `Updated ${stale.join(", ")}` : "Up to date");
}
