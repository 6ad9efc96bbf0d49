/**
 * Starts the demo agent (examples/demo-agent.ts, configured by wrangler.toml) as a real
 * local Worker with wrangler's `unstable_startWorker`: workerd, Durable Objects in memory,
 * a free port on 127.0.0.1. Works offline (under vitest NODE_ENV=test, so miniflare does
 * not try to download the `Request.cf` object).
 */
import { unstable_startWorker } from "wrangler";

// Node's `process` (the repo has no @types/node; only `env` is used here).
declare const process: { env: Record<string, string | undefined> };

export interface DemoAgent {
  /** Origin of the running worker, e.g. `http://127.0.0.1:40123` (no trailing slash). */
  baseUrl: string;
  stop(): Promise<void>;
}

/** wrangler.toml at the repository root, whatever the working directory. */
const CONFIG_PATH = decodeURIComponent(new URL("../../../wrangler.toml", import.meta.url).pathname);

/**
 * @param chunkDelayMs pause between the echo's streamed words (DEMO_CHUNK_DELAY_MS);
 *   small but non-zero, so streamed chunks really cross the wire one by one.
 */
export async function startDemoAgent(chunkDelayMs = 5): Promise<DemoAgent> {
  return startWorker(CONFIG_PATH, { DEMO_CHUNK_DELAY_MS: String(chunkDelayMs) });
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
  // wrangler logs every request at "info"; keep test output readable unless asked for.
  process.env.WRANGLER_LOG ??= "warn";
  const path = config.startsWith("/")
    ? config
    : decodeURIComponent(new URL(`../../../${config}`, import.meta.url).pathname);
  const bindings = Object.fromEntries(
    Object.entries(vars).map(([name, value]) => [name, { type: "plain_text" as const, value }]),
  );
  const worker = await unstable_startWorker({
    config: path,
    bindings,
    dev: {
      server: { hostname: "127.0.0.1", port },
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
