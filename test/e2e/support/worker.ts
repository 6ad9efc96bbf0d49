/**
 * Starts a Worker of this repository (the demo agent, examples/demo-agent.ts, configured by
 * wrangler.toml, or any other by its wrangler config) as a real local Worker: workerd,
 * Durable Objects with SQLite in memory, a free port on 127.0.0.1. Works offline.
 *
 * The files that are about wrangler itself run `wrangler dev` (dev-server.ts) or
 * `unstable_startWorker` (`startWranglerWorker`, for the packed package in a user's
 * project). The others need a Worker, not wrangler: they get the same Worker through the
 * Miniflare wrangler runs, configured from the same wrangler config by wrangler's own
 * `unstable_getMiniflareWorkerOptions`, and bundled once per config and Node process. A
 * start through wrangler also bundled the Worker again and ran a second workerd for its
 * proxy: about 1.2 CPU-s more per start, 21 starts a run.
 */
// @ts-nocheck -- Node-only support (the repository has no @types/node).

import { mkdtempSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { build } from "esbuild";
import { unstable_getMiniflareWorkerOptions, unstable_startWorker } from "wrangler";

export interface DemoAgent {
  /** Origin of the running worker, e.g. `http://127.0.0.1:40123` (no trailing slash). */
  baseUrl: string;
  stop(): Promise<void>;
}

/**
 * @param chunkDelayMs pause between the echo's streamed words (DEMO_CHUNK_DELAY_MS);
 *   small but non-zero, so streamed chunks really cross the wire one by one.
 */
export async function startDemoAgent(chunkDelayMs = 5): Promise<DemoAgent> {
  return startWorker("wrangler.toml", { DEMO_CHUNK_DELAY_MS: String(chunkDelayMs) });
}

/** wrangler's own Miniflare (and so its workerd), not whichever copy npm hoisted. */
const { Miniflare, convertV4MiniflareOptions } = createRequire(
  createRequire(import.meta.url).resolve("wrangler"),
)("miniflare");

/** The bundles of this Node process, by entry point: each is built once. */
const bundles = new Map<string, Promise<string>>();

/** Bundles a Worker's entry for workerd, as wrangler does (its `define`s, workerd's conditions). */
function bundleOnce(main: string, define: Record<string, string>): Promise<string> {
  const key = `${main}\n${JSON.stringify(define)}`;
  let bundled = bundles.get(key);
  if (!bundled) {
    bundled = (async () => {
      const outfile = join(mkdtempSync(join(tmpdir(), "edgelink-worker-")), "worker.mjs");
      await build({
        entryPoints: [main],
        outfile,
        bundle: true,
        format: "esm",
        platform: "browser",
        conditions: ["workerd", "worker", "browser"],
        external: ["cloudflare:*", "node:*"],
        define,
        logLevel: "error",
      });
      return outfile;
    })();
    bundles.set(key, bundled);
    // A failed build is not kept: the next caller sees its own error.
    bundled.catch(() => bundles.delete(key));
  }
  return bundled;
}

/** A config path from the repository root (or absolute) as an absolute path. */
function configPath(config: string): string {
  return config.startsWith("/")
    ? config
    : decodeURIComponent(new URL(`../../../${config}`, import.meta.url).pathname);
}

/**
 * Starts any worker of this repository by its wrangler config (a path from the repo
 * root), with `vars` as plain-text bindings (they override the config's [vars]).
 */
export async function startWorker(
  config: string,
  vars: Record<string, string> = {},
  port = 0,
): Promise<DemoAgent> {
  const path = configPath(config);
  // Module rules are for wrangler's bundler; the bundle below is one module.
  const { workerOptions, define, main } = unstable_getMiniflareWorkerOptions(path);
  const { modulesRules: _, ...worker } = workerOptions;
  if (!main) throw new Error(`${config} names no main module`);
  const scriptPath = await bundleOnce(main, define);
  // wrangler's options are Miniflare's v4 shape; wrangler converts them the same way.
  const options = convertV4MiniflareOptions({
    host: "127.0.0.1",
    port,
    // No download of the `Request.cf` object: the tests run offline.
    cf: false,
    workers: [
      {
        ...worker,
        modules: true,
        scriptPath,
        modulesRoot: dirname(scriptPath),
        bindings: { ...workerOptions.bindings, ...vars },
      },
    ],
  });
  const mf = new Miniflare(options);
  try {
    const url = await mf.ready;
    return { baseUrl: url.origin, stop: () => mf.dispose() };
  } catch (error) {
    await mf.dispose();
    throw error;
  }
}

/**
 * Starts a Worker with wrangler's `unstable_startWorker` (wrangler bundles it and runs it
 * behind its proxy), as a user's project runs under wrangler: for the packed package.
 */
export async function startWranglerWorker(
  config: string,
  vars: Record<string, string> = {},
): Promise<DemoAgent> {
  // wrangler logs every request at "info"; keep test output readable unless asked for.
  process.env.WRANGLER_LOG ??= "warn";
  const bindings = Object.fromEntries(
    Object.entries(vars).map(([name, value]) => [name, { type: "plain_text" as const, value }]),
  );
  const worker = await unstable_startWorker({
    config: configPath(config),
    bindings,
    dev: {
      server: { hostname: "127.0.0.1", port: 0 },
      inspector: false,
      persist: false,
      watch: false,
    },
  });
  try {
    await worker.ready;
    const url = await worker.url;
    return { baseUrl: url.origin, stop: () => worker.dispose() };
  } catch (error) {
    await worker.dispose();
    throw error;
  }
}

/** A TCP port free on 127.0.0.1 now (for a Worker whose own origin must be known ahead). */
export async function freePort(): Promise<number> {
  const { createServer } = await import("node:net");
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}
