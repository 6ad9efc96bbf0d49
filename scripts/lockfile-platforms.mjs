#!/usr/bin/env node
/**
 * Run after `npm install` changes package-lock.json. The registry these machines reach
 * serves only linux builds of platform-specific packages, so npm leaves the other
 * platforms' optional binaries (biome, workerd, ...) out of the lockfile, and `npm ci`
 * then refuses it ("Missing: @biomejs/cli-darwin-arm64 from lock file"). This records
 * each missing optional binary with its os/cpu, so npm ci skips it on linux and any
 * other platform installs it from the public registry.
 *
 *   node scripts/lockfile-platforms.mjs && npm ci   # check it took
 */
import { readFileSync, writeFileSync } from "node:fs";

const PLATFORMS = [
  [/-android-arm64$/, ["android"], ["arm64"]],
  [/-android-x64$/, ["android"], ["x64"]],
  [/-darwin-arm64$/, ["darwin"], ["arm64"]],
  [/-darwin-(x64|64)$/, ["darwin"], ["x64"]],
  [/-linux-arm64-musl$/, ["linux"], ["arm64"], ["musl"]],
  [/-linux-x64-musl$/, ["linux"], ["x64"], ["musl"]],
  [/-linux-arm64$/, ["linux"], ["arm64"], ["glibc"]],
  [/-linux-(x64|64)$/, ["linux"], ["x64"], ["glibc"]],
  [/-win32-arm64$/, ["win32"], ["arm64"]],
  [/-(win32-x64|windows-64)$/, ["win32"], ["x64"]],
];

/**
 * Any other `<name>-<os>-<cpu>[-<abi>]` binary package (rollup names every platform this
 * way: linux-riscv64-gnu, win32-ia32-msvc, android-arm-eabi, ...).
 */
function parsePlatform(dep) {
  const m =
    /-(android|darwin|freebsd|linux|netbsd|openbsd|openharmony|sunos|aix|win32)-(arm64|arm|x64|ia32|loong64|ppc64|riscv64|s390x)(?:-(gnu|gnueabihf|musl|musleabihf|msvc|eabi))?$/.exec(
      dep,
    );
  if (!m) return undefined;
  const libc = m[3]?.startsWith("gnu")
    ? ["glibc"]
    : m[3]?.startsWith("musl")
      ? ["musl"]
      : undefined;
  return [null, [m[1]], [m[2]], libc];
}

const lock = JSON.parse(readFileSync("package-lock.json", "utf8"));
const packages = lock.packages;
const added = [];
for (const [path, meta] of Object.entries(packages)) {
  for (const [dep, version] of Object.entries(meta.optionalDependencies ?? {})) {
    // Where Node would resolve `dep` from `path`: nearest node_modules upwards.
    const candidates = [];
    for (
      let p = path;
      ;
      p = p.includes("/node_modules/") ? p.slice(0, p.lastIndexOf("/node_modules/")) : ""
    ) {
      candidates.push(`${p ? `${p}/` : ""}node_modules/${dep}`);
      if (!p) break;
    }
    const resolved = candidates.find((c) => packages[c]);
    if (resolved && packages[resolved].version === version) continue;
    const platform = PLATFORMS.find(([pattern]) => pattern.test(dep)) ?? parsePlatform(dep);
    if (!platform) continue;
    const [, os, cpu, libc] = platform;
    // Next to the package that wants it when the hoisted copy has another version.
    const at = resolved ? candidates[0] : candidates.at(-1);
    packages[at] = { version, dev: true, optional: true, os, cpu, ...(libc ? { libc } : {}) };
    added.push(`${at}@${version}`);
  }
}
const { "": root, ...rest } = packages;
lock.packages = {
  "": root,
  ...Object.fromEntries(Object.entries(rest).sort(([a], [b]) => a.localeCompare(b))),
};
writeFileSync("package-lock.json", `${JSON.stringify(lock, null, 2)}\n`);
console.log(added.length ? `recorded:\n  ${added.join("\n  ")}` : "nothing missing");
