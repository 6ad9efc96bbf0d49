/**
 * `edgelink init` as a stranger uses it: `npx edgelink init` from the packed tarball in an
 * empty folder, the new project installed (./support/installed.ts: made once per run, and
 * shared with the files that use it), then its type check and its own tests, `wrangler dev`
 * and the official A2A SDK client talking to it. A copy of it edited from one config
 * mistake to the next is in init.mistakes.test.ts; the documentation's code against the
 * installed package, and the guides' code run in it, in init.guides.test.ts.
 */
// @ts-nocheck -- Node-only test (the repository has no @types/node).
import {
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type DevServer, startDev } from "./support/dev-server";
import { installedProject, ok, run } from "./support/installed";
import { asTask, sdkClient, textOf, textRequest } from "./support/sdk";

const REPO = decodeURIComponent(new URL("../../", import.meta.url).pathname).replace(/\/$/, "");

let root: string;
let echo: string;
let model: string;
let edgelinkBin: string;
const servers: DevServer[] = [];

beforeAll(async () => {
  ({ echo, edgelinkBin } = await installedProject());
  root = mkdtempSync(join(tmpdir(), "edgelink-init-"));
  model = join(root, "model-agent");
  await ok(edgelinkBin, ["init", model, "--template", "model"], root);
  symlinkSync(join(echo, "node_modules"), join(model, "node_modules"));
}, 900_000);

afterAll(async () => {
  await Promise.all(servers.map((s) => s.stop()));
  if (root) rmSync(root, { recursive: true, force: true });
});

