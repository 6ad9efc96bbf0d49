/**
 * Starting and stopping the servers under test: a worker bundled with esbuild and run
 * on workerd through Miniflare's own listener (not `wrangler dev`, whose proxy would be
 * measured too), and the @a2a-js/sdk server as a child Node process.
 */
import { fork } from "node:child_process";
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { builtinModules, createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, isAbsolute, join } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";
import { convertV4MiniflareOptions, Miniflare } from "miniflare";
import { childPids } from "./load.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const COMPATIBILITY_DATE = "2026-11-01";

/** Every temp dir this process made, so an interrupted run still cleans up. */
const tempDirs = new Set();
export function cleanupTempDirs() {
  for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true });
  tempDirs.clear();
}

/**
 * An esbuild plugin that resolves a bench worker's `../src/...` imports in another
 * checkout: the same worker over that checkout's code, for A/B runs.
 */
const sourcesFrom = (checkout) => ({
  name: "sources-from",
  setup(b) {
    b.onResolve({ filter: /^\.\.\/src\// }, (args) =>
      args.importer.startsWith(here)
        ? b.resolve(`./${args.path.slice(3)}`, { resolveDir: checkout, kind: args.kind })
        : undefined,
    );
  },
});

/**
 * Bare Node built-in imports (`path`, `fs/promises`) as workerd's `node:` modules, as
 * wrangler resolves them under `nodejs_compat`: some packages (the `agents` package's
 * dependencies) import them without the prefix.
 */
const nodeBuiltins = {
  name: "node-builtins",
  setup(b) {
    const bare = new Set(builtinModules.filter((name) => !name.startsWith("_")));
    b.onResolve({ filter: /^[a-z_/]+$/ }, (args) =>
      bare.has(args.path) ? { path: `node:${args.path}`, external: true } : undefined,
    );
  },
};

/**
 * Bundles a TS worker entry (relative to bench/, or absolute) into one ESM module in `dir`;
 * with `srcFrom`, the entry's own `../src/` imports come from that checkout.
 */
async function bundle(entry, dir, srcFrom) {
  const outfile = join(dir, "worker.mjs");
  await build({
    entryPoints: [isAbsolute(entry) ? entry : join(here, entry)],
    plugins: srcFrom ? [sourcesFrom(srcFrom), nodeBuiltins] : [nodeBuiltins],
    outfile,
    bundle: true,
    format: "esm",
    platform: "neutral",
    target: "es2023",
    mainFields: ["module", "main"],
    conditions: ["workerd", "worker", "browser"],
    external: ["cloudflare:*", "node:*"],
    minify: false,
    logLevel: "error",
  });
  return outfile;
}

/**
 * Runs `entry` on workerd with SQLite-backed Durable Objects persisted to a fresh temp
 * dir (on disk, as `wrangler dev` keeps them). Returns { url, pid, stop, ... }.
 * `durableObjects` maps binding name -> exported class name; `options.srcFrom` (a
 * checkout) bundles the entry over that checkout's src/; other options go to Miniflare.
 */
export async function startWorkerd(entry, durableObjects, options = {}) {
  const { srcFrom, ...extraOptions } = options;
  const dir = mkdtempSync(join(process.env.BENCH_TMPDIR || tmpdir(), "edgelink-bench-"));
  tempDirs.add(dir);
  const scriptPath = await bundle(entry, dir, srcFrom);
  const before = new Set(childPids("workerd"));
  const mf = new Miniflare(
    convertV4MiniflareOptions({
      host: "127.0.0.1",
      port: 0,
      modules: true,
      modulesRoot: dir,
      scriptPath,
      compatibilityDate: COMPATIBILITY_DATE,
      compatibilityFlags: ["nodejs_compat"],
      durableObjects: Object.fromEntries(
        Object.entries(durableObjects).map(([binding, className]) => [
          binding,
          { className, useSQLite: true },
        ]),
      ),
      resourcePersistencePath: join(dir, "state"),
      logRequests: false,
      telemetry: { enabled: false },
      // A socket straight into the worker: Miniflare's own entry worker (the hop behind
      // `mf.ready`'s URL) costs ~0.3 ms of workerd CPU per request, which production
      // does not have and which would dilute the Edgelink/floor comparison.
      unsafeDirectSockets: [{ host: "127.0.0.1", port: 0 }],
      ...extraOptions,
    }),
  );
  let url;
  try {
    await mf.ready;
    url = await mf.unsafeGetDirectURL();
  } catch (error) {
    await mf.dispose().catch(() => {});
    throw error;
  }
  return {
    url: url.href,
    pid: childPids("workerd").find((pid) => !before.has(pid)) ?? null,
    miniflare: mf,
    scriptPath,
    stop: async () => {
      await mf.dispose();
      rmSync(dir, { recursive: true, force: true });
      tempDirs.delete(dir);
    },
  };
}

/**
 * Forks bench/sdk-server.mjs and waits for its port. Returns { url, pid, stop, output }.
 * The server's own output is kept (its first 4 KB, see `output()`) rather than printed,
 * so a failing run does not flood the terminal with one stack trace per request.
 */
export function startSdkServer() {
  return new Promise((resolve, reject) => {
    const child = fork(join(here, "sdk-server.mjs"), [], {
      stdio: ["ignore", "pipe", "pipe", "ipc"],
    });
    let output = "";
    const keep = (chunk) => {
      if (output.length < 4096) output += chunk.toString().slice(0, 4096 - output.length);
    };
    child.stdout.on("data", keep);
    child.stderr.on("data", keep);
    const timer = setTimeout(() => {
      child.kill();
      reject(new Error(`the SDK server did not start within 15 s\n${output}`));
    }, 15_000);
    child.once("error", reject);
    child.once("exit", (code) =>
      reject(new Error(`the SDK server exited early (code ${code})\n${output}`)),
    );
    child.once("message", ({ port }) => {
      clearTimeout(timer);
      child.removeAllListeners("exit");
      resolve({
        url: `http://127.0.0.1:${port}/`,
        pid: child.pid,
        output: () => output,
        stop: () =>
          new Promise((done) => {
            if (child.exitCode !== null) return done();
            child.once("exit", () => done());
            child.kill("SIGTERM");
          }),
      });
    });
  });
}

/**
 * Starts a bench agent worker (`turns-worker.ts` or `stream-worker.ts`) with what it
 * needs: the recorded OpenAI stream it replays and a task-id key. `call` posts to its
 * `/bench/run` and throws the worker's error.
 */
export async function startAgentBench(entry, extraOptions = {}) {
  const server = await startWorkerd(
    entry,
    { EDGELINK_CONTEXT: "EdgelinkContext", EDGELINK_INDEX: "EdgelinkIndex" },
    { ...extraOptions, bindings: agentBindings() },
  );
  return { server, call: (body) => benchRun(server, body) };
}

/** The bindings of the bench agent workers. */
export function agentBindings() {
  return {
    RECORDED_SSE: readFileSync(
      new URL("../test/fixtures/providers/openai-chat/text-with-usage.sse", import.meta.url),
      "utf8",
    ),
    EDGELINK_ID_KEY: "bench-only-key-for-signing-task-ids-0123456789",
  };
}

/** POSTs `body` to a bench agent worker's `/bench/run`; its error is thrown. */
export async function benchRun(server, body) {
  const response = await fetch(`${server.url}bench/run`, {
    method: "POST",
    body: JSON.stringify(body),
  });
  const json = await response.json();
  if (!response.ok || json.error) throw new Error(`bench worker: ${json.error}`);
  return json;
}

/**
 * Makes every workerd Miniflare starts from now on run under `command` (valgrind, gdb):
 * Miniflare starts whatever MINIFLARE_WORKERD_PATH names, here a script in `dir`.
 */
export function runWorkerdUnder(dir, command) {
  const workerd = createRequire(import.meta.url)("workerd").default;
  const wrapper = join(dir, "workerd.sh");
  writeFileSync(wrapper, `#!/bin/sh\nexec ${command} ${workerd} "$@"\n`);
  chmodSync(wrapper, 0o755);
  process.env.MINIFLARE_WORKERD_PATH = wrapper;
}

/** The valgrind command that counts instructions into `dir` (cg.PID.out, vg.PID.log). */
export const callgrindInto = (dir) =>
  `valgrind --tool=callgrind --callgrind-out-file=${dir}/cg.%p.out --log-file=${dir}/vg.%p.log`;
