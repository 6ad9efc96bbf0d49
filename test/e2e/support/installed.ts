/**
 * The project a stranger gets, made once per test run and shared by the files that use it
 * (init.test.ts, init.mistakes.test.ts, init.guides.test.ts, package.test.ts): the packed
 * tarball (./packed.ts), `npx edgelink init` run from it in an empty folder, and the new
 * project's `npm install`. The install is most of that chain's time; made once, the files
 * that use it run side by side instead of one after the other in one file.
 *
 * A file that needs a project of its own copies this one's files and links its
 * node_modules (`linkedCopy`), or hard-links a copy of them (`installedCopy`): nothing is
 * installed twice.
 */
// @ts-nocheck -- Node-only support (the repository has no @types/node).
import { execFile } from "node:child_process";
import { cpSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { packedTarball } from "./packed";
import { oncePerRun, runDir } from "./run-once";

const REPO = decodeURIComponent(new URL("../../../", import.meta.url).pathname).replace(/\/$/, "");

export interface Ran {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs a command to its end, as a user's terminal does (CI=1, no colours). */
export function run(cmd: string, args: string[], cwd: string): Promise<Ran> {
  return new Promise((resolve) => {
    execFile(
      cmd,
      args,
      { cwd, maxBuffer: 64 * 1024 * 1024, env: { ...process.env, CI: "1", NO_COLOR: "1" } },
      (error, stdout, stderr) =>
        resolve({
          code: error ? (typeof error.code === "number" ? error.code : 1) : 0,
          stdout,
          stderr,
        }),
    );
  });
}

/** Its stdout; throws with both outputs when it fails. */
export async function ok(cmd: string, args: string[], cwd: string): Promise<string> {
  const ran = await run(cmd, args, cwd);
  if (ran.code !== 0)
    throw new Error(`${cmd} ${args.join(" ")} failed:\n${ran.stdout}\n${ran.stderr}`);
  return ran.stdout;
}

export const editFile = (dir: string, file: string, change: (text: string) => string) =>
  writeFileSync(join(dir, file), change(readFileSync(join(dir, file), "utf8")));

export const TRACING_GUIDE = "docs/guides/tracing.md";

/** The packages the tracing guide installs, as its `npm install` line names them. */
const tracingPackages = () =>
  (/^npm install (.+)$/m.exec(readFileSync(join(REPO, TRACING_GUIDE), "utf8"))?.[1] ?? "")
    .trim()
    .split(/\s+/);

export interface InstalledProject {
  /** The packed tarball it installed. */
  tarball: string;
  /** The echo project `edgelink init` made, with its node_modules installed. */
  echo: string;
  /** Its installed `edgelink` command. */
  edgelinkBin: string;
  /** What its `npm install` printed on stderr (npm's warnings). */
  installWarnings: string;
  /** Seconds each step took, for the log. */
  laps: Record<string, number>;
}

async function make(): Promise<InstalledProject> {
  const t0 = Date.now();
  const laps: Record<string, number> = {};
  const lap = (what: string) => {
    laps[what] = Math.round((Date.now() - t0) / 100) / 10;
  };
  const tarball = await packedTarball();
  lap("packed");
  const root = join(runDir(), "init");
  mkdirSync(root);
  const echo = join(root, "echo-agent");
  // As a user runs it: npx fetches the package (here, the tarball) and runs its bin.
  await ok(
    "npx",
    ["--yes", "--prefer-offline", `--package=${tarball}`, "--", "edgelink", "init", echo],
    root,
  );
  lap("npx edgelink init");
  // The project depends on edgelink from the registry; here it installs the tarball.
  editFile(echo, "package.json", (t) =>
    t.replace(/"edgelink": "[^"]+"/, `"edgelink": "file:${tarball}"`),
  );
  // With the tracing guide's pinned packages, named as the guide's `npm install` line names
  // them (its code is checked with the other guides' and run): one install, one resolution
  // of the tree, instead of a second pass over it.
  const installed = await run(
    "npm",
    ["install", "--no-audit", "--no-fund", "--prefer-offline", ...tracingPackages()],
    echo,
  );
  if (installed.code !== 0) throw new Error(`npm install failed:\n${installed.stderr}`);
  lap("installed, with the tracing guide's packages");
  return {
    tarball,
    echo,
    edgelinkBin: join(echo, "node_modules", ".bin", "edgelink"),
    installWarnings: installed.stderr,
    laps,
  };
}

/** This run's installed project, making it (pack, init, install) if no other file has. */
export async function installedProject(): Promise<InstalledProject> {
  const project = await oncePerRun("installed-project", make);
  console.log(
    `installed project ${project.echo}, seconds into its making: ${JSON.stringify(project.laps)}`,
  );
  return project;
}

/**
 * A new folder `dir` with the installed project's files (`files`, by default the ones
 * `edgelink init` writes that a run reads) and a link to its node_modules.
 */
export function linkedCopy(
  project: InstalledProject,
  dir: string,
  files = ["package.json", "wrangler.toml", ".dev.vars", "src"],
): string {
  mkdirSync(dir, { recursive: true });
  for (const f of files) cpSync(join(project.echo, f), join(dir, f), { recursive: true });
  symlinkSync(join(project.echo, "node_modules"), join(dir, "node_modules"));
  return dir;
}

/**
 * The installed project's node_modules in `dir` as a copy of hard links (`cp -al`: under a
 * second of CPU, where installing the tarball again was about 5 CPU-s). Unlike
 * `linkedCopy`'s symlink, the packages are then inside `dir`: a bundler resolves a symlink
 * to its target and names the target's path in an unminified bundle, which would change the
 * bundle's size with where the run keeps the installed project.
 */
export async function installedCopy(project: InstalledProject, dir: string): Promise<void> {
  await ok("cp", ["-al", join(project.echo, "node_modules"), join(dir, "node_modules")], dir);
}