describe("edgelink init: a new project that works", () => {
  it("writes the files: bindings, the SQLite migration, this repository's compatibility date, a git-ignored id key, pinned versions", () => {
    const toml = readFileSync(join(echo, "wrangler.toml"), "utf8");
    const ours = readFileSync(join(REPO, "wrangler.toml"), "utf8");
    const date = /compatibility_date = "([\d-]+)"/.exec(ours)?.[1];
    expect(toml).toContain(`compatibility_date = "${date}"`);
    expect(toml).toContain('compatibility_flags = ["nodejs_compat"]');
    expect(toml).toContain('name = "EDGELINK_CONTEXT"\nclass_name = "EdgelinkContext"');
    expect(toml).toContain('name = "EDGELINK_INDEX"\nclass_name = "EdgelinkIndex"');
    expect(toml).toContain('new_sqlite_classes = ["EdgelinkContext", "EdgelinkIndex"]');
    const key = /^EDGELINK_ID_KEY=(.+)$/m.exec(readFileSync(join(echo, ".dev.vars"), "utf8"))?.[1];
    expect(key?.length).toBeGreaterThanOrEqual(32);
    expect(statSync(join(echo, ".dev.vars")).mode & 0o077).toBe(0);
    expect(readFileSync(join(echo, ".gitignore"), "utf8")).toMatch(/^\.dev\.vars$/m);
    // Each project its own key.
    expect(readFileSync(join(model, ".dev.vars"), "utf8")).not.toContain(key);
    expect(readFileSync(join(model, ".dev.vars.example"), "utf8")).toContain("OPENAI_API_KEY=");

    const pkg = JSON.parse(readFileSync(join(model, "package.json"), "utf8"));
    const repo = JSON.parse(readFileSync(join(REPO, "package.json"), "utf8"));
    expect(pkg.dependencies.edgelink).toBe(`^${repo.version}`);
    for (const name of [
      "wrangler",
      "vitest",
      "@cloudflare/vitest-plugin",
      "@cloudflare/workers-types",
      "node",
    ]) {
      expect(pkg.devDependencies[name], name).toBe(repo.devDependencies[name]);
    }
    // Exact, not ranges: each wrangler release names the workers-types it needs as a peer,
    // and a range let npm take a wrangler whose types the registry did not have (ETARGET).
    expect(pkg.devDependencies.wrangler).toMatch(/^\d+\.\d+\.\d+$/);
    expect(pkg.devDependencies["@cloudflare/workers-types"]).toMatch(/^\d+\.\d+\.\d+$/);
    expect(pkg.devDependencies.node).toBe("^22.12.0");
    // The native compiler, the range of the alias ours is installed under.
    expect(`npm:typescript@${pkg.devDependencies.typescript}`).toBe(
      repo.devDependencies.typescript7,
    );
    expect(pkg.devDependencies.typescript).toMatch(/^\^7\./);
    expect(Object.keys(pkg.scripts).sort()).toEqual([
      "deploy",
      "dev",
      "doctor",
      "test",
      "typecheck",
    ]);
  });

  it("refuses a directory with files in it, and with --force adds files but overwrites none", async () => {
    const dir = join(root, "taken");
    mkdirSync(dir);
    writeFileSync(
      join(dir, ".dev.vars"),
      "EDGELINK_ID_KEY=mine-and-long-enough-0123456789abcdef\n",
    );
    // A repository's own .gitignore that does not cover .dev.vars.
    writeFileSync(join(dir, ".gitignore"), "node_modules/");
    const refused = await run(edgelinkBin, ["init", dir], root);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(
      /is not empty \((\.dev\.vars, \.gitignore|\.gitignore, \.dev\.vars)\)/,
    );
    const forced = await run(edgelinkBin, ["init", dir, "--force"], root);
    expect(forced.code).toBe(0);
    expect(forced.stdout).toContain("kept (already there, not overwritten): .gitignore, .dev.vars");
    expect(readFileSync(join(dir, ".dev.vars"), "utf8")).toBe(
      "EDGELINK_ID_KEY=mine-and-long-enough-0123456789abcdef\n",
    );
    expect(readFileSync(join(dir, "wrangler.toml"), "utf8")).toContain("EDGELINK_INDEX");
    // The id key is never left where git would commit it: the rule is appended.
    expect(forced.stdout).toContain(".gitignore (added .dev.vars");
    expect(readFileSync(join(dir, ".gitignore"), "utf8")).toMatch(
      /^node_modules\/\n.*^\.dev\.vars$/ms,
    );
    const unknown = await run(edgelinkBin, ["init", join(root, "x"), "--template", "nope"], root);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('--template must be echo or model, got "nope"');
  });

  it("both templates type-check and pass their own tests (the model's against its fake OpenAI, calling a tool)", async () => {
    await Promise.all(
      [echo, model].map(async (project) => {
        await ok("npm", ["run", "typecheck"], project);
        const tested = await ok("npm", ["test"], project);
        expect(tested).toMatch(/Tests\s+2 passed/);
      }),
    );
  }, 240_000);

  it("edgelink doctor finds nothing wrong with a new project", async () => {
    const ran = await run(edgelinkBin, ["doctor", echo], root);
    expect(ran.stdout).toContain("ok");
    expect(ran.code).toBe(0);
  });

  it("npm run dev serves the echo agent, and the official SDK client talks to it (and lists its task)", async () => {
    const server = await startDev({ cwd: echo, command: ["npm", "run", "dev", "--"] });
    servers.push(server);
    const client = await sdkClient(server.baseUrl, "JSONRPC");
    const card = await client.getAgentCard();
    expect(card.name).toBe("Echo");
    const task = asTask(await client.sendMessage(textRequest("hello from the SDK")));
    expect(task.artifacts.flatMap((a) => textOf(a.parts)).join("")).toBe(
      "You said: hello from the SDK",
    );
    const rest = await sdkClient(server.baseUrl, "HTTP+JSON");
    const listed = await rest.listTasks({ tenant: "", contextId: task.contextId });
    expect(listed.tasks.map((t) => t.id)).toEqual([task.id]);
  }, 120_000);

  it("errors thrown in Node keep their class names (no minified names in stack traces)", async () => {
    const out = await ok(
      "node",
      [
        "--input-type=module",
        "-e",
        `import { inspect } from "node:util";
         const { TaskNotFoundError } = await import("edgelink/client");
         const e = new TaskNotFoundError({ code: -32001, message: "no such task", httpStatus: 404 });
         console.log(TaskNotFoundError.name, inspect(e).split("\\n")[0]);`,
      ],
      echo,
    );
    expect(out.trim()).toBe("TaskNotFoundError TaskNotFoundError: no such task");
  });
});
