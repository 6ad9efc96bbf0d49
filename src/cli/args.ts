/** A parsed command line: positional words and `--flag value` / `--flag` options. */
export interface Args {
  positional: string[];
  options: Map<string, string[]>;
}

/** Options that take no value. */
const BOOLEAN = new Set([
  "json",
  "help",
  "version",
  "no-color",
  "no-wait",
  "all",
  "quiet",
  "verify-card",
  "prove",
  "force",
  "yes",
  "superseded",
]);

export class UsageError extends Error {
  override name = "UsageError";
}

/**
 * Parses argv (without node and the script). `--name=value` and `--name value` both
 * work; `--` ends the options; `-h` is `--help`.
 */
export function parseArgs(argv: readonly string[]): Args {
  const positional: string[] = [];
  const options = new Map<string, string[]>();
  const add = (name: string, value: string) =>
    options.set(name, [...(options.get(name) ?? []), value]);
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? "";
    if (arg === "--") {
      positional.push(...argv.slice(i + 1));
      break;
    }
    if (arg === "-h") {
      add("help", "true");
    } else if (arg.startsWith("--")) {
      const eq = arg.indexOf("=");
      const name = eq > 0 ? arg.slice(2, eq) : arg.slice(2);
      if (BOOLEAN.has(name)) {
        add(name, eq > 0 ? arg.slice(eq + 1) : "true");
      } else if (eq > 0) {
        add(name, arg.slice(eq + 1));
      } else {
        const value = argv[i + 1];
        if (value === undefined) throw new UsageError(`--${name} needs a value`);
        add(name, value);
        i++;
      }
    } else {
      positional.push(arg);
    }
  }
  return { positional, options };
}

export function flag(args: Args, name: string): boolean {
  const v = args.options.get(name)?.at(-1);
  return v !== undefined && v !== "false";
}

export function option(args: Args, name: string): string | undefined {
  return args.options.get(name)?.at(-1);
}

export function intOption(args: Args, name: string): number | undefined {
  const v = option(args, name);
  if (v === undefined) return undefined;
  if (!/^\d+$/.test(v)) throw new UsageError(`--${name} must be a whole number, got "${v}"`);
  return Number(v);
}

/** Refuses options a command does not know (a typo must not be ignored silently). */
export function onlyOptions(args: Args, known: readonly string[]): void {
  for (const name of args.options.keys()) {
    if (!known.includes(name)) throw new UsageError(`unknown option --${name}`);
  }
}
