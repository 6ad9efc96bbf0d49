/**
 * A copy of the project `edgelink init` made (./support/installed.ts: installed once per
 * run) served by one `npm run dev` while its config is edited from one mistake to the next
 * (a binding, the migration, the id key, an old compatibility date), as a user fixing one
 * finds the next: each answers with the one error that names it, and `edgelink doctor`
 * names it too; fixed, it serves. And one with no id key at all, restarted and killed.
 */
// @ts-nocheck -- Node-only test (the repository has no @types/node).
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type DevServer, startDev } from "./support/dev-server";
import {
  editFile,
  type InstalledProject,
  installedProject,
  linkedCopy,
  run,
} from "./support/installed";
import { asTask, sdkClient, textRequest } from "./support/sdk";

/**
 * `npm run dev` of a project (wrangler dev, on Node 22 from its `node` dev dependency), at
 * wrangler's default log level, which prints its reloads (startDev's "info" does not).
 */
function dev(project: string, port?: number): Promise<DevServer> {
  return startDev({
    cwd: project,
    command: ["npm", "run", "dev", "--"],
    port,
    env: { WRANGLER_LOG: "log" },
  });
}

/** Waits up to 10 s for `condition`. */
async function until(condition: () => boolean): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!condition() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
}

/** The files the mistakes edit. */
const CONFIG_FILES = ["wrangler.toml", ".dev.vars"];

const dropTable = (text: string, header: string, name: string) =>
  text.replace(
    new RegExp(`(#[^\\n]*\\n)?\\[\\[${header}\\]\\]\\nname = "${name}"\\nclass_name = "\\w+"\\n`),
    "",
  );

let root: string;
let installed: InstalledProject;
let edgelinkBin: string;
const servers: DevServer[] = [];

/** A copy of the project with its files changed by `edit`, sharing its node_modules. */
function copyWith(name: string, edit: (dir: string) => void): string {
  const dir = linkedCopy(installed, join(root, name));
  edit(dir);
  return dir;
}

beforeAll(async () => {
  installed = await installedProject();
  edgelinkBin = installed.edgelinkBin;
  root = mkdtempSync(join(tmpdir(), "edgelink-mistakes-"));
}, 900_000);

afterAll(async () => {
  await Promise.all(servers.map((s) => s.stop()));
  if (root) rmSync(root, { recursive: true, force: true });
});

/**
 * The mistakes, each made on the project as `edgelink init` wrote it: what the running
 * Worker answers, and what the doctor says. The id key's comes first: wrangler dev reads
 * .dev.vars when it starts and when it reloads, but reloads only on a wrangler.toml change.
 */
const MISTAKES: { name: string; edit: (dir: string) => void; says: string; doctor: string }[] = [
  {
    name: "short-id-key",
    edit: (d) => writeFileSync(join(d, ".dev.vars"), "EDGELINK_ID_KEY=changeme\n"),
    says: "EDGELINK_ID_KEY must be a secret of at least 32 characters (it has 8)",
    doctor: "EDGELINK_ID_KEY in .dev.vars has 8 characters",
  },
  {
    name: "no-context-binding",
    edit: (d) =>
      editFile(d, "wrangler.toml", (t) =>
        dropTable(t, "durable_objects.bindings", "EDGELINK_CONTEXT"),
      ),
    says: "EDGELINK_CONTEXT is not bound",
    doctor: "EDGELINK_CONTEXT is not bound",
  },
  {
    name: "no-index-binding",
    edit: (d) =>
      editFile(d, "wrangler.toml", (t) =>
        dropTable(t, "durable_objects.bindings", "EDGELINK_INDEX"),
      ),
    says: "EDGELINK_INDEX is not bound",
    doctor: "EDGELINK_INDEX is not bound",
  },
  {
    name: "no-migration",
    edit: (d) => editFile(d, "wrangler.toml", (t) => t.slice(0, t.indexOf("# Both classes"))),
    says: "have no SQLite storage: add a [[migrations]] entry with new_sqlite_classes",
    doctor: "(bound as EDGELINK_CONTEXT) is in no migration",
  },
  {
    name: "old-compatibility-date",
    edit: (d) =>
      editFile(d, "wrangler.toml", (t) =>
        t.replace(/compatibility_date = "[\d-]+"/, 'compatibility_date = "2024-01-01"'),
      ),
    says: "no RPC before compatibility_date 2024-04-03",
    doctor: "compatibility_date 2024-01-01 is older than",
  },
];

/**
 * Makes `dir`'s config the project's as `edgelink init` wrote it, changed by `edit`: each
 * file written once, and only if it changes (.dev.vars first), so that wrangler dev
 * reloads once, on the whole new config.
 */
function configure(dir: string, edit: (dir: string) => void = () => {}): void {
  const scratch = mkdtempSync(join(root, "scratch-"));
  for (const f of CONFIG_FILES) cpSync(join(installed.echo, f), join(scratch, f));
  edit(scratch);
  for (const f of CONFIG_FILES) {
    const wanted = readFileSync(join(scratch, f), "utf8");
    if (readFileSync(join(dir, f), "utf8") !== wanted) writeFileSync(join(dir, f), wanted);
  }
}

/** How many times the Worker logged its misconfiguration in `text`. */
const misconfiguredLogs = (text: string) => text.split("this Worker is misconfigured").length - 1;

/**
 * Waits (30 s at most) until wrangler dev says it reloaded after `since` characters of its
 * output, and returns where that line ends.
 */
