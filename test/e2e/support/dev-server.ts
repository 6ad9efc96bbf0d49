/**
 * `wrangler dev` as a user runs it: a child process in its own process group, on a free
 * port, stopped as a terminal's Ctrl-C stops it or killed with SIGKILL, and started again on
 * the state it left. (`startWorker` in worker.ts is for tests that need a Worker, not its
 * lifecycle.)
 */
// @ts-nocheck -- Node-only test support (the repository has no @types/node).
import { spawn } from "node:child_process";
import { createServer } from "node:net";

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

export interface DevServer {
  baseUrl: string;
  /** Everything wrangler dev printed so far. */
  output(): string;
  /** Ctrl-C: SIGINT to the process group, then waits for it to exit. */
  stop(): Promise<void>;
  /** SIGKILL to the process group: nothing gets to finish or flush. */
  kill(): Promise<void>;
}

export interface DevOptions {
  /** The folder it runs in. */
  cwd: string;
  /** The command and its arguments, before the port arguments (e.g. `npm run dev --`). */
  command: string[];
  /** More environment variables. */
  env?: Record<string, string>;
  /** A port to listen on again (a restart keeps its clients' URLs); a free one if unset. */
  port?: number;
}

/**
 * Starts `wrangler dev` and resolves once it says "Ready on" (90 s at most). A port found
 * free can be taken by another process before wrangler binds it (several dev servers start
 * at once here): then it starts again, on new ports unless the caller named one.
 */
export async function startDev(options: DevOptions): Promise<DevServer> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await startOnce(options);
    } catch (error) {
      const taken = String((error as Error).message).includes("Address already in use");
      if (!taken || attempt === 4) throw error;
      await new Promise((r) => setTimeout(r, 500 * attempt));
    }
  }
}

async function startOnce(options: DevOptions): Promise<DevServer> {
  const port = options.port ?? (await freePort());
  // Its own inspector port too: wrangler's default (9229) is taken by whichever of the
  // dev servers started at once binds it first, and the others fail to start.
  let inspectorPort = await freePort();
  while (inspectorPort === port) inspectorPort = await freePort();
  const [cmd, ...first] = options.command;
  const args = [
    ...first,
    "--port",
    String(port),
    "--ip",
    "127.0.0.1",
    "--inspector-port",
    String(inspectorPort),
  ];
  const child = spawn(cmd, args, {
    cwd: options.cwd,
    // WRANGLER_LOG at info, whatever this process has (the e2e files share one process, and
    // startWorker sets it to warn): "Ready on" is an info line.
    env: {
      ...process.env,
      CI: "1",
      NO_COLOR: "1",
      WRANGLER_SEND_METRICS: "false",
      WRANGLER_LOG: "info",
      ...options.env,
    },
    // Its own process group: stop() ends npm, wrangler and workerd together, and no other.
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  // Settled by the line itself (or the exit), not found by polling the output.
  let ready: (outcome: "ready" | "exited" | "late") => void = () => {};
  const started = new Promise<"ready" | "exited" | "late">((resolve) => {
    ready = resolve;
  });
  const take = (d) => {
    output += d;
    if (output.includes("Ready on")) ready("ready");
  };
  child.stdout.on("data", take);
  child.stderr.on("data", take);
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  exited.then(() => ready("exited"));
  const signal = async (name: "SIGINT" | "SIGKILL") => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    try {
      process.kill(-child.pid, name);
    } catch {
      return;
    }
    await exited;
    if (name === "SIGKILL") return;
    // wrangler may leave workerd to end on its own: wait until the port is free again.
    const deadline = Date.now() + 15_000;
    while (Date.now() < deadline && (await listening(port))) {
      await new Promise((r) => setTimeout(r, 100));
    }
  };
  const server: DevServer = {
    baseUrl: `http://127.0.0.1:${port}`,
    output: () => output,
    stop: () => signal("SIGINT"),
    kill: async () => {
      await signal("SIGKILL");
      // The group's other processes (workerd) die with it; wait until the port is free.
      const deadline = Date.now() + 15_000;
      while (Date.now() < deadline && (await listening(port))) {
        await new Promise((r) => setTimeout(r, 100));
      }
    },
  };
  const late = setTimeout(() => ready("late"), 90_000);
  const outcome = await started;
  clearTimeout(late);
  if (outcome === "ready") return server;
  if (outcome === "exited") throw new Error(`wrangler dev exited:\n${output}`);
  await server.kill();
  throw new Error(`wrangler dev did not start:\n${output}`);
}

/** Whether something accepts connections on 127.0.0.1:port. */
async function listening(port: number): Promise<boolean> {
  const { connect } = await import("node:net");
  return new Promise((resolve) => {
    const socket = connect(port, "127.0.0.1");
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });
}
