/**
 * `edgelink doctor` reading wrangler dev's Durable Object databases with Node's own SQLite:
 * storage made by a development build is named (this release refuses it and does not migrate it).
 */
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import * as fs from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { build } from "esbuild";
import { describe, expect, it } from "vitest";
import { diagnose } from "../../src/cli/doctor";
import { nodeLocalStorage } from "../../src/cli/local-storage";
import type { FsModule } from "../../src/cli/node";
import { projectFiles, type Versions } from "../../src/cli/templates";

const VERSIONS: Versions = {
  edgelink: "0.1.0",
  wrangler: "^4.164.0",
  vitest: "^4.1.12",
  vitestPlugin: "^1.5.0",
  workersTypes: "^5.20261117.1",
  typescript: "^6.0.3",
  node: "^22.12.0",
  hono: "^4.13.19",
  zod: "^4.6.7",
};

/** A database file as an object's storage: its statements, run by Node's SQLite. */
function database(file: string, statements: string[]): void {
  mkdirSync(dirname(file), { recursive: true });
  const db = new DatabaseSync(file);
  for (const statement of statements) db.exec(statement);
  db.close();
}

describe("edgelink doctor: wrangler dev's local storage", () => {
  it("B1: names local objects this release cannot read, with the cause, not those of this release, those holding only the runtime's tables, or other classes", async () => {
    const dir = mkdtempSync(join(tmpdir(), "edgelink-doctor-"));
    try {
      for (const f of projectFiles("p", "echo", VERSIONS, "k".repeat(64))) {
        mkdirSync(dirname(join(dir, f.path)), { recursive: true });
        writeFileSync(join(dir, f.path), f.content);
      }
      const objects = join(dir, ".wrangler/state/v3/do");
      const old = join(objects, "p-EdgelinkContext", "0a1b.sqlite");
      // As a development build left a conversation: its version under the development builds' key.
      database(old, [
        "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
        "CREATE TABLE tasks (id TEXT PRIMARY KEY, context_id TEXT NOT NULL)",
        "INSERT INTO meta VALUES ('schema_version', '14')",
      ]);
      database(join(objects, "p-EdgelinkIndex", "2c3d.sqlite"), [
        "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
        "CREATE TABLE task_index (task_id TEXT PRIMARY KEY)",
        "INSERT INTO meta VALUES ('storage_version', '1')",
      ]);
      // Never written (the platform's table only), the namespace's own file, another class.
      database(join(objects, "p-EdgelinkIndex", "4e5f.sqlite"), [
        "CREATE TABLE _cf_KV (key TEXT PRIMARY KEY, value BLOB)",
      ]);
      database(join(objects, "p-EdgelinkIndex", "metadata.sqlite"), ["CREATE TABLE x (y)"]);
      // Only read in an earlier wrangler dev run: the local runtime's own table, nothing else.
      database(join(objects, "p-EdgelinkIndex", "8c9d.sqlite"), [
        "CREATE TABLE __miniflare_do_name (name TEXT PRIMARY KEY)",
      ]);
      // Written by this release, then restarted: the runtime's table beside Edgelink's.
      database(join(objects, "p-EdgelinkContext", "9e0f.sqlite"), [
        "CREATE TABLE __miniflare_do_name (name TEXT PRIMARY KEY)",
        "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
        "INSERT INTO meta VALUES ('storage_version', '3')",
      ]);
      database(join(objects, "p-Other", "6a7b.sqlite"), ["CREATE TABLE x (y)"]);

      const files = fs as unknown as FsModule;
      const found = await diagnose(files, join, dir, nodeLocalStorage(files));
      expect(found.problems).toEqual([
        expect.stringContaining(
          "1 local Durable Object in .wrangler/state/v3/do holds storage this release cannot read",
        ),
      ]);
      // The true cause, the one file, and a fix that keeps every other object's tasks.
      expect(found.problems[0]).toContain(
        "p-EdgelinkContext/0a1b.sqlite: an unversioned development build's schema (its schema_version 14)",
      );
      expect(found.problems[0]).toContain("remove that file");
      expect(found.problems[0]).not.toContain("8c9d");
      expect(found.problems[0]).not.toContain("9e0f");
      rmSync(old);
      expect((await diagnose(files, join, dir, nodeLocalStorage(files))).problems).toEqual([]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("B1: reads them without Node's experimental SQLite warning on stderr (a user did not ask for SQLite)", async () => {
    const dir = mkdtempSync(join(tmpdir(), "edgelink-doctor-"));
    try {
      for (const f of projectFiles("p", "echo", VERSIONS, "k".repeat(64))) {
        mkdirSync(dirname(join(dir, f.path)), { recursive: true });
        writeFileSync(join(dir, f.path), f.content);
      }
      // A development build's object: named only if the doctor read it with Node's SQLite.
      database(join(dir, ".wrangler/state/v3/do/p-EdgelinkContext/0a1b.sqlite"), [
        "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
        "CREATE TABLE tasks (id TEXT PRIMARY KEY, context_id TEXT NOT NULL)",
        "INSERT INTO meta VALUES ('schema_version', '14')",
      ]);
      // The CLI as its own process: the warning is Node's, printed once per process.
      const cli = join(dir, "cli.mjs");
      await build({
        entryPoints: [join(import.meta.dirname, "../../src/cli/main.ts")],
        outfile: cli,
        bundle: true,
        format: "esm",
        platform: "node",
        target: "node20",
        logLevel: "silent",
      });
      const child = spawn(process.execPath, [cli, "doctor", dir]);
      let output = "";
      child.stdout.on("data", (d) => {
        output += d;
      });
      child.stderr.on("data", (d) => {
        output += d;
      });
      await new Promise((resolve) => child.on("close", resolve));
      expect(output).toContain("p-EdgelinkContext/0a1b.sqlite");
      expect(output).not.toContain("ExperimentalWarning");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
