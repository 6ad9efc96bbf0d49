/**
 * Loads the packages' own modules (under node_modules) for the workerd runners without
 * source maps.
 *
 * Every module a workerd runner imports crosses a WebSocket from the Vitest process with its
 * source map inlined as base64, the original source included: for a package module that was
 * its map from node_modules (read from disk, combined with Vite's own) and four fifths of
 * the bytes (zod's `schemas.js`: 120 KB of code, 530 KB of map), serialized, sent and parsed
 * once per runner. A failing test's stack is still mapped in its own files and in src/; the
 * frames inside a package keep the positions of the package's published JavaScript.
 *
 * A map of `{ mappings: "" }` is Vite's "no source map": it survives the later transforms
 * and the module runner's own, and Vitest inlines nothing for it.
 */
import { readFile } from "node:fs/promises";

/** The package modules this plugin loads: plain JavaScript files under node_modules. */
const DEPENDENCY = /\/node_modules\/.*\.[cm]?js$/;

/** A trailing `//# sourceMappingURL=...` line, which points at the map left out. */
const MAP_COMMENT = /\n\/\/# sourceMappingURL=[^\n]*\s*$/;

/** @returns {import("vite").Plugin} */
export function noDependencySourceMaps() {
  return {
    name: "edgelink-no-dependency-source-maps",
    enforce: "pre",
    async load(id) {
      if (id.startsWith("\0") || id.includes("?") || !DEPENDENCY.test(id)) return undefined;
      const code = await readFile(id, "utf8");
      return { code: code.replace(MAP_COMMENT, "\n"), map: { mappings: "" } };
    },
  };
}
