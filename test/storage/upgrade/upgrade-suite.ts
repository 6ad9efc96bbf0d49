import { env, evictDurableObject, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { contextObjectName } from "../../../src/storage/ids";
import { CONTEXT_SCHEMA } from "../../../src/storage/schema";
import { createSchema, inspectSchema, schemaVersion } from "../../../src/storage/schema-version";
import { artifactText, rpc, userMessage } from "../../support/helpers";
import { type ConversationTasks, conversationReads } from "./conversation-reads";

type Json = Record<string, unknown>;

/**
 * A conversation as an earlier release wrote it: its `sqlite_master` statements in creation
 * order, every row of every table, and the answers of every read before any upgrade.
 */
export interface RecordedConversation {
  note: string;
  tasks: ConversationTasks;
  schema: { type: string; name: string; sql: string | null }[];
  columns: Record<string, string[]>;
  rows: Record<string, unknown[][]>;
  reads: Record<string, unknown>;
}

/** Every object of the database but the runtime's and SQLite's own, as SQL text. */
function master(sql: SqlStorage) {
  return sql
    .exec<{ type: string; name: string; sql: string | null }>(
      "SELECT type, name, sql FROM sqlite_master WHERE name NOT GLOB '_*' AND name NOT GLOB 'sqlite_*' ORDER BY type, name",
    )
    .toArray()
    .map((o) => ({ ...o, sql: o.sql?.replace(/\s+/g, " ") ?? null }));
}

/** The answer with every ListTasks page token as whether there was one. */
function opaqueTokens(answer: unknown): unknown {
  return JSON.parse(JSON.stringify(answer), (key, value) =>
    key === "nextPageToken" && typeof value === "string" ? value !== "" : value,
  );
}

const stubOf = (contextId: string) =>
  env.EDGELINK_CONTEXT.get(env.EDGELINK_CONTEXT.idFromName(contextObjectName("", contextId)));

/**
 * The upgrade's tests for one recorded conversation: every read answers as it did, the
 * schema becomes exactly a new object's, and the conversation takes new messages.
 * `tokensKept`: the upgrade keeps the listing order, so a page token issued before still
 * reads the same next page (otherwise it is refused, naming it).
 */
export function upgradeSuite(version: number, recorded: RecordedConversation, tokensKept: boolean) {
  /**
   * Writes the recorded database into the conversation's object, statement by statement as
   * that release made it, once (files share storage in one workerd).
   */
  async function restoreRecorded(): Promise<DurableObjectStub> {
    const stub = stubOf(recorded.tasks.contextId);
    const written = await runInDurableObject(stub, (_i, state) => {
      const sql = state.storage.sql;
      if (inspectSchema(sql, CONTEXT_SCHEMA).state !== "none") return false;
      state.storage.transactionSync(() => {
        for (const o of recorded.schema) if (o.sql) sql.exec(o.sql);
        for (const [table, rows] of Object.entries(recorded.rows)) {
          const columns = recorded.columns[table] ?? [];
          const marks = columns.map(() => "?").join(", ");
          sql.exec(`DELETE FROM ${table}`); // the baseline's own rows (the listing clock)
          for (const row of rows as SqlStorageValue[][]) {
            sql.exec(`INSERT INTO ${table} (${columns.join(", ")}) VALUES (${marks})`, ...row);
          }
        }
      });
      return true;
    });
    // Woken again, the object finds the recorded version and migrates it. Once migrated (an
    // earlier test of the file), it is left running: evicting it then waited about 15 s for
    // the earlier reads' subscribe streams to close, three times at the end of every run.
    if (written) await evictDurableObject(stub);
    return stub;
  }

  describe(`a conversation written at schema version ${version} reads the same after the upgrade`, () => {
    it(`B1: every read (GetTask, ListTasks and its pages, history, subscribe and replay, webhook configs) answers what version ${version} answered`, async () => {
      const stub = await restoreRecorded();
      const reads = await conversationReads(recorded.tasks);
      for (const [name, answer] of Object.entries(recorded.reads)) {
        // Page tokens are opaque: a page that had one has one (and it reads the next page,
        // compared as `listSecond`), a last page has none.
        expect(opaqueTokens(reads[name]), name).toEqual(opaqueTokens(answer));
      }
      expect(Object.keys(reads).sort()).toEqual(Object.keys(recorded.reads).sort());
      // Migrated to this release's version, to exactly the schema a new object gets.
      const fresh = stubOf(`upgrade-fresh-${crypto.randomUUID()}`);
      const wanted = await runInDurableObject(fresh, (_i, state) => {
        createSchema(state.storage, CONTEXT_SCHEMA);
        return master(state.storage.sql);
      });
      const migrated = await runInDurableObject(stub, (_i, state) => ({
        found: inspectSchema(state.storage.sql, CONTEXT_SCHEMA),
        master: master(state.storage.sql),
      }));
      expect(migrated.found).toEqual({
        state: "current",
        version: schemaVersion(CONTEXT_SCHEMA),
        behind: false,
      });
      expect(migrated.master).toEqual(wanted);
    });

    it(`B1: a page token issued before the upgrade ${tokensKept ? "reads the same next page" : "is refused as InvalidParams naming it (list again), never a wrong page"}`, async () => {
      await restoreRecorded();
      const { contextId } = recorded.tasks;
      const token = (recorded.reads.listFirst as { result: { nextPageToken: string } }).result
        .nextPageToken;
      expect(token).not.toBe("");
      const { status, body } = await rpc("ListTasks", { contextId, pageSize: 2, pageToken: token });
      expect(status).toBe(200);
      if (tokensKept) {
        expect(opaqueTokens(body)).toEqual(opaqueTokens(recorded.reads.listSecond));
        return;
      }
      const error = body.error as Json;
      expect(error.code).toBe(-32602);
      expect(String(error.message)).toContain("list again from the first page");
      expect(JSON.stringify(error.data)).toContain("params.pageToken");
    });

    it("B1: after the upgrade the conversation takes new messages: the waiting task completes, a new task lists first", async () => {
      await restoreRecorded();
      const { contextId, waiting } = recorded.tasks;
      const answered = await rpc("SendMessage", {
        message: userMessage("Ada", { contextId, taskId: waiting }),
      });
      const task = (answered.body.result as Json).task as Json;
      expect(task.id).toBe(waiting);
      expect((task.status as Json).state).toBe("TASK_STATE_COMPLETED");
      const next = await rpc("SendMessage", { message: userMessage("after", { contextId }) });
      const fresh = (next.body.result as Json).task as Json;
      const listed = (await rpc("ListTasks", { contextId, pageSize: 10 })).body.result as Json;
      const ids = (listed.tasks as Json[]).map((t) => t.id);
      // The new task, the task just answered, then every other task in its recorded order.
      const before = ((recorded.reads.listAll as Json).result as { tasks: Json[] }).tasks
        .map((t) => t.id)
        .filter((id) => id !== waiting);
      expect(ids).toEqual([fresh.id, waiting, ...before]);
      const got = (await rpc("GetTask", { id: waiting })).body.result as Json;
      expect((got.history as Json[]).map((m) => (m.parts as Json[])[0]?.text)).toEqual([
        "hello",
        "Hi! What's your name?",
        "Ada",
      ]);
      expect(artifactText(got)).toBe("Nice to meet you, Ada!");
    });
  });
}
