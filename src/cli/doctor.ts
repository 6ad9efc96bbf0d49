import { onlyOptions, UsageError } from "./args";
import { type Context, print, printJson } from "./common";
import {
  parseDevVars,
  parseWranglerToml,
  type TomlTable,
  type WranglerConfig,
} from "./config-files";
import { EXIT } from "./events";
import { devVarsIgnored } from "./gitignore";
import { type LocalStorage, localStorageFindings, nodeLocalStorage } from "./local-storage";
import { errorCode, type FsModule, nodeFiles } from "./node";
import { COMPATIBILITY_DATE } from "./templates";

const BINDINGS = [
  { name: "EDGELINK_CONTEXT", className: "EdgelinkContext" },
  { name: "EDGELINK_INDEX", className: "EdgelinkIndex" },
] as const;
const ID_KEY = "EDGELINK_ID_KEY";
const MIN_ID_KEY_LENGTH = 32;

/** The providers whose calls the doctor recognizes in the main module, and their key secrets. */
const PROVIDERS = [
  { call: /\bopenai\s*\(/, name: "openai", keys: ["OPENAI_API_KEY"] },
  { call: /\bopenaiResponses\s*\(/, name: "openaiResponses", keys: ["OPENAI_API_KEY"] },
  { call: /\banthropic\s*\(/, name: "anthropic", keys: ["ANTHROPIC_API_KEY"] },
  { call: /\bgemini\s*\(/, name: "gemini", keys: ["GEMINI_API_KEY", "GOOGLE_API_KEY"] },
] as const;

/** What the doctor found: problems make it exit 1; notes are for the operator to know. */
export interface Diagnosis {
  problems: string[];
  notes: string[];
}

async function readIfThere(fs: FsModule, path: string): Promise<string | null> {
  try {
    return await fs.readFile(path, "utf8");
  } catch (error) {
    if (errorCode(error) === "ENOENT") return null;
    throw error;
  }
}

function strings(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === "string") : [];
}

/** The class names bound to Edgelink's objects (the defaults when unbound). */
function boundClasses(config: WranglerConfig): string[] {
  const bound = (config.arrays["durable_objects.bindings"] ?? []) as TomlTable[];
  return BINDINGS.map(({ name, className }) => {
    const cls = bound.find((b) => b.name === name)?.class_name;
    return typeof cls === "string" ? cls : className;
  });
}

/** The memory objects' binding, needed when the main module turns memory on. */
const MEMORY_BINDING = { name: "EDGELINK_MEMORY", className: "EdgelinkMemory" } as const;
/** `memory(...)` imported from `edgelink/memory` in the main module: memory is on. */
export function usesMemory(main: string | null): boolean {
  return (
    main !== null && /from\s+["']edgelink\/memory["']/.test(main) && /\bmemory\s*\(/.test(main)
  );
}

function checkBindings(config: WranglerConfig, problems: string[], memory = false): void {
  const bound = (config.arrays["durable_objects.bindings"] ?? []) as TomlTable[];
  const migrations = config.arrays.migrations ?? [];
  const sqlite = new Set(migrations.flatMap((m) => strings(m.new_sqlite_classes)));
  const kv = new Set(migrations.flatMap((m) => strings(m.new_classes)));
  for (const { name, className } of memory ? [...BINDINGS, MEMORY_BINDING] : BINDINGS) {
    const binding = bound.find((b) => b.name === name);
    if (!binding) {
      problems.push(
        `${name} is not bound: add [[durable_objects.bindings]] name = "${name}" class_name = "${className}" to wrangler.toml`,
      );
      continue;
    }
    const cls = typeof binding.class_name === "string" ? binding.class_name : className;
    if (binding.script_name !== undefined) continue; // another Worker's class: its config says
    if (kv.has(cls)) {
      problems.push(
        `${cls} (bound as ${name}) is in a new_classes migration, which gives it key-value storage: Edgelink needs SQLite (new_sqlite_classes; a deployed class cannot change, so rename it)`,
      );
    } else if (!sqlite.has(cls)) {
      problems.push(
        `${cls} (bound as ${name}) is in no migration: add a [[migrations]] entry with new_sqlite_classes = ["${cls}"]`,
      );
    }
  }
}

function checkRuntime(config: WranglerConfig, problems: string[]): void {
  const date = config.top.compatibility_date;
  if (typeof date !== "string" || !/^\d{4}-\d{2}-\d{2}$/.test(date)) {
    problems.push(
      `compatibility_date is not set: set compatibility_date = "${COMPATIBILITY_DATE}"`,
    );
  } else if (date < COMPATIBILITY_DATE) {
    problems.push(
      `compatibility_date ${date} is older than ${COMPATIBILITY_DATE}: the Durable Objects' SQLite may lack jsonb_each, and task lists come back empty. Set compatibility_date = "${COMPATIBILITY_DATE}" (with wrangler ^4.164)`,
    );
  }
}

function checkSecrets(
  config: WranglerConfig,
  devVars: Map<string, string> | null,
  main: string | null,
  diagnosis: Diagnosis,
): void {
  const { problems, notes } = diagnosis;
  const vars = config.tables.vars ?? {};
  if (vars[ID_KEY] !== undefined) {
    problems.push(
      `${ID_KEY} is in wrangler.toml's [vars], in the clear and in your repository: remove it and run npx wrangler secret put ${ID_KEY}`,
    );
  }
  const key = devVars?.get(ID_KEY);
  if (devVars === null) {
    problems.push(
      `there is no .dev.vars: add one with ${ID_KEY}=<at least ${MIN_ID_KEY_LENGTH} characters> (openssl rand -base64 48), or wrangler dev makes ids that die with the process`,
    );
  } else if (key === undefined || key === "") {
    problems.push(
      `.dev.vars has no ${ID_KEY}: add ${ID_KEY}=<at least ${MIN_ID_KEY_LENGTH} characters> (openssl rand -base64 48)`,
    );
  } else if (key.length < MIN_ID_KEY_LENGTH) {
    problems.push(
      `${ID_KEY} in .dev.vars has ${key.length} characters; it needs at least ${MIN_ID_KEY_LENGTH} (openssl rand -base64 48)`,
    );
  }
  notes.push(
    `deployed Workers read ${ID_KEY} from a secret: npx wrangler secret put ${ID_KEY} (the doctor cannot see deployed secrets)`,
  );

  if (main === null) return;
  const has = (name: string) => Boolean(devVars?.get(name) || vars[name]);
  const used = PROVIDERS.filter((p) => p.call.test(main));
  // A key passed in code (`apiKey:`) or any configured member of a fallback is enough.
  if (used.length > 0 && !/\bapiKey\s*:/.test(main) && !used.some((p) => p.keys.some(has))) {
    for (const p of used) {
      problems.push(
        `${p.name}(...) needs ${p.keys.join(" or ")}, which .dev.vars does not set: add ${p.keys[0]}=... to .dev.vars (deployed: npx wrangler secret put ${p.keys[0]})`,
      );
    }
  }
  const base = devVars?.get("OPENAI_BASE_URL") || vars.OPENAI_BASE_URL;
  if (typeof base === "string" && base !== "") {
    let url: URL | null = null;
    try {
      url = new URL(base);
    } catch {
      problems.push(`OPENAI_BASE_URL is not a URL: "${base}"`);
    }
    if (url && !/\/v\d+[a-z0-9]*(\/|$)/i.test(url.pathname)) {
      problems.push(
        `OPENAI_BASE_URL ${base} has no version segment: OpenAI's API is under /v1 (did you mean ${base.replace(/\/+$/, "")}/v1?)`,
      );
    }
  }
}

/**
 * Checks a project's wrangler.toml and .dev.vars (and its main module's providers) and,
 * given `local`, wrangler dev's Durable Object databases for storage made by a development build.
 */
export async function diagnose(
  fs: FsModule,
  join: (...p: string[]) => string,
  dir: string,
  local?: LocalStorage,
): Promise<Diagnosis> {
  const diagnosis: Diagnosis = { problems: [], notes: [] };
  const toml = await readIfThere(fs, join(dir, "wrangler.toml"));
  if (toml === null) {
    const json =
      (await readIfThere(fs, join(dir, "wrangler.jsonc"))) ??
      (await readIfThere(fs, join(dir, "wrangler.json")));
    diagnosis.problems.push(
      json === null
        ? `there is no wrangler.toml in ${dir}: run the doctor in your project's directory (or create one with edgelink init)`
        : "the doctor reads wrangler.toml only; this project has a wrangler.json(c)",
    );
    return diagnosis;
  }
  let config: WranglerConfig;
  try {
    config = parseWranglerToml(toml);
  } catch (error) {
    diagnosis.problems.push(`wrangler.toml: ${(error as Error).message}`);
    return diagnosis;
  }
  const mainPath = typeof config.top.main === "string" ? config.top.main : null;
  const main = mainPath ? await readIfThere(fs, join(dir, mainPath)) : null;
  checkBindings(config, diagnosis.problems, usesMemory(main));
  checkRuntime(config, diagnosis.problems);
  const devVarsText = await readIfThere(fs, join(dir, ".dev.vars"));
  if (mainPath === null)
    diagnosis.problems.push('wrangler.toml has no main: set main = "src/agent.ts" (your Worker)');
  else if (main === null)
    diagnosis.problems.push(`wrangler.toml's main, ${mainPath}, does not exist`);
  const devVars = devVarsText === null ? null : parseDevVars(devVarsText);
  checkSecrets(config, devVars, main, diagnosis);
  const holdsSecrets = [...(devVars?.values() ?? [])].some((value) => value !== "");
  if (holdsSecrets && !(await devVarsIgnored(fs, join, dir))) {
    diagnosis.problems.push(
      ".dev.vars holds secrets and git does not ignore it: add .dev.vars to .gitignore (edgelink init --force does), and if it was ever committed, rotate what it holds",
    );
  }
  if (local) {
    const found = await localStorageFindings(local, join, dir, boundClasses(config));
    diagnosis.problems.push(...found.problems);
    diagnosis.notes.push(...found.notes);
  }
  return diagnosis;
}

/** `edgelink doctor [dir]`: the project's configuration, checked without running it. */
export async function doctor(ctx: Context): Promise<number> {
  onlyOptions(ctx.args, ["json", "no-color", "help"]);
  if (ctx.args.positional.length > 1) throw new UsageError("doctor takes one directory");
  const { fs, path } = await nodeFiles();
  const dir = path.resolve(ctx.args.positional[0] ?? ".");
  const { problems, notes } = await diagnose(fs, path.join, dir, nodeLocalStorage(fs));
  if (ctx.json) {
    printJson({ dir, problems, notes });
    return problems.length ? EXIT.error : EXIT.ok;
  }
  const s = ctx.style;
  if (problems.length === 0)
    print(
      `${s.green("ok")} ${dir}: bindings, migration, compatibility date and secrets look right`,
    );
  else {
    print(`${s.red(`${problems.length} problem${problems.length === 1 ? "" : "s"}`)} in ${dir}:`);
    for (const p of problems) print(`  ${s.red("✗")} ${p}`);
  }
  for (const n of notes) print(s.dim(`  note: ${n}`));
  return problems.length ? EXIT.error : EXIT.ok;
}
