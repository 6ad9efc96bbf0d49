import { flag, onlyOptions, option, UsageError } from "./args";
import { type Context, print } from "./common";
import { EXIT } from "./events";
import { ensureDevVarsIgnored } from "./gitignore";
import { errorCode, type FsModule, nodeFiles } from "./node";
import {
  newIdKey,
  type ProjectFile,
  projectFiles,
  TEMPLATES,
  type Template,
  type Versions,
  workerName,
} from "./templates";

interface OwnManifest {
  version?: string;
  devDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
}

/**
 * The versions a new project pins, from edgelink's own package.json (next to dist/): its
 * version, and the toolchain it is built and tested with, so a new project gets a set that
 * is known to work together.
 */
export async function ownVersions(
  fs: FsModule,
  fileURLToPath: (url: URL) => string,
): Promise<Versions> {
  const file = fileURLToPath(
    // Node has import.meta.url; the repository type-checks against the Workers types only.
    new URL("../package.json", (import.meta as unknown as { url: string }).url),
  );
  let manifest: OwnManifest;
  try {
    manifest = JSON.parse(await fs.readFile(file, "utf8")) as OwnManifest;
  } catch (error) {
    throw new Error(`cannot read edgelink's package.json at ${file}: ${String(error)}`);
  }
  const dev = manifest.devDependencies ?? {};
  const peer = manifest.peerDependencies ?? {};
  const pick = (from: Record<string, string>, name: string): string => {
    const range = from[name];
    if (!range) throw new Error(`edgelink's package.json at ${file} names no version of ${name}`);
    return range;
  };
  if (!manifest.version) throw new Error(`edgelink's package.json at ${file} has no version`);
  return {
    edgelink: manifest.version,
    wrangler: pick(dev, "wrangler"),
    vitest: pick(dev, "vitest"),
    vitestPlugin: pick(dev, "@cloudflare/vitest-plugin"),
    workersTypes: pick(dev, "@cloudflare/workers-types"),
    // TypeScript 7, the native compiler: a new project only runs `tsc --noEmit`, several
    // times faster on it. Ours is the npm alias `typescript7` beside TypeScript 6, whose
    // JavaScript API edgelink's own build still needs.
    typescript: pick(dev, "typescript7").replace(/^npm:typescript@/, ""),
    node: pick(dev, "node"),
    hono: pick(peer, "hono"),
    zod: pick(peer, "zod"),
  };
}

function templateOf(value: string | undefined): Template {
  const template = value ?? "echo";
  if (!(TEMPLATES as readonly string[]).includes(template)) {
    throw new UsageError(`--template must be ${TEMPLATES.join(" or ")}, got "${template}"`);
  }
  return template as Template;
}

/**
 * `edgelink init [dir]`: a new agent project. Refuses a directory that has files in it
 * unless `--force`, and even then writes no file over an existing one (it lists those it
 * kept instead).
 */
export async function init(ctx: Context): Promise<number> {
  onlyOptions(ctx.args, ["template", "force", "no-color", "help"]);
  if (ctx.args.positional.length > 1) throw new UsageError("init takes one directory");
  const template = templateOf(option(ctx.args, "template"));
  const { fs, path, fileURLToPath } = await nodeFiles();
  const dir = path.resolve(ctx.args.positional[0] ?? ".");
  const versions = await ownVersions(fs, fileURLToPath);

  let existing: string[] = [];
  try {
    if (!(await fs.stat(dir)).isDirectory()) throw new UsageError(`${dir} is a file`);
    existing = await fs.readdir(dir);
  } catch (error) {
    if (errorCode(error) !== "ENOENT") throw error;
  }
  const force = flag(ctx.args, "force");
  if (existing.length > 0 && !force) {
    const shown = existing.slice(0, 5).join(", ") + (existing.length > 5 ? ", ..." : "");
    throw new UsageError(
      `${dir} is not empty (${shown}): name a new or empty directory, or pass --force to add the project's files beside these (no existing file is overwritten)`,
    );
  }

  const files = projectFiles(path.basename(dir), template, versions, newIdKey());
  const written: string[] = [];
  const kept: string[] = [];
  for (const file of files) {
    if (await writeNew(fs, path.join(dir, file.path), file, path.dirname)) written.push(file.path);
    else kept.push(file.path);
  }

  // A .gitignore that was there already may let the id key in .dev.vars be committed.
  const appended = kept.includes(".gitignore")
    ? await ensureDevVarsIgnored(fs, path.join, dir)
    : false;

  const s = ctx.style;
  const shownDir = path.relative(".", dir) || ".";
  print(
    `${s.green("created")} ${s.bold(workerName(path.basename(dir)))} (template ${template}) in ${dir}`,
  );
  for (const f of written) print(`  ${f}`);
  if (appended) print("  .gitignore (added .dev.vars: it holds your id key)");
  if (kept.length) {
    print(s.yellow(`kept (already there, not overwritten): ${kept.join(", ")}`));
    if (kept.includes(".dev.vars")) {
      print(
        s.yellow(
          "  .dev.vars was kept: it needs EDGELINK_ID_KEY (run `npx edgelink doctor` to check)",
        ),
      );
    }
  }
  print("");
  print(s.bold("next steps"));
  if (shownDir !== ".") print(`  cd ${shownDir}`);
  print("  npm install");
  if (template === "model") {
    print("  put your OpenAI key in .dev.vars (OPENAI_API_KEY=...; see .dev.vars.example)");
  }
  print("  npm run dev        # http://localhost:8787/.well-known/agent-card.json");
  print("  npm test           # the tests in test/, in the Workers runtime");
  print(
    `  deploy: npx wrangler secret put EDGELINK_ID_KEY (the value in .dev.vars)${template === "model" ? ", npx wrangler secret put OPENAI_API_KEY" : ""}, then npm run deploy`,
  );
  print(
    s.dim(
      "wrangler needs Node 22.12+: the project's `node` dev dependency gives its npm scripts and npx that Node, whatever Node this machine has.",
    ),
  );
  return EXIT.ok;
}

/** Writes `file` unless something is already at its path; answers whether it wrote. */
async function writeNew(
  fs: FsModule,
  target: string,
  file: ProjectFile,
  dirname: (path: string) => string,
): Promise<boolean> {
  await fs.mkdir(dirname(target), { recursive: true });
  try {
    // "wx": fails if the file exists, so nothing is ever overwritten, even in a race.
    await fs.writeFile(target, file.content, { flag: "wx", mode: file.secret ? 0o600 : 0o644 });
    return true;
  } catch (error) {
    if (errorCode(error) === "EEXIST") return false;
    throw error;
  }
}
