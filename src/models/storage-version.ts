/**
 * How an object's SQLite database records its schema version: shared by the objects
 * (durable/schema-version.ts) and `edgelink doctor`, which reads wrangler dev's databases.
 */

/** The `meta` key of the version a database is at (1 is the baseline). */
export const STORAGE_VERSION_KEY = "storage_version";

/** The key Edgelink 0.x kept its migration count under; storage it made has no other. */
export const OLD_VERSION_KEY = "schema_version";

/** The tables the platform keeps in an object's database for itself (a SQL condition). */
export const OWN_TABLES = "name NOT GLOB '_cf_*' AND name NOT GLOB 'sqlite_*'";