async function reloaded(server: DevServer, since: number): Promise<number> {
  const line = "Local server updated and ready";
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    const at = server.output().indexOf(line, since);
    if (at !== -1) return at + line.length;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`wrangler dev did not reload:\n${server.output().slice(since)}`);
}

// Concurrent: the two servers mostly wait for workerd.
describe.concurrent("mistakes caught at start: one clear error naming what to fix", () => {
  it("each mistake, one after another under one `npm run dev` whose files are edited from one to the next: every request answers 503 naming it (and only it), logged once per start or reload; the doctor names it; the fixed project then serves", async () => {
    // With its .gitignore: the doctor checks that .dev.vars is ignored.
    const dir = linkedCopy(installed, join(root, "mistakes"), [
      "package.json",
      "wrangler.toml",
      ".dev.vars",
      ".gitignore",
      "src",
    ]);
    let server: DevServer | undefined;
    // Where this mistake's output starts: wrangler's "Ready on", then each reload's line.
    let from = 0;
    for (const [i, { name, edit, says, doctor }] of MISTAKES.entries()) {
      configure(dir, edit);
      const diagnosed = await run(edgelinkBin, ["doctor", dir], root);
      expect(diagnosed.code, name).toBe(1);
      expect(diagnosed.stdout, name).toContain(doctor);

      if (!server) {
        // The first mistake is the one wrangler reads only at start (.dev.vars).
        server = await dev(dir);
        servers.push(server);
        from = server.output().length;
      } else {
        from = await reloaded(server, from);
      }
      const card = await fetch(`${server.baseUrl}/.well-known/agent-card.json`);
      expect(card.status, name).toBe(503);
      const body = await card.json();
      expect(body.error.status, name).toBe("UNAVAILABLE");
      expect(body.error.message, name).toContain(says);
      // The previous mistake, fixed in the same edit, is gone: each message names only its own.
      for (const other of MISTAKES.filter((_, j) => j !== i)) {
        expect(body.error.message, name).not.toContain(other.says);
      }
      // JSON-RPC (the SDK's binding) gets the same message as a JSON-RPC error.
      const rpc = await fetch(`${server.baseUrl}/`, {
        method: "POST",
        headers: { "Content-Type": "application/json", "A2A-Version": "1.0" },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ListTasks", params: {} }),
      });
      expect(rpc.status, name).toBe(503);
      const error = (await rpc.json()).error;
      expect(error.code, name).toBe(-32603);
      expect(error.message, name).toBe(body.error.message);
      // Logged once, however many requests (wrangler prints workerd's log a moment later).
      const since = from;
      const logged = () => misconfiguredLogs((server as DevServer).output().slice(since));
      await until(() => logged() > 0);
      await fetch(`${server.baseUrl}/tasks`);
      await new Promise((r) => setTimeout(r, 500));
      expect(logged(), name).toBe(1);
      expect(server.output().slice(since), name).toContain(says);
    }
    if (!server) throw new Error("no mistakes");
    // Fixed: the reload serves the agent, and logs no misconfiguration.
    configure(dir);
    from = await reloaded(server, from);
    expect((await fetch(`${server.baseUrl}/.well-known/agent-card.json`)).status).toBe(200);
    await new Promise((r) => setTimeout(r, 500));
    expect(misconfiguredLogs(server.output().slice(from))).toBe(0);
    // And the doctor, reading the state wrangler dev left, finds nothing to fix either.
    await server.stop();
    const fixed = await run(edgelinkBin, ["doctor", dir], root);
    expect(fixed.stdout).toContain("look right");
    expect(fixed.code, fixed.stdout + fixed.stderr).toBe(0);
  }, 300_000);

  it("B1: a missing EDGELINK_ID_KEY under wrangler dev is served with a generated key kept in .wrangler/state: the log says so, and tasks outlive a restart and a kill", async () => {
    const dir = copyWith("no-id-key", (d) => writeFileSync(join(d, ".dev.vars"), "# nothing\n"));
    const diagnosed = await run(edgelinkBin, ["doctor", dir], root);
    expect(diagnosed.code).toBe(1);
    expect(diagnosed.stdout).toContain(".dev.vars has no EDGELINK_ID_KEY");
    let server = await dev(dir);
    servers.push(server);
    expect((await fetch(`${server.baseUrl}/.well-known/agent-card.json`)).status).toBe(200);
    await until(() => server.output().includes("EDGELINK_ID_KEY is not set"));
    expect(server.output()).toContain(
      "Under wrangler dev a key generated once and kept in .wrangler/state is used",
    );
    const client = await sdkClient(server.baseUrl, "JSONRPC");
    const task = asTask(await client.sendMessage(textRequest("before the restart")));
    const port = Number(new URL(server.baseUrl).port);
    for (const end of ["stop", "kill"] as const) {
      await server[end]();
      server = await dev(dir, port);
      servers.push(server);
      const again = await sdkClient(server.baseUrl, "JSONRPC");
      const found = await again.getTask({ tenant: "", id: task.id, historyLength: 0 });
      expect(found.id, end).toBe(task.id);
      const more = asTask(
        await again.sendMessage(textRequest(`after ${end}`, { contextId: task.contextId })),
      );
      expect(more.contextId).toBe(task.contextId);
    }
    // The project's own doctor finds nothing wrong with the state wrangler dev left.
    await server.stop();
    const after = await run(edgelinkBin, ["doctor", dir], root);
    expect(after.stdout).not.toContain("cannot read");
  }, 180_000);
});
