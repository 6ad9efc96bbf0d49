/**
 * Copies of the project `edgelink init` made (./support/installed.ts: installed once per
 * run), each with one mistake (a binding, the migration, the id key, an old compatibility
 * date): served by `npm run dev`, each answers with the one error that names it, and
 * `edgelink doctor` names it too. And one with no id key at all, restarted and killed.
 */
// @ts-nocheck -- Node-only test (the repository has no @types/node).
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
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

/** `npm run dev` of a project (wrangler dev, on Node 22 from its `node` dev dependency). */
function dev(project: string, port?: number): Promise<DevServer> {
  return startDev({ cwd: project, command: ["npm", "run", "dev", "--"], port });
}

/** Waits up to 10 s for `condition`. */
async function until(condition: () => boolean): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!condition() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
}

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

/** One copy per mistake: what the running Worker answers, and what the doctor says. */
const MISTAKES: { name: string; edit: (dir: string) => void; says: string; doctor: string }[] = [
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
    name: "short-id-key",
    edit: (d) => writeFileSync(join(d, ".dev.vars"), "EDGELINK_ID_KEY=changeme\n"),
    says: "EDGELINK_ID_KEY must be a secret of at least 32 characters (it has 8)",
    doctor: "EDGELINK_ID_KEY in .dev.vars has 8 characters",
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

// Concurrent: each case is its own wrangler dev, mostly waiting for workerd to start.
describe.concurrent("mistakes caught at start: one clear error naming what to fix", () => {
  it.each(MISTAKES)(
    "$name: every request answers 503 naming it, logged once; the doctor names it",
    async ({ name, edit, says, doctor }) => {
      const dir = copyWith(name, edit);
      const diagnosed = await run(edgelinkBin, ["doctor", dir], root);
      expect(diagnosed.code).toBe(1);
      expect(diagnosed.stdout).toContain(doctor);

      const server = await dev(dir);
      servers.push(server);
      const card = await fetch(`${server.baseUrl}/.well-known/agent-card.json`);
      expect(card.status).toBe(503);
      const body = await card.json();
      expect(body.error.status).toBe("UNAVAILABLE");
      expect(body.error.message).toContain(says);
      // JSON-RPC (the SDK's binding) gets the same message as a JSON-RPC error.
      const rpc = await fetch(`${server.baseUrl}/`, {
        method: "POST",
        headers: { "Content-Type": "application/json", "A2A-Version": "1.0" },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ListTasks", params: {} }),
      });
      expect(rpc.status).toBe(503);
      const error = (await rpc.json()).error;
      expect(error.code).toBe(-32603);
      expect(error.message).toBe(body.error.message);
      // Logged once, however many requests (wrangler prints workerd's log a moment later).
      const logged = () => server.output().split("this Worker is misconfigured").length - 1;
      await until(() => logged() > 0);
      await fetch(`${server.baseUrl}/tasks`);
      await new Promise((r) => setTimeout(r, 500));
      expect(logged()).toBe(1);
      expect(server.output()).toContain(says);
      await server.stop();
    },
    120_000,
  );

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
