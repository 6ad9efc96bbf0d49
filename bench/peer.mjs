/**
 * The four-way comparison of `npm run bench` (`BENCH_ONLY=peer`): the minimal durable
 * floor (a), the SDK in a plain Durable Object (e), the on-platform peer built as
 * cloudflare/agents' A2A example builds it (p, bench/peer-worker.ts) and Edgelink (b),
 * under the same load in the same interleaved run. Per scenario the median over the
 * measured rounds of its throughput and its workerd CPU per message, the instructions one
 * message costs (bench/wire-instructions.mjs) and the SQLite pages it writes
 * (bench/wal-pages.mjs); then Edgelink against the peer and against the floor.
 */

/** The scenarios of the comparison, in the order they are printed. */
export const PEER_KEYS = ["a", "e", "p", "b"];

/** Which server of bench/wal-pages.mjs each scenario is. */
export const PEER_WAL_KINDS = { a: "floor", e: "alternative", p: "peer", b: "edgelink" };

/** The middle value (the mean of the two middle ones for an even count); NaN when empty. */
export function median(values) {
  const sorted = values.filter(Number.isFinite).sort((x, y) => x - y);
  if (sorted.length === 0) return NaN;
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

/**
 * Medians per scenario: `results` maps a scenario key to its load's `result()`, `pages`
 * maps it to its pages per message and `instructions` to its instructions per message
 * (either null when not counted).
 */
export function peerFigures(results, pages, instructions = null) {
  const figures = {};
  for (const key of PEER_KEYS) {
    const r = results[key];
    if (!r) continue;
    figures[key] = {
      rps: median(r.slices.map((s) => s.rps)),
      cpuMs: median(r.slices.map((s) => s.serverCpuMsPerRequest)),
      rounds: r.slices.map((s) => s.rps),
      pages: pages?.[key] ?? NaN,
      instructions: instructions?.[key] ?? NaN,
    };
  }
  return figures;
}

const fmt = (n, digits = 1) => (Number.isFinite(n) ? n.toFixed(digits) : "-");

/** Prints the comparison's table and ratios; `labels` maps a key to its scenario's label. */
export function printPeerComparison(figures, labels, say) {
  const rows = PEER_KEYS.filter((key) => figures[key]);
  if (rows.length < PEER_KEYS.length) return;
  const rounds = figures.b.rounds.length;
  console.log(`\nThe on-platform peer (medians of ${rounds} rounds)`);
  const head = `${"scenario".padEnd(49)}${"msg/s".padStart(8)}${"CPU ms/msg".padStart(12)}${"M instr/msg".padStart(13)}${"WAL pages/msg".padStart(15)}   rounds, msg/s`;
  console.log(head);
  console.log("-".repeat(head.length));
  for (const key of rows) {
    const f = figures[key];
    console.log(
      `${labels[key].padEnd(49)}${fmt(f.rps, 0).padStart(8)}${fmt(f.cpuMs, 2).padStart(12)}${fmt(f.instructions / 1e6, 3).padStart(13)}${fmt(f.pages, 1).padStart(15)}   ${f.rounds.map((v) => fmt(v, 0)).join(" ")}`,
    );
  }
  const { a, p, b } = figures;
  const ratios = (x, name) =>
    `throughput ${fmt(b.rps / x.rps, 2)}×, CPU per message ${fmt(b.cpuMs / x.cpuMs, 2)}×, instructions per message ${fmt(b.instructions / x.instructions, 2)}×, WAL pages per message ${fmt(b.pages / x.pages, 2)}× ${name}'s`;
  console.log("");
  say(`Edgelink/peer   (b)/(p): ${ratios(p, "the peer")}.`, "  ", "                           ");
  say(`Edgelink/floor  (b)/(a): ${ratios(a, "the floor")}.`, "  ", "                           ");
  say(
    "The peer keeps what the alternative (e) keeps, each task one JSON row, plus the Agent's own tables; it answers through the Agent's fetch and onRequest after getAgentByName's start-up RPC. Edgelink also keeps the conversation history, the event log and the tenant index.",
  );
}
