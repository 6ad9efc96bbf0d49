/**
 * What one call to the tenant index's `upsert` costs in instructions (callgrind, as
 * bench/instructions.mjs counts them): calls of 1 and 24 rows, new tasks and tasks moved
 * to a later update, one at a time into one index object, each call the Worker's request,
 * the RPC, the statements and their commit. Takes checkouts to compare (default: this one):
 *
 *   node bench/index-calls.mjs [calls per sample] [rounds] [checkout...]
 *
 * e.g. `git archive main | tar -x -C /tmp/base`, `ln -s $PWD/node_modules /tmp/base/`,
 * then `node bench/index-calls.mjs 20 3 /tmp/base .`. Each checkout's own IndexObject is
 * served (its worker is written into its bench/ for the run). Warm-up: 150 calls of each
 * kind first, so the samples measure the compiled code a busy index object runs. Needs
 * `valgrind`.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

const calls = Number(process.argv[2] ?? 20);
const rounds = Number(process.argv[3] ?? 3);
const checkouts = process.argv.slice(4).map((c) => resolve(c));
if (checkouts.length === 0) checkouts.push(resolve("."));
const WARM = 150;

const WORKER = `
import { IndexObject, type IndexRow } from "../src/index/index-object";
export class BenchIndex extends IndexObject<unknown> {}
interface Env { EDGELINK_INDEX: DurableObjectNamespace }
type Rpc = { upsert(rows: IndexRow[]): Promise<void> };
let tick = 0;
const at = () => new Date(Date.UTC(2026, 0, 1) + ++tick).toISOString();
/** Rows sent and not moved yet, oldest first: a move call takes the first ones. */
const pool: IndexRow[] = [];
export default {
  async fetch(request: Request, env: Env): Promise<Response> {
    const url = new URL(request.url);
    const n = Number(url.searchParams.get("rows") ?? "1");
    const ns = env.EDGELINK_INDEX;
    const index = ns.get(ns.idFromName("index/bench")) as unknown as Rpc;
    let rows: IndexRow[];
    if (url.pathname === "/new") {
      rows = Array.from({ length: n }, (_, i) => {
        const when = at();
        return { taskId: \`t-\${crypto.randomUUID()}\`, contextId: \`c-\${i % 4}\`, state: "working", createdAt: when, updatedAt: when };
      });
      pool.push(...rows);
    } else {
      rows = pool.splice(0, n).map((r) => ({ ...r, state: "completed", updatedAt: at() }));
      if (rows.length < n) return new Response("no rows left to move", { status: 500 });
    }
    await index.upsert(rows);
    return new Response("ok");
  },
};
`;

const KINDS = [
  ["new 1", "/new?rows=1"],
  ["moved 1", "/moved?rows=1"],
  ["new 24", "/new?rows=24"],
  ["moved 24", "/moved?rows=24"],
];

const median = (xs) => [...xs].sort((a, b) => a - b)[(xs.length - 1) >> 1];

/** Medians per kind (instructions per call) for one checkout's IndexObject. */
async function measure(checkout) {
  const { callgrindInto, cleanupTempDirs, runWorkerdUnder, startWorkerd } = await import(
    join(checkout, "bench", "servers.mjs")
  );
  const entry = join(checkout, "bench", ".index-calls-worker.ts");
  writeFileSync(entry, WORKER);
  const dir = mkdtempSync(join(tmpdir(), "edgelink-index-calls-"));
  runWorkerdUnder(dir, callgrindInto(dir));
  const server = await startWorkerd(entry, { EDGELINK_INDEX: "BenchIndex" });
  try {
    const pid = readdirSync(dir)
      .filter((f) => f.startsWith("vg."))
      .map((f) => f.split(".")[1])
      .at(-1);
    const control = (...args) =>
      execFileSync("callgrind_control", [...args, String(pid)], { stdio: "pipe" });
    const base = server.url.replace(/\/$/, "");
    const sample = async (path, count) => {
      control("--zero");
      for (let i = 0; i < count; i++) {
        const response = await fetch(`${base}${path}`, { method: "POST" });
        if (!response.ok) throw new Error(`${path}: ${await response.text()}`);
      }
      control("--dump");
      const dumps = readdirSync(dir)
        .filter((f) => f.startsWith(`cg.${pid}.out.`))
        .sort((a, b) => Number(a.split(".").at(-1)) - Number(b.split(".").at(-1)));
      const text = readFileSync(join(dir, dumps.at(-1)), "utf8");
      const total = Number(/^(?:summary|totals): (\d+)/m.exec(text)?.[1]);
      if (!(total > 0)) throw new Error("callgrind wrote no total");
      return total / count;
    };
    for (const [, path] of KINDS) await sample(path, WARM);
    const results = Object.fromEntries(KINDS.map(([kind]) => [kind, []]));
    for (let round = 0; round < rounds; round++) {
      for (const [kind, path] of KINDS) results[kind].push(await sample(path, calls));
    }
    return results;
  } finally {
    await server.stop();
    cleanupTempDirs();
    rmSync(entry, { force: true });
    rmSync(dir, { recursive: true, force: true });
  }
}

try {
  execFileSync("valgrind", ["--version"], { stdio: "ignore" });
} catch {
  console.error("bench/index-calls.mjs needs valgrind (apt-get install valgrind)");
  process.exit(2);
}
console.log(
  `instructions per IndexObject.upsert call (callgrind, whole workerd process), ${calls} calls per sample, ${rounds} samples`,
);
for (const checkout of checkouts) {
  const results = await measure(checkout);
  console.log(`  ${checkout}`);
  for (const [kind] of KINDS) {
    const xs = results[kind];
    console.log(
      `    ${kind.padEnd(9)} median ${(median(xs) / 1e3).toFixed(0)} K   samples ${xs.map((x) => (x / 1e3).toFixed(0)).join(" ")}`,
    );
  }
}
