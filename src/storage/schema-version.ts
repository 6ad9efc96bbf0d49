import { A2AError } from "../protocol/errors";
import { logEvent } from "../telemetry/log";
import { OLD_VERSION_KEY, OWN_TABLES, STORAGE_VERSION_KEY } from "./storage-version";

/** One step of a migration: a statement, or code for what SQL alone cannot say. */
export type MigrationStep = string | ((sql: SqlStorage) => void);
/** One change of a schema, its steps run in order. */
export type Migration = readonly MigrationStep[];

/**
 * A schema as of one version, written out: its statements and the version's `meta` row,
 * as one script (run by one `sql.exec`: several statements, no bindings).
 */
export interface CurrentSchema {
  version: number;
  sql: string;
}

/**
 * A kind of object's SQLite schema: the baseline (version 1), and the changes made since,
 * in order (`migrations[0]` takes version 1 to 2). A change is added there, never made to
 * the baseline: objects already at version 1 never run the baseline again. A new object
 * gets `current`, what the baseline and the migrations up to its version make (a test
 * compares the two), then any migration past it.
 */
export interface Schema {
  /** What holds it, for messages: a conversation, an index shard, a registry. */
  kind: "conversation" | "index" | "registry" | "memory";
  baseline: readonly string[];
  migrations: readonly Migration[];
  current: CurrentSchema;
}

/** Where an operator upgrading from a development build reads what to do (docs/operations.md). */
export const UPGRADE_FIX =
  "deploy on new Durable Object storage (a new Worker name, or new class names with the old ones in deleted_classes): see 'Upgrading from a development build' in docs/operations.md";

/** The version a schema's newest migration reaches. */
export function schemaVersion(schema: Schema): number {
  return 1 + schema.migrations.length;
}

/** What a database holds, as `inspectSchema` finds it. */
export type SchemaState =
  /** Nothing: the object was never written. */
  | { state: "none" }
  /** This release's schema; `behind` when later migrations are still to run. */
  | { state: "current"; version: number; behind: boolean }
  /** Tables this release does not read: a development build's (its words in `found`). */
  | { state: "old"; found: string }
  /** A later release's schema: running this one on it could corrupt it. */
  | { state: "newer"; version: number };

/**
 * What this database holds, read only: a database never written stays without storage.
 * Tables the platform keeps for itself (`_cf_*`, `sqlite_*`) are not the object's.
 */
export function inspectSchema(sql: SqlStorage, schema: Schema): SchemaState {
  const [first] = sql
    .exec<{ name: string }>(
      `SELECT name FROM sqlite_master WHERE type = 'table' AND ${OWN_TABLES} ORDER BY name <> 'meta' LIMIT 1`,
    )
    .toArray();
  if (!first) return { state: "none" };
  if (first.name !== "meta") {
    return { state: "old", found: `tables without a schema version (${first.name})` };
  }
  const versions = new Map(
    sql
      .exec<{ key: string; value: string }>(
        "SELECT key, value FROM meta WHERE key IN (?, ?)",
        STORAGE_VERSION_KEY,
        OLD_VERSION_KEY,
      )
      .toArray()
      .map((r) => [r.key, r.value]),
  );
  const recorded = versions.get(STORAGE_VERSION_KEY);
  if (recorded === undefined) {
    const old = versions.get(OLD_VERSION_KEY);
    return {
      state: "old",
      found:
        old === undefined
          ? "a meta table without a schema version"
          : `an unversioned development build's schema, migration ${old}`,
    };
  }
  const version = Number(recorded);
  const current = schemaVersion(schema);
  if (!Number.isSafeInteger(version) || version < 1) {
    return { state: "old", found: `an unreadable schema version (${recorded})` };
  }
  if (version > current) return { state: "newer", version };
  return { state: "current", version, behind: version < current };
}

/** The typed error an object answers every call with when it cannot use its storage. */
export function storageRefusal(schema: Schema, found: SchemaState): A2AError | null {
  if (found.state === "old") {
    return new A2AError(
      "StorageOutdated",
      `This ${schema.kind} object's storage holds ${found.found}, which this Edgelink neither reads nor migrates (the storage of the unversioned development builds before 0.1.0 is not carried over): ${UPGRADE_FIX}`,
      { object: schema.kind, found: found.found },
    );
  }
  if (found.state === "newer") {
    return new A2AError(
      "StorageOutdated",
      `This ${schema.kind} object's storage is at schema version ${found.version}, newer than this Edgelink knows (${schemaVersion(schema)}): a later release wrote it; deploy that release (or a later one) again, since this one could corrupt it`,
      { object: schema.kind, found: `version ${found.version}` },
    );
  }
  return null;
}

