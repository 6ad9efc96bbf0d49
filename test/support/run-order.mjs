/**
 * The order `npm test` starts its files in (vitest's `sequence.sequencer`, in the Node process
 * that schedules the run). Vitest's own order is by project name, then by the last run's
 * durations (a bare clone has none: by file size). On 2 cores that started the short `agents`
 * project first and the `edgelink init` tests, the longest chain of the run (pack, install, the
 * new project's own tests, several wrangler dev servers), minutes in, so the run ended on it
 * alone. Here the longest chains start at once, then the small workerd projects, then the short
 * end-to-end files, then the `workers` project (most of the CPU).
 *
 * Within each step vitest's order is kept. A runner (a Node process with wrangler imported, or
 * one workerd with the framework imported) is kept for the next file only when that file is of
 * the same project, so each project's files stay together: with the short end-to-end files
 * last, as before, three more Node processes started and imported everything again (about
 * 20 s of CPU). The end-to-end files mostly wait, and `.ci/run` runs the type check, lint and
 * API report beside them; the `workers` project then keeps both cores busy to the end.
 *
 * Every slot that takes a file of a project the slot's last file was not of starts a runner
 * of its own (a workerd importing the framework again, 3 to 4 CPU-s). The small harness
 * projects (4 to 15 files, seconds each) used to come last, after `workers`, where all four
 * slots free up within seconds of each other: each got about four runners. Queued right
 * after the longest end-to-end files, they run while those hold most slots for minutes, so
 * one slot takes file after file of the same project on one runner and a second runner
 * starts only when a long file happens to end in the meantime.
 */
import { BaseSequencer } from "vitest/node";
import { FAKE_CLOCK_FILES } from "./fake-clock-files.mjs";

/** End-to-end files that each take a minute or more on a quiet 2-core machine, longest first. */
const LONGEST = [
  // The files on the project `edgelink init` makes (test/e2e/support/installed.ts): the
  // first to ask packs and installs it (minutes), once, while the others wait. The longest
  // of them (the new projects' own type checks and tests) asks first; the next two start
  // as cli, docs or sdk-interop ends, near when the project is ready, so that few slots
  // wait on it while the cores have work. The package test copies that install too: it
  // comes after the inspector, when the project is ready, instead of holding a slot idle
  // from the start.
  "test/e2e/init.test.ts",
  "test/e2e/cli.test.ts",
  "test/e2e/docs.test.ts",
  "test/e2e/sdk-interop.test.ts",
  "test/e2e/init.mistakes.test.ts",
  "test/e2e/init.guides.test.ts",
  "test/e2e/inspector.test.ts",
  "test/e2e/package.test.ts",
  "test/e2e/lifecycle.test.ts",
];

/**
 * `workers` files that spend seconds waiting (index windows, stream keep-alives), first in
 * their project: started last, they ran into the run's tail with the cores idle.
 */
const WAITING = [
  "test/index/index-outbox.read-your-writes.test.ts",
  "test/conversation/runs/task-stream.test.ts",
  "test/index/index-outbox.test.ts",
  "test/conversation/retried-messages.test.ts",
];

/**
 * `workers` files that each take seconds of CPU, started with the waiting ones: by file size
 * (vitest's order on a bare clone) the fuzz test came last and ran alone for its 10 s at the
 * run's end, one core idle.
 */
const HEAVY = [
  "test/worker/app/app.fuzz.test.ts",
  "test/conversation/tasks/task-store.test.ts",
  "test/conversation/context-object.no-read-storage.test.ts",
  "test/worker/a2a/jsonrpc.test.ts",
  "test/conversation/history/history-store.test.ts",
];

/** The small harness projects, started right after the longest end-to-end files, most files first. */
const HARNESS = ["memory", "llm", "agents", "registry"];

export default class LongestFirst extends BaseSequencer {
  /**
   * @param {import("vitest/node").TestSpecification[]} files
   * @returns {Promise<import("vitest/node").TestSpecification[]>}
   */
  async sort(files) {
    const sorted = await super.sort(files);
    const root = `${this.ctx.config.root.replace(/\/$/, "")}/`;
    /** @param {import("vitest/node").TestSpecification} spec */
    const rank = (spec) => {
      const lead = LONGEST.indexOf(spec.moduleId.replace(root, ""));
      if (lead !== -1) return lead;
      const file = spec.moduleId.replace(root, "");
      const clock = FAKE_CLOCK_FILES.indexOf(file);
      // Within a workerd project, its files with a fake clock first, in their list's order.
      const first = clock === -1 ? 0.5 : (0.5 * clock) / FAKE_CLOCK_FILES.length;
      const harness = HARNESS.indexOf(spec.project.name);
      if (harness !== -1) return LONGEST.length + harness + first;
      // Then the other end-to-end files (and any project not listed), then `workers`: its
      // files with a fake clock (./fake-clock-files.mjs), then its waiting files.
      const after = LONGEST.length + HARNESS.length;
      if (spec.project.name !== "workers") return after;
      if (clock !== -1) return after + 1 + first;
      return after + (WAITING.includes(file) || HEAVY.includes(file) ? 2 : 3);
    };
    // Array.prototype.sort is stable: vitest's order holds within a rank.
    return sorted
      .map((spec, i) => ({ spec, i, rank: rank(spec) }))
      .sort((a, b) => a.rank - b.rank || a.i - b.i)
      .map(({ spec }) => spec);
  }
}
