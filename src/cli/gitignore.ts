import { errorCode, type FsModule } from "./node";

/**
 * Whether git ignores a project's `.dev.vars`, read from the `.gitignore` files of the
 * project's directory and those above it up to the repository's root (where `.git` is).
 * It follows git's rules for a file's path: `#` comments, `!` negation (the last match
 * wins), a pattern with a `/` anchored to its file's directory, one without matching the
 * name at any depth, `*`, `?`, `[...]` and `**`. A directory-only pattern (`name/`)
 * never matches the file.
 */

const DEV_VARS = ".dev.vars";
/** How many directories up the repository's root is looked for. */
const MAX_LEVELS = 32;

/** What `edgelink init` adds to a .gitignore that lets .dev.vars be committed. */
export const DEV_VARS_RULES = `# Local secrets (EDGELINK_ID_KEY, provider keys): never commit them.
.dev.vars
.dev.vars.*
!.dev.vars.example
`;

async function readIfThere(fs: FsModule, path: string): Promise<string | null> {
  try {
    return await fs.readFile(path, "utf8");
  } catch (error) {
    const code = errorCode(error);
    if (code === "ENOENT" || code === "ENOTDIR") return null;
    throw error;
  }
}

async function exists(fs: FsModule, path: string): Promise<boolean> {
  try {
    await fs.stat(path);
    return true;
  } catch {
    return false;
  }
}

/** The directories whose .gitignore applies to `dir`, the repository's root first. */
async function levels(
  fs: FsModule,
  join: (...p: string[]) => string,
  dir: string,
): Promise<string[]> {
  const found: string[] = [];
  let at = dir;
  for (let i = 0; i < MAX_LEVELS; i++) {
    found.push(at);
    if (await exists(fs, join(at, ".git"))) return found.reverse();
    const parent = join(at, "..");
    if (parent === at || !dir.startsWith(parent)) break;
    at = parent;
  }
  // Not in a repository (yet): the project's own .gitignore is what will count.
  return [dir];
}

/** A gitignore glob as a regular expression over a path relative to its file. */
function globRegex(glob: string): RegExp {
  let out = "";
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i] as string;
    if (c === "*" && glob[i + 1] === "*") {
      const slash = glob[i + 2] === "/";
      out += slash ? "(?:.*/)?" : ".*";
      i += slash ? 2 : 1;
    } else if (c === "*") out += "[^/]*";
    else if (c === "?") out += "[^/]";
    else if (c === "[") {
      const end = glob.indexOf("]", i + 2);
      if (end < 0) out += "\\[";
      else {
        const body = glob
          .slice(i + 1, end)
          .replace(/^!/, "^")
          .replace(/\\/g, "\\\\");
        out += `[${body}]`;
        i = end;
      }
    } else if (c === "\\" && i + 1 < glob.length) {
      out += (glob[++i] as string).replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
    } else out += c.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
  }
  return new RegExp(`^${out}$`);
}

/** What one .gitignore says of the file at `rel` (relative to it): true, false, or nothing. */
function verdict(text: string, rel: string): boolean | undefined {
  let result: boolean | undefined;
  const name = rel.slice(rel.lastIndexOf("/") + 1);
  for (const raw of text.split("\n")) {
    let line = raw.replace(/\r$/, "").replace(/(?<!\\)\s+$/, "");
    if (line === "" || line.startsWith("#")) continue;
    const negated = line.startsWith("!");
    if (negated) line = line.slice(1);
    if (line.endsWith("/")) continue;
    const anchored = line.includes("/");
    const pattern = line.replace(/^\//, "");
    if (globRegex(pattern).test(anchored ? rel : name)) result = !negated;
  }
  return result;
}

/** Whether git would ignore `.dev.vars` in `dir`. */
export async function devVarsIgnored(
  fs: FsModule,
  join: (...p: string[]) => string,
  dir: string,
): Promise<boolean> {
  let ignored = false;
  for (const level of await levels(fs, join, dir)) {
    const text = await readIfThere(fs, join(level, ".gitignore"));
    if (text === null) continue;
    const below = level === dir ? "" : dir.slice(level.length).replace(/^\/+/, "");
    const said = verdict(text, below ? `${below}/${DEV_VARS}` : DEV_VARS);
    if (said !== undefined) ignored = said;
  }
  return ignored;
}

/**
 * Makes git ignore `.dev.vars` in `dir`: appends the rules to its .gitignore (creating
 * it) unless they are already in force. Answers whether it changed the file.
 */
export async function ensureDevVarsIgnored(
  fs: FsModule,
  join: (...p: string[]) => string,
  dir: string,
): Promise<boolean> {
  if (await devVarsIgnored(fs, join, dir)) return false;
  const path = join(dir, ".gitignore");
  const text = (await readIfThere(fs, path)) ?? "";
  const gap = text === "" || text.endsWith("\n") ? "" : "\n";
  await fs.writeFile(path, `${gap}${DEV_VARS_RULES}`, { flag: "a" });
  return true;
}
