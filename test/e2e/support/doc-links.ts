/**
 * The documentation's relative links: each names a file that exists and, with `#anchor`,
 * a heading of that file. Pages other work will add are allowed by name (`FORTHCOMING`).
 */
import { existsSync, readFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { headings } from "../../../scripts/docs-toc.mjs";

/** A broken link: where it is and why. */
export interface BrokenLink {
  where: string;
  link: string;
  problem: string;
}

/**
 * Linked from the security model and the index before they exist: their pages are being
 * written alongside. Remove a name once its page is in the tree.
 */
export const FORTHCOMING = new Set<string>([]);

/** Every `[text](target)` outside code, with its line. */
function links(text: string): { line: number; target: string }[] {
  const out: { line: number; target: string }[] = [];
  let fence = false;
  text.split("\n").forEach((line, index) => {
    if (/^(```|~~~)/.test(line)) fence = !fence;
    if (fence) return;
    const bare = line.replace(/`[^`]*`/g, "");
    for (const match of bare.matchAll(/\]\(([^)\s]+)\)/g)) {
      out.push({ line: index + 1, target: match[1] ?? "" });
    }
  });
  return out;
}

/** Checks the relative links of the given Markdown files (paths relative to `repo`). */
export function brokenLinks(repo: string, files: readonly string[]): BrokenLink[] {
  const broken: BrokenLink[] = [];
  const anchors = new Map<string, Set<string>>();
  const anchorsOf = (file: string): Set<string> => {
    let set = anchors.get(file);
    if (!set) {
      set = new Set(headings(readFileSync(join(repo, file), "utf8")).map((h) => h.anchor));
      anchors.set(file, set);
    }
    return set;
  };
  for (const file of files) {
    for (const { line, target } of links(readFileSync(join(repo, file), "utf8"))) {
      if (/^[a-z]+:/i.test(target)) continue; // https:, mailto:
      const [path = "", anchor] = target.split("#");
      const linked = path ? relative(repo, join(repo, dirname(file), path)) : file;
      const where = `${file}:${line}`;
      if (FORTHCOMING.has(linked)) continue;
      if (!existsSync(join(repo, linked))) {
        broken.push({ where, link: target, problem: `no file ${linked}` });
        continue;
      }
      if (anchor && linked.endsWith(".md") && !anchorsOf(linked).has(anchor)) {
        broken.push({ where, link: target, problem: `no heading #${anchor} in ${linked}` });
      }
    }
  }
  return broken;
}
