import { OWN_TABLES, STORAGE_VERSION_KEY } from "../models/storage-version";
import { errorCode, type FsModule } from "./node";

/** What the doctor reads of one Durable Object database. */
export interface LocalDatabase {
  /** The object's own tables (not the platform's). */
  tables: string[];
  /** Its recorded storage version; null when it has none (0.x recorded another key). */
  version: string | null;
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

/**
 * Local databases of the Edgelink classes made by Edgelink 0.x, which this release refuses
 * (their objects answer StorageOutdated) and does not migrate.
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
  let old = 0;
  let unreadable = 0;
  let read = 0;
  const where = new Set<string>();
  for (const folder of folders) {
    for (const file of await storage.list(join(root, folder))) {
      if (!file.endsWith(".sqlite") || file === "metadata.sqlite") continue;
      if (read === MAX_DATABASES) break;
      read += 1;
      const db = await storage.read(join(root, folder, file));
      if (db === null) unreadable += 1;
      else if (db.tables.length > 0 && db.version === null) {
        old += 1;
        where.add(folder);
      }
    }
  }
  const problems: string[] = [];
  const notes: string[] = [];
  const local = LOCAL_OBJECTS_DIR.join("/");
  if (old > 0) {
    problems.push(
      `${old} local Durable Object${old === 1 ? "" : "s"} in ${local} (${[...where].join(", ")}) hold${old === 1 ? "s" : ""} storage made by Edgelink 0.x, which this release does not migrate (every call answers StorageOutdated): delete ${local} to start wrangler dev afresh`,
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
      const specifier = "node:sqlite";
      sqlite ??= (import(specifier) as Promise<SqliteModule>).catch(() => null);
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
          const [row] = db.prepare("SELECT value FROM meta WHERE key = ?").all(STORAGE_VERSION_KEY);
          return { tables, version: row ? String(row.value) : null };
        } finally {
          db.close();
        }
      } catch {
        return null;
      }
    },
  };
}
