/**
 * The `edgelink` CLI against the demo worker: built (src/cli/main.ts bundled to dist/cli.js)
 * and run with plain `node` through its launcher bin/edgelink.mjs where the process is the
 * point (its exit code, piped output, Ctrl-C), and otherwise the same `main` run in this
 * process (support/cli-in-process.ts; a process costs about 0.2 CPU-s to start).
 */
// @ts-nocheck -- Node-only test (the repository has no @types/node).
import { spawn } from "node:child_process";
import { copyFileSync, mkdirSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { build } from "esbuild";
import { exportJWK, generateKeyPair } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cliInProcess } from "./support/cli-in-process";
import { type DemoAgent, freePort, startDemoAgent, startWorker } from "./support/worker";

const ROOT = decodeURIComponent(new URL("../../", import.meta.url).pathname);
let agent: DemoAgent;
let registry: DemoAgent;
/** The demo agent again, signing its card (CARD_SIGNING_KEYS), and that secret. */
let signed: DemoAgent;
let cardKeys: string;
let launcher: string;
/**
 * An agent with long-term memory that wants an API key: the memory commands' two users, and
 * the key of the 401 test (one Worker for both).
 */
let memoryAgent: DemoAgent;
const USER = "cli-memory-user-key-0123456789";
const OTHER = "cli-memory-other-key-0123456789";
const KEY = "cli-auth-key-0123456789abcdef";

beforeAll(async () => {
  const dir = mkdtempSync(join(tmpdir(), "edgelink-cli-"));
  mkdirSync(join(dir, "bin"));
  await build({
    entryPoints: [join(ROOT, "src/cli/main.ts")],
    outfile: join(dir, "dist/cli.js"),
    bundle: true,
    format: "esm",
    platform: "node",
    target: "node20",
    logLevel: "silent",
  });
  copyFileSync(join(ROOT, "bin/edgelink.mjs"), join(dir, "bin/edgelink.mjs"));
  // The launcher imports ../dist/cli.js as ESM: mark the folder as a module package.
  const { writeFileSync } = await import("node:fs");
  writeFileSync(join(dir, "package.json"), '{"type":"module"}');
  launcher = join(dir, "bin/edgelink.mjs");
  agent = await startDemoAgent(10);
  // The registry example (npm run dev:registry), its API key (subject "ops") as `--var`.
  memoryAgent = await startWorker("test/e2e/support/memory.wrangler.toml", {
    AGENT_API_KEYS: `${USER},${OTHER},${KEY}`,
  });
  registry = await startWorker("examples/registry.wrangler.toml", {
    REGISTRY_API_KEYS: JSON.stringify({ "key-ops": { subject: "ops" } }),
  });
  const { privateKey } = await generateKeyPair("ES256", { extractable: true });
  cardKeys = JSON.stringify({ ...(await exportJWK(privateKey)), kid: "cli-card" });
  // Signed for its own origin only: the port is chosen first so the origin is known.
  const port = await freePort();
  signed = await startWorker(
    "wrangler.toml",
    { CARD_SIGNING_KEYS: cardKeys, CARD_SIGNING_ORIGINS: `http://127.0.0.1:${port}` },
    port,
  );
});

afterAll(async () => {
  await agent?.stop();
  await registry?.stop();
  await signed?.stop();
  await memoryAgent?.stop();
});

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs the CLI in this process; `onStderr` sees stderr as it comes. */
const cli = cliInProcess;

/**
 * Runs the `edgelink` command as a process; `onStderr` sees stderr as it comes (to learn a
 * listener's port).
 */
function cliProcess(
  args: string[],
  onStderr?: (text: string) => void,
  vars: Record<string, string> = {},
): Promise<Run> & { kill(): void } {
  const env = { ...process.env, ...vars };
  delete env.NO_COLOR;
  delete env.FORCE_COLOR;
  const child = spawn(process.execPath, [launcher, ...args], { env });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (d) => {
    stdout += d;
  });
  child.stderr.on("data", (d) => {
    stderr += d;
    onStderr?.(stderr);
  });
  const done = new Promise<Run>((resolve) =>
    child.on("close", (code) => resolve({ code, stdout, stderr })),
  );
  return Object.assign(done, { kill: () => child.kill("SIGINT") });
}

const ESC = String.fromCharCode(27);

