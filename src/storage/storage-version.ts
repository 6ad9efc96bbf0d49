/**
 * How an object's SQLite database records its schema version: shared by the objects
 * (storage/schema-version.ts) and `edgelink doctor`, which reads wrangler dev's databases.
 */

/** The `meta` key of the version a database is at (1 is the baseline). */
export const STORAGE_VERSION_KEY = "storage_version";

/** The key a development build kept its migration count under; storage it made has no other. */
export const OLD_VERSION_KEY = "schema_version";

/**
 * Tables an object's database holds that are not Edgelink's, by prefix: SQLite's own
 * (`sqlite_`), the platform's (`_cf_KV`, ...) and the local runtime's (wrangler dev adds
 * `__miniflare_do_name` to every named object, even one only read). Edgelink never names a
 * table with a leading underscore, so any such table belongs to whatever runs the object:
 * a restart of that runtime must never make the storage look foreign.
 */
export const RUNTIME_TABLE_PREFIXES = ["sqlite_", "_"] as const;

/** The condition on `sqlite_master.name` that keeps only Edgelink's own tables. */
export const OWN_TABLES = RUNTIME_TABLE_PREFIXES.map(
  // GLOB, not LIKE: in LIKE an underscore matches any character.
  (prefix) => `name NOT GLOB '${prefix}*'`,
).join(" AND ");