/** Runs migrations from `from` on, and records the version reached. */
function migrateFrom(storage: DurableObjectStorage, schema: Schema, from: number): void {
  for (const migration of schema.migrations.slice(from - 1)) {
    for (const step of migration) {
      if (typeof step === "string") storage.sql.exec(step);
      else step(storage.sql);
    }
  }
  storage.sql.exec(
    "INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
    STORAGE_VERSION_KEY,
    String(schemaVersion(schema)),
  );
}

/**
 * An object's storage as it wakes: `vacant` when it was never written (nothing is created
 * until its first write, `createSchema`); `refused`, the error to answer every call with,
 * when it holds development-build storage or a later release's. A database of an earlier version is
 * migrated here, in one transaction.
 */
export function openSchema(
  storage: DurableObjectStorage,
  schema: Schema,
): { vacant: boolean; refused: A2AError | null } {
  const found = inspectSchema(storage.sql, schema);
  if (found.state === "none") return { vacant: true, refused: null };
  const refused = storageRefusal(schema, found);
  if (refused) {
    logEvent("error", `edgelink: ${refused.message}`);
    return { vacant: false, refused };
  }
  if (found.state === "current" && found.behind) {
    storage.transactionSync(() => migrateFrom(storage, schema, found.version));
  }
  return { vacant: false, refused: null };
}

/**
 * A vacant object's schema, at its first write, in one transaction: the current schema in
 * one call, then any migration newer than it. A schema cut short of `current` (tests
 * building an older version) is made from its baseline.
 */
export function createSchema(storage: DurableObjectStorage, schema: Schema): void {
  const { version, sql } = schema.current;
  if (version > schemaVersion(schema)) {
    createFromBaseline(storage, schema);
    return;
  }
  storage.transactionSync(() => {
    storage.sql.exec(sql);
    if (version < schemaVersion(schema)) migrateFrom(storage, schema, version);
  });
}

/** A vacant object's schema made as older releases made it: the baseline, then every migration. */
export function createFromBaseline(storage: DurableObjectStorage, schema: Schema): void {
  storage.transactionSync(() => {
    for (const statement of schema.baseline) storage.sql.exec(statement);
    migrateFrom(storage, schema, 1);
  });
}

/** What a Durable Object's storage can do, as the start-up check asks it (see `storageReport`). */
export interface StorageReport {
  /** The object has SQLite storage (its class is in a `new_sqlite_classes` migration). */
  sqlite: boolean;
  /** Its SQLite has `jsonb_each`, which the index and task listing use. */
  jsonb: boolean;
  /** The runtime's own words when either is false. */
  detail: string | null;
  /** Why this object refuses its storage (made by a development build, or by a later release); null if not. */
  refused: string | null;
}

/**
 * Whether this object's storage is SQLite with the JSON functions Edgelink uses, and
 * whether it holds storage this release refuses. Read-only: it writes nothing, so asking
 * never creates an object's storage.
 */
export function storageReport(
  storage: DurableObjectStorage,
  refused: A2AError | null,
): StorageReport {
  let sql: SqlStorage;
  try {
    sql = storage.sql;
    sql.exec("SELECT 1").toArray();
  } catch (error) {
    return {
      sqlite: false,
      jsonb: false,
      detail: String((error as Error)?.message ?? error),
      refused: null,
    };
  }
  const refusal = refused?.message ?? null;
  try {
    const [row] = sql
      .exec<{ n: number }>("SELECT count(*) AS n FROM jsonb_each(jsonb('[1,2]'))")
      .toArray();
    return { sqlite: true, jsonb: row?.n === 2, detail: null, refused: refusal };
  } catch (error) {
    return {
      sqlite: true,
      jsonb: false,
      detail: String((error as Error)?.message ?? error),
      refused: refusal,
    };
  }
}

/**
 * The schema, whatever the object holds: built when vacant, migrated when behind; refused
 * storage throws its refusal. For code that writes without knowing whether the object
 * was written before (tests, benchmarks); objects use `openSchema` and `createSchema`.
 */
export function ensureSchema(storage: DurableObjectStorage, schema: Schema): void {
  const found = inspectSchema(storage.sql, schema);
  const refused = storageRefusal(schema, found);
  if (refused) throw refused;
  if (found.state === "none") createSchema(storage, schema);
  else if (found.state === "current" && found.behind) {
    storage.transactionSync(() => migrateFrom(storage, schema, found.version));
  }
}