describe("edgelink CLI against the demo worker", () => {
  // A real process: the bin works, its output is piped (no colours).
  it("card prints the card; --json prints it as JSON; no colours off a terminal", async () => {
    const text = await cliProcess(["card", agent.baseUrl]);
    expect(text.code).toBe(0);
    expect(text.stdout).toContain("Edgelink demo agent");
    expect(text.stdout).toContain("count");
    expect(text.stdout).not.toContain(ESC);
    const json = await cliProcess(["card", agent.baseUrl, "--json"]);
    expect(JSON.parse(json.stdout).name).toBe("Edgelink demo agent");
  });

  it("--binding picks the interface the CLI talks to; a wrong value is a usage error", async () => {
    const rest = await cli(["card", agent.baseUrl, "--binding", "rest"]);
    expect(rest.code).toBe(0);
    expect(rest.stdout).toMatch(/endpoint .*\(HTTP\+JSON, A2A /);
    const rpc = await cli(["card", agent.baseUrl, "--binding", "jsonrpc"]);
    expect(rpc.stdout).toMatch(/endpoint .*\(JSONRPC, A2A /);
    const wrong = await cli(["card", agent.baseUrl, "--binding", "grpc"]);
    expect(wrong.code).not.toBe(0);
    expect(wrong.stderr).toContain('--binding must be jsonrpc or rest, got "grpc"');
  });

  // Real processes: the exit code is the process's.
  it("send prints the answer; the exit code follows the final state", async () => {
    const done = await cliProcess(["send", agent.baseUrl, "hi there"]);
    expect(done).toMatchObject({ code: 5 }); // "hi" asks for a name: input-required
    expect(done.stdout.trim()).toBe("Hi! What's your name?");
    const taskId = /task (\S+)/.exec(done.stderr)[1];
    const answered = await cliProcess(["send", agent.baseUrl, "Ada", "--task", taskId]);
    expect(answered.code).toBe(0);
    expect(answered.stdout.trim()).toBe("Nice to meet you, Ada!");
    expect(answered.stderr).toContain("completed");

    const echo = await cliProcess(["send", agent.baseUrl, "plain words", "--binding", "rest"]);
    expect(echo.code).toBe(0);
    expect(echo.stdout.trim()).toBe("You said: plain words");

    const failed = await cliProcess(["send", agent.baseUrl, "fail"]);
    expect(failed.code).toBe(3);
    const json = await cliProcess(["send", agent.baseUrl, "x", "--json"]);
    expect(JSON.parse(json.stdout).task.status.state).toBe("completed");
  });

  it("stream prints tokens as they arrive and the final state; --json is NDJSON", async () => {
    const run = await cli(["stream", agent.baseUrl, "one two three"]);
    expect(run.code).toBe(0);
    expect(run.stdout).toBe("You said: one two three\n");
    expect(run.stderr).toContain("completed");
    const json = await cli(["stream", agent.baseUrl, "a b", "--json"]);
    const events = json.stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(events[0].kind).toBe("task");
    expect(events.filter((e) => e.kind === "artifact-update").length).toBe(4);
    expect(events.at(-1).status.state).toBe("completed");
  });

  it("tasks, get, cancel and watch", async () => {
    // Twelve seconds of counting: `watch` must subscribe while the task still runs, and a
    // second CLI process can take seconds to start on a loaded machine (six were too few
    // at a load average of 19).
    const started = await cli(["send", agent.baseUrl, "count 12", "--no-wait", "--json"]);
    const { task } = JSON.parse(started.stdout);
    const watched = await cli(["watch", agent.baseUrl, task.id]);
    expect(watched.code, watched.stderr).toBe(0);
    // Off a terminal, each status update is a line of its own.
    expect(watched.stderr).toMatch(/working · ([2-9]|1[0-2])…/);
    expect(watched.stderr).toContain("completed");
    expect(watched.stdout.trim()).toBe("Counted to 12.");

    const got = await cli(["get", agent.baseUrl, task.id]);
    expect(got.code).toBe(0);
    expect(got.stdout).toContain("completed");
    expect(got.stdout).toContain("Counted to 12.");

    const list = await cli(["tasks", agent.baseUrl, "--context", task.contextId]);
    expect(list.stdout).toContain("TASK");
    expect(list.stdout).toContain(task.id);

    const long = JSON.parse(
      (await cli(["send", agent.baseUrl, "count 30", "--no-wait", "--json"])).stdout,
    );
    const canceled = await cli(["cancel", agent.baseUrl, long.task.id]);
    expect(canceled.code).toBe(0);
    expect(canceled.stdout).toContain("canceled");
    const again = await cli(["cancel", agent.baseUrl, long.task.id]);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain("TaskNotCancelableError");
  });

  it("history is paged", async () => {
    const first = JSON.parse((await cli(["send", agent.baseUrl, "first", "--json"])).stdout);
    const contextId = first.task.contextId;
    await cli(["send", agent.baseUrl, "second", "--context", contextId]);
    const page = await cli(["history", agent.baseUrl, contextId, "--page-size", "1"]);
    expect(page.code).toBe(0);
    expect(page.stdout.trim().split("\n")).toHaveLength(1);
    expect(page.stderr).toContain("more: --page-token");
    const all = await cli(["history", agent.baseUrl, contextId, "--page-size", "1", "--all"]);
    expect(all.stdout).toContain("user: first");
    expect(all.stdout).toContain("user: second");
  });

  it("push add registers a webhook; push listen verifies and prints the deliveries", async () => {
    let resolvePort: (url: string) => void = () => {};
    const portKnown = new Promise<string>((r) => {
      resolvePort = r;
    });
    const listener = cliProcess(
      ["push", "listen", agent.baseUrl, "--port", "0", "--count", "2", "--json"],
      (err) => {
        const m = /listening on (\S+)/.exec(err);
        if (m) resolvePort(m[1]);
      },
    );
    const hook = await portKnown;
    const forged = await fetch(hook, {
      method: "POST",
      headers: { "Content-Type": "application/a2a+json", "X-A2A-Signature": "not.a.jwt" },
      body: "{}",
    });
    expect(forged.status).toBe(401);
    const { task } = JSON.parse(
      // Long enough for `push add` (another CLI run) to register while it still runs.
      (await cli(["send", agent.baseUrl, "count 12", "--no-wait", "--json"])).stdout,
    );
    const added = await cli(["push", "add", agent.baseUrl, task.id, hook, "--json"]);
    expect(added.code).toBe(0);
    expect(JSON.parse(added.stdout).url).toBe(hook);
    const listed = await cli(["push", "list", agent.baseUrl, task.id]);
    expect(listed.stdout).toContain(hook);
    const timer = setTimeout(() => listener.kill(), 20_000);
    const run = await listener;
    clearTimeout(timer);
    expect(run.code).toBe(0);
    const lines = run.stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(lines.filter((l) => l.refused)).toEqual([
      expect.objectContaining({ refused: 401, reason: "bad-signature" }),
    ]);
    const deliveries = lines.filter((l) => !l.refused);
    expect(deliveries.length).toBeGreaterThanOrEqual(2);
    for (const d of deliveries) expect(d.taskId).toBe(task.id);
  });

  it("A9 registry add, list, heartbeat and remove: the demo agent listed in a registry", async () => {
    const key = ["--api-key", "key-ops"];
    const added = await cli([
      "registry",
      "add",
      registry.baseUrl,
      agent.baseUrl,
      "--ttl",
      "30",
      "--json",
      ...key,
    ]);
    expect(added.code).toBe(0);
    const entry = JSON.parse(added.stdout);
    expect(entry).toMatchObject({ url: `${agent.baseUrl}/`, ttlSeconds: 30 });

    const listed = await cli(["registry", "list", registry.baseUrl, "--tag", "demo", ...key]);
    expect(listed.code).toBe(0);
    expect(listed.stdout).toContain(entry.name);
    expect(listed.stdout).toContain(entry.id);
    const none = await cli([
      "registry",
      "list",
      registry.baseUrl,
      "--tag",
      "nothing",
      "--json",
      ...key,
    ]);
    expect(JSON.parse(none.stdout)).toStrictEqual({ agents: [], nextPageToken: "" });

    const beat = await cli(["registry", "heartbeat", registry.baseUrl, entry.id, ...key]);
    expect(beat.code).toBe(0);
    expect(beat.stdout).toContain(`renewed ${entry.id}`);
    expect((await cli(["registry", "remove", registry.baseUrl, entry.id, ...key])).code).toBe(0);
    const gone = await cli(["registry", "heartbeat", registry.baseUrl, entry.id, ...key]);
    expect(gone.code).toBe(1);
    expect(gone.stderr).toContain("AgentNotFoundError");
    const anonymous = await cli(["registry", "list", registry.baseUrl]);
    expect(anonymous.code).toBe(1);
    expect(anonymous.stderr).toContain("UnauthenticatedError");
    expect((await cli(["registry", "frob", registry.baseUrl])).code).toBe(2);
  });

  it("A2 card --verify-card: a signed agent's card verifies, an unsigned one is refused", async () => {
    const ok = await cli(["card", signed.baseUrl, "--verify-card"]);
    expect(ok.code).toBe(0);
    expect(ok.stdout).toContain("Edgelink demo agent");
    const byJwks = await cli([
      "card",
      signed.baseUrl,
      "--card-jwks",
      `${signed.baseUrl}/.well-known/jwks.json`,
    ]);
    expect(byJwks.code).toBe(0);
    const refused = await cli(["card", agent.baseUrl, "--verify-card"]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain("not signed");
    expect(refused.stderr).toContain("(unsigned)");
  });

  it("A9 registry add: a signed agent needs --prove, which makes its proof from the card key", async () => {
    const key = ["--api-key", "key-ops"];
    const bare = await cli(["registry", "add", registry.baseUrl, signed.baseUrl, ...key]);
    expect(bare.code).toBe(1);
    expect(bare.stderr).toContain("PermissionDeniedError");
    const proven = await cli(
      [
        "registry",
        "add",
        registry.baseUrl,
        signed.baseUrl,
        "--prove",
        "--subject",
        "ops",
        "--json",
        ...key,
      ],
      undefined,
      { EDGELINK_CARD_SIGNING_KEYS: cardKeys },
    );
    expect(proven.stderr).toBe("");
    expect(proven.code).toBe(0);
    const entry = JSON.parse(proven.stdout);
    expect(entry).toMatchObject({ url: `${signed.baseUrl}/` });
    expect((await cli(["registry", "remove", registry.baseUrl, entry.id, ...key])).code).toBe(0);
    const usage = await cli([
      "registry",
      "add",
      registry.baseUrl,
      signed.baseUrl,
      "--prove",
      ...key,
    ]);
    expect(usage.code).toBe(2);
  });

  it("clear errors and exit codes", async () => {
    const missing = await cli(["get", agent.baseUrl, "nope"]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain("TaskNotFoundError");
    const json = await cli(["get", agent.baseUrl, "nope", "--json"]);
    expect(JSON.parse(json.stderr)).toMatchObject({ error: "TaskNotFoundError", code: -32001 });
    const bad = await cli(["tasks", agent.baseUrl, "--page-size", "500"]);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain("pageSize");
    expect((await cli(["frobnicate"])).code).toBe(2);
    expect((await cli(["send", agent.baseUrl])).stderr).toContain("missing message text");
    expect((await cli(["send", agent.baseUrl, "x", "--bogus", "1"])).code).toBe(2);
    const down = await cli(["card", "http://127.0.0.1:9"]);
    expect(down.code).toBe(1);
    expect(down.stderr).toContain("could not reach");
    const help = await cli(["--help"]);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain("push listen");
  });
});

describe("edgelink memory against an agent with long-term memory (K8)", () => {
  const memory = (key: string, ...args: string[]) =>
    cli(["memory", args[0], memoryAgent.baseUrl, ...args.slice(1), "--api-key", key]);

  it("add, list, search, correct, delete and erase a user's own memory, and no one else's", async () => {
    const added = await memory(USER, "add", "I live in Lyon", "--json");
    expect(added.code).toBe(0);
    const lyon = JSON.parse(added.stdout).results[0].id as string;
    expect(lyon).toBeTruthy();
    expect((await memory(USER, "add", "My cat is called Miso")).code).toBe(0);

    const listed = await memory(USER, "list");
    expect(listed.stdout).toContain("I live in Lyon");
    expect(listed.stdout).toContain("My cat is called Miso");
    expect((await memory(OTHER, "list")).stdout).toContain("nothing remembered");

    const found = await memory(USER, "search", "where do I live", "--json");
    expect(JSON.parse(found.stdout).facts.map((f: { claim: string }) => f.claim)).toContain(
      "I live in Lyon",
    );

    const corrected = await memory(USER, "correct", lyon, "I live in Paris");
    expect(corrected.code).toBe(0);
    const now = (await memory(USER, "list")).stdout;
    expect(now).toContain("I live in Paris");
    expect(now).not.toContain("I live in Lyon");
    expect((await memory(USER, "list", "--superseded")).stdout).toContain("(superseded)");

    const cat = JSON.parse((await memory(USER, "list", "--json")).stdout).items.find(
      (i: { claim: string }) => i.claim === "My cat is called Miso",
    ).id as string;
    expect((await memory(USER, "delete", cat)).stdout.trim()).toBe("deleted");
    expect((await memory(USER, "list")).stdout).not.toContain("Miso");

    // Erasure is asked for explicitly; then nothing is left to list or recall.
    const unasked = await memory(USER, "erase");
    expect(unasked.code).toBe(2);
    expect(unasked.stderr).toContain("--yes");
    const erased = await memory(USER, "erase", "--yes");
    expect(erased.stdout).toMatch(/^erased [1-9]\d* items?$/m);
    expect((await memory(USER, "list")).stdout).toContain("nothing remembered");
    expect((await memory(USER, "search", "where do I live")).stdout).toContain("nothing recalled");
  });
});

describe("the agent's own error, and what to do about it", () => {
  let misconfigured: DemoAgent;
  beforeAll(async () => {
    // An id key too short: the demo Worker answers every request 503 MISCONFIGURED.
    misconfigured = await startWorker("wrangler.toml", { EDGELINK_ID_KEY: "changeme" });
  }, 120_000);
  afterAll(async () => {
    await misconfigured?.stop();
  });

  it("a misconfigured Worker's 503 shows its message and the fix, not 'no agent card found'", async () => {
    for (const [command, ...rest] of [["card"], ["send", "hello"]]) {
      const ran = await cli([command as string, misconfigured.baseUrl, ...rest]);
      expect(ran.code, ran.stderr).toBe(1);
      expect(ran.stderr).not.toContain("no agent card found");
      expect(ran.stderr).toContain("EDGELINK_ID_KEY must be a secret of at least 32 characters");
      expect(ran.stderr).toContain("MisconfiguredError");
      expect(ran.stderr).toContain("edgelink doctor");
    }
  });

  it("a 401 suggests --api-key; with the key the same command works", async () => {
    const refused = await cli(["send", memoryAgent.baseUrl, "hello"]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain("UnauthenticatedError");
    expect(refused.stderr).toContain("pass --api-key K");
    const sent = await cli(["send", memoryAgent.baseUrl, "hello", "--api-key", KEY]);
    expect(sent.code, sent.stderr).toBe(0);
  });
});

describe("the launcher in a clone before `npm run build`", () => {
  it("runs the CLI from src/ when dist/ is absent (npx edgelink in a fresh clone)", async () => {
    const { symlinkSync, writeFileSync, existsSync } = await import("node:fs");
    const clone = mkdtempSync(join(tmpdir(), "edgelink-clone-"));
    mkdirSync(join(clone, "bin"));
    copyFileSync(join(ROOT, "bin/edgelink.mjs"), join(clone, "bin/edgelink.mjs"));
    copyFileSync(join(ROOT, "package.json"), join(clone, "package.json"));
    symlinkSync(join(ROOT, "src"), join(clone, "src"));
    symlinkSync(join(ROOT, "node_modules"), join(clone, "node_modules"));
    expect(existsSync(join(clone, "dist"))).toBe(false);
    const run = (args: string[]) =>
      new Promise<Run>((resolve) => {
        const child = spawn(process.execPath, [join(clone, "bin/edgelink.mjs"), ...args]);
        let stdout = "";
        let stderr = "";
        child.stdout.on("data", (d) => (stdout += d));
        child.stderr.on("data", (d) => (stderr += d));
        child.on("close", (code) => resolve({ code, stdout, stderr }));
      });
    const sent = await run(["send", agent.baseUrl, "from a clone"]);
    expect(sent.stderr).not.toContain("not built");
    expect(sent.code, sent.stderr).toBe(0);
    expect(sent.stdout.trim()).toBe("You said: from a clone");
    // Without esbuild (not installed) it says what to do instead of a stack trace.
    const bare = mkdtempSync(join(tmpdir(), "edgelink-bare-"));
    mkdirSync(join(bare, "bin"));
    copyFileSync(join(ROOT, "bin/edgelink.mjs"), join(bare, "bin/edgelink.mjs"));
    writeFileSync(join(bare, "package.json"), '{"type":"module"}');
    symlinkSync(join(ROOT, "src"), join(bare, "src"));
    const child = spawn(process.execPath, [join(bare, "bin/edgelink.mjs"), "--help"]);
    let err = "";
    child.stderr.on("data", (d) => (err += d));
    const code = await new Promise((resolve) => child.on("close", resolve));
    expect(code).toBe(1);
    expect(err).toContain("run `npm install` (or `npm run build`)");
  });
});
