import { OLD_VERSION_KEY, OWN_TABLES, STORAGE_VERSION_KEY } from "../storage/storage-version";
import { errorCode, type FsModule } from "./node";

/** What the doctor reads of one Durable Object database. */
export interface LocalDatabase {
  /** The object's own tables (not the platform's). */
  tables: string[];
  /** Its recorded storage version; null when it has none. */
  version: string | null;
  /** The count an unversioned development build recorded instead (`schema_version`), if any. */
  oldVersion?: string | null;
}

/** wrangler dev's Durable Object databases, as the doctor reads them. */
export interface LocalStorage {
  /** The names in a directory; none when it does not exist. */
  list(dir: string): Promise<string[]>;
  /** One database's tables and version; null when it cannot be read. */
  read(file: string): Promise<LocalDatabase | null>;
}

/** Where wrangler dev keeps Durable Objects: a folder per `<worker>-<class>`, a file each. */
export const LOCAL_OBJECTS_DIR = [".wrangler", "state", "v3", "do"];
/** Databases read at most: the doctor answers in moments even for a big local state. */
const MAX_DATABASES = 2_000;

/** Why a database that has tables cannot be used, in the words the doctor prints. */
export function unusableBecause(db: LocalDatabase): string | null {
  if (db.tables.length === 0 || db.version !== null) return null;
  if (db.oldVersion != null) {
    return `an unversioned development build's schema (its schema_version ${db.oldVersion})`;
  }
  return `tables without a storage version (${db.tables.slice(0, 5).join(", ")}${db.tables.length > 5 ? ", ..." : ""})`;
}

/** Files named in a finding at most; the count says how many there are. */
const FILES_NAMED = 5;

/**
 * Local databases of the Edgelink classes that this release refuses (their objects answer
 * StorageOutdated): each named with the table or version that made it unusable, so the fix
 * removes those files only, never the whole local state.
 */
export async function localStorageFindings(
  storage: LocalStorage,
  join: (...p: string[]) => string,
  dir: string,
  classes: readonly string[],
): Promise<{ problems: string[]; notes: string[] }> {
  const root = join(dir, ...LOCAL_OBJECTS_DIR);
  const folders = (await storage.list(root)).filter((name) =>
    classes.some((c) => name.endsWith(`-${c}`)),
  );
  const refused: { file: string; why: string }[] = [];
  let unreadable = 0;
  let read = 0;
  for (const folder of folders) {
    for (const file of await storage.list(join(root, folder))) {
      if (!file.endsWith(".sqlite") || file === "metadata.sqlite") continue;
      if (read === MAX_DATABASES) break;
      read += 1;
      const db = await storage.read(join(root, folder, file));
      if (db === null) {
        unreadable += 1;
        continue;
      }
      const why = unusableBecause(db);
      if (why) refused.push({ file: `${folder}/${file}`, why });
    }
  }
  const problems: string[] = [];
  const notes: string[] = [];
  const local = LOCAL_OBJECTS_DIR.join("/");
  if (refused.length > 0) {
    const n = refused.length;
    const named = refused
      .slice(0, FILES_NAMED)
      .map((r) => `${r.file}: ${r.why}`)
      .join("; ");
    problems.push(
      `${n} local Durable Object${n === 1 ? "" : "s"} in ${local} hold${n === 1 ? "s" : ""} storage this release cannot read, and every call to ${n === 1 ? "it" : "them"} answers StorageOutdated (${named}${n > FILES_NAMED ? `; and ${n - FILES_NAMED} more` : ""}): ` +
        `remove ${n === 1 ? "that file" : "those files"} (their tasks are lost; the rest of ${local} is kept)`,
    );
  }
  if (unreadable > 0) {
    notes.push(
      `${unreadable} local Durable Object database${unreadable === 1 ? "" : "s"} in ${local} could not be read (wrangler dev running, or node:sqlite missing: Node 22.13 or later)`,
    );
  }
  if (read === MAX_DATABASES) {
    notes.push(`only the first ${MAX_DATABASES} local Durable Object databases were checked`);
  }
  return { problems, notes };
}

/** `node:sqlite`'s synchronous database, the part the doctor uses. */
interface SqliteModule {
  DatabaseSync: new (
    path: string,
    options: { readOnly: boolean },
  ) => {
    prepare(sql: string): {
      all(...args: string[]): Record<string, unknown>[];
    };
    close(): void;
  };
}

/**
 * `node:sqlite`, or null without it. Node 22 prints "ExperimentalWarning: SQLite is an
 * experimental feature" when it loads: the doctor's user asked for no SQLite, and the
 * line reads like a fault of their project, so that one warning is left unprinted.
 */
async function importSqlite(): Promise<SqliteModule | null> {
  const specifier = "node:sqlite";
  // Node's own process (the CLI's stand-in in tests prints no warnings).
  const node = (globalThis as unknown as { process: { emitWarning: Warn } }).process;
  const emit = node.emitWarning;
  node.emitWarning = (warning, ...rest) => {
    const text = typeof warning === "string" ? warning : warning.message;
    if (!text.startsWith("SQLite is an experimental feature")) emit.call(node, warning, ...rest);
  };
  try {
    return (await import(specifier)) as SqliteModule;
  } catch {
    return null;
  } finally {
    node.emitWarning = emit;
  }
}

type Warn = (warning: string | Error, ...rest: unknown[]) => void;

/** The local databases through `node:fs` and `node:sqlite` (loaded only when one is read). */
export function nodeLocalStorage(fs: FsModule): LocalStorage {
  let sqlite: Promise<SqliteModule | null> | null = null;
  return {
    async list(dir) {
      try {
        return await fs.readdir(dir);
      } catch (error) {
        if (errorCode(error) === "ENOENT" || errorCode(error) === "ENOTDIR") return [];
        throw error;
      }
    },
    async read(file) {
      sqlite ??= importSqlite();
      const module = await sqlite;
      if (!module) return null;
      try {
        const db = new module.DatabaseSync(file, { readOnly: true });
        try {
          const tables = db
            .prepare(`SELECT name FROM sqlite_master WHERE type = 'table' AND ${OWN_TABLES}`)
            .all()
            .map((r) => String(r.name));
          if (!tables.includes("meta")) return { tables, version: null };
          const rows = db
            .prepare("SELECT key, value FROM meta WHERE key IN (?, ?)")
            .all(STORAGE_VERSION_KEY, OLD_VERSION_KEY);
          const value = (key: string) => {
            const row = rows.find((r) => r.key === key);
            return row ? String(row.value) : null;
          };
          return {
            tables,
            version: value(STORAGE_VERSION_KEY),
            oldVersion: value(OLD_VERSION_KEY),
          };
        } finally {
          db.close();
        }
      } catch {
        return null;
      }
    },
  };
}
