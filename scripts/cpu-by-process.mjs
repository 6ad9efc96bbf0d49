#!/usr/bin/env node
/**
 * Where a command's CPU goes, by kind of process: runs the command, reads /proc four times a
 * second, and adds each process's CPU time (user + system) to the kind its command line
 * names (workerd, vitest, npm, wrangler, esbuild, tsc, chromium, …). Only the command's own
 * process tree counts: a process is the command's when its parent was, the moment it was
 * first seen, so other work on the machine is left out. A process that lives under a
 * quarter of a second may be missed. The sampler itself costs a few percent of one core
 * (it is not in the tree: compare runs measured the same way).
 *
 *   node scripts/cpu-by-process.mjs bash .ci/run          the CI run, by kind, every 20 s
 *   node scripts/cpu-by-process.mjs --json out.json npm test
 *
 * Linux only (/proc). CPU-s are comparable across runs on a shared machine; wall time is not.
 */
import { spawn } from "node:child_process";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";

const TICKS = 100; // USER_HZ: /proc/<pid>/stat counts CPU time in hundredths of a second
const KINDS = [
  // The binary by its path: a checkout whose folder name holds "workerd" would match all.
  ["workerd", /\/bin\/workerd\b/],
  ["chromium", /chrom/],
  ["tsc", /\btsc\b|typescript|typecheck|declarations\.mjs|api-report|api-extractor/],
  ["biome", /biome/],
  ["esbuild", /esbuild/],
  ["wrangler", /wrangler/],
  ["vitest", /vitest/],
  ["npm", /\bnpm\b|\bnpx\b|npm-cli/],
  ["node", /\bnode\b/],
];
const kindOf = (cmd) => KINDS.find(([, pattern]) => pattern.test(cmd))?.[0] ?? "other";

const args = process.argv.slice(2);
let jsonOut = null;
if (args[0] === "--json") {
  jsonOut = args[1];
  args.splice(0, 2);
}
if (args.length === 0) {
  console.error("usage: node scripts/cpu-by-process.mjs [--json out.json] <command> [args…]");
  process.exit(2);
}

/** pid → { kind, cpu: ticks counted, parent } for the command's tree. */
const tree = new Map();
const started = Date.now();
const byKind = {};
const timeline = [];
let window = {};

const child = spawn(args[0], args.slice(1), { stdio: "inherit" });
tree.set(child.pid, { kind: kindOf(args.join(" ")), cpu: 0 });

function stat(pid) {
  const text = readFileSync(`/proc/${pid}/stat`, "utf8");
  const fields = text.slice(text.lastIndexOf(")") + 2).split(" ");
  return { parent: Number(fields[1]), cpu: Number(fields[11]) + Number(fields[12]) };
}

function sample() {
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    const pid = Number(name);
    try {
      const { parent, cpu } = stat(pid);
      let entry = tree.get(pid);
      if (!entry) {
        if (!tree.has(parent)) continue;
        const cmd = readFileSync(`/proc/${pid}/cmdline`, "utf8").replaceAll("\0", " ");
        entry = { kind: kindOf(cmd), cpu: 0 };
        tree.set(pid, entry);
      }
      const spent = cpu - entry.cpu;
      if (spent > 0) {
        entry.cpu = cpu;
        byKind[entry.kind] = (byKind[entry.kind] ?? 0) + spent;
        window[entry.kind] = (window[entry.kind] ?? 0) + spent;
      }
    } catch {
      // Gone between the listing and the read.
    }
  }
}

const sampler = setInterval(sample, 250);
let windowStart = started;
const closeWindow = () => {
  const now = Date.now();
  timeline.push({
    at: Math.round((now - started) / 1000),
    seconds: (now - windowStart) / 1000,
    cpu: window,
  });
  window = {};
  windowStart = now;
};
const reporter = setInterval(closeWindow, 20_000);

const seconds = (ticks) => (ticks / TICKS).toFixed(1);
child.on("exit", (code, signal) => {
  sample();
  clearInterval(sampler);
  clearInterval(reporter);
  closeWindow();
  const counted = Object.values(byKind).reduce((a, b) => a + b, 0);
  const wall = (Date.now() - started) / 1000;
  const lines = [
    `\n--- CPU by process kind: ${wall.toFixed(0)} s wall`,
    ...Object.entries(byKind)
      .sort((a, b) => b[1] - a[1])
      .map(([kind, ticks]) => `${kind.padEnd(10)} ${seconds(ticks).padStart(7)} CPU-s`),
    `counted ${seconds(counted)} CPU-s in all`,
    "every 20 s (seconds in, busy cores, top kinds):",
    ...timeline.map(({ at, seconds: length, cpu }) => {
      const busy = Object.values(cpu).reduce((a, b) => a + b, 0) / TICKS / length;
      const top = Object.entries(cpu)
        .sort((a, b) => b[1] - a[1])
        .slice(0, 4)
        .map(([kind, ticks]) => `${kind} ${seconds(ticks)}`)
        .join(", ");
      return `  ${String(at).padStart(4)} s  ${busy.toFixed(2)}  ${top}`;
    }),
  ];
  console.error(lines.join("\n"));
  if (jsonOut) writeFileSync(jsonOut, JSON.stringify({ wall, byKind, timeline }, null, 2));
  process.exit(code ?? (signal ? 1 : 0));
});
