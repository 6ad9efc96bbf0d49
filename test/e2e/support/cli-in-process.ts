/**
 * The CLI run inside the test's own process: the same `main(argv)` the `edgelink` command
 * runs (src/cli/run.ts), with Node's process swapped for a stand-in that captures stdout and
 * stderr, has its own env and is never a terminal. A real `edgelink` process costs about 0.2
 * CPU-s to start; the CLI test starts a few to prove the command itself and runs the rest
 * here. Runs are one at a time (the swap is global): an overlapping one fails at once.
 */
import { type NodeProcess, useProcess } from "../../../src/cli/node";
import { main } from "../../../src/cli/run";

declare const process: { env: Record<string, string | undefined>; version: string };

export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

let running = false;

/**
 * Runs the CLI on `args` with `vars` over the test's env (colour variables left out, as for
 * a command whose output is piped); `onStderr` sees stderr as it comes.
 */
export async function cliInProcess(
  args: string[],
  onStderr?: (text: string) => void,
  vars: Record<string, string> = {},
): Promise<CliRun> {
  if (running) throw new Error("cliInProcess: another in-process CLI run is under way");
  running = true;
  const env = { ...process.env, ...vars };
  delete env.NO_COLOR;
  delete env.FORCE_COLOR;
  let stdout = "";
  let stderr = "";
  const stand: NodeProcess = {
    argv: ["node", "edgelink", ...args],
    env,
    stdout: {
      write(chunk, callback) {
        stdout += chunk;
        callback?.();
        return true;
      },
    },
    stderr: {
      write(chunk, callback) {
        stderr += chunk;
        onStderr?.(stderr);
        callback?.();
        return true;
      },
    },
    exitCode: undefined,
    version: process.version,
    // Signals are the real process's: a command that waits for Ctrl-C runs as a process.
    on() {
      throw new Error("cliInProcess: a command that waits for a signal needs a real process");
    },
    exit(code) {
      throw new Error(`cliInProcess: the CLI called exit(${code}) instead of answering it`);
    },
  };
  const previous = useProcess(stand);
  try {
    const code = await main(args);
    return { code, stdout, stderr };
  } finally {
    useProcess(previous);
    running = false;
  }
}
