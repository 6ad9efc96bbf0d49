import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { HistoryStore, type StoredItem } from "../../src/conversation/history/history-store";
import { CHUNK_CHARS } from "../../src/storage/row-limit";
import { CONTEXT_SCHEMA, PINNED, PINNED_BY_BODY } from "../../src/storage/schema";
import { createSchema, openSchema, type Schema } from "../../src/storage/schema-version";

type Item = StoredItem & Record<string, unknown>;

const scratch = () =>
  env.EDGELINK_CONTEXT.get(env.EDGELINK_CONTEXT.idFromName(`pinned-${crypto.randomUUID()}`));

/** Every kind of row the pinned condition tells apart. */
function items(): Item[] {
  const message = (id: string, role: string, extra?: unknown): Item => ({
    id,
    type: "message",
    role,
    content: [id],
    ...(extra === undefined ? {} : { extra }),
  });
  const long = "x".repeat(CHUNK_CHARS + 10);
  return [
    message("user", "user"),
    message("system", "system"),
    message("developer", "developer"),
    message("assistant", "assistant"),
    message("summary-true", "assistant", { summary: true }),
    message("summary-one", "assistant", { summary: 1 }),
    message("summary-text", "assistant", { summary: "1" }),
    message("summary-false", "assistant", { summary: false }),
    message("extra-list", "assistant", ["summary"]),
    { id: "config", type: "agent_config_update", model: "m" },
    { id: "call", type: "function_call", name: "f", arguments: "{}" },
    // Kept in chunks: no JSON of its own, so only its type can pin it.
    { ...message("system-long", "system"), content: [long] },
    { id: "config-long", type: "agent_config_update", model: long },
  ];
}

describe("a history row's pinned flag (stored, version 9)", () => {
  it("F25: every row the store writes is pinned exactly when the body's JSON condition of earlier versions says so, and the pinned read uses the flag's index", async () => {
    const got = await runInDurableObject(scratch(), (_i, state) => {
      createSchema(state.storage, CONTEXT_SCHEMA);
      const store = new HistoryStore<Item>(state.storage);
      for (const item of items()) store.append(item);
      const sql = state.storage.sql;
      return {
        rows: sql
          .exec<{ id: string; pinned: number; by_body: number }>(
            `SELECT id, pinned, COALESCE(${PINNED_BY_BODY}, 0) AS by_body FROM history_items ORDER BY seq`,
          )
          .toArray(),
        pinned: store.pinned(Number.POSITIVE_INFINITY, 16).map((r) => r.item.id),
        plan: sql
          .exec<{ detail: string }>(
            `EXPLAIN QUERY PLAN SELECT * FROM history_items WHERE ${PINNED} AND seq < 1e9 ORDER BY seq DESC LIMIT 16`,
          )
          .toArray()
          .map((r) => r.detail),
      };
    });
    expect(got.rows.map((r) => [r.id, r.pinned])).toEqual(got.rows.map((r) => [r.id, r.by_body]));
    expect(got.rows.filter((r) => r.pinned === 1).map((r) => r.id)).toEqual([
      "system",
      "developer",
      "summary-true",
      "summary-one",
      "config",
      "config-long",
    ]);
    expect(got.pinned).toEqual([
      "system",
      "developer",
      "summary-true",
      "summary-one",
      "config",
      "config-long",
    ]);
    expect(got.plan.join(" ")).toContain("history_pinned");
  });

  it("B1: rows a version 8 conversation wrote get their flag from the condition they were indexed by, and the pinned read answers the same after the upgrade", async () => {
    const v8: Schema = { ...CONTEXT_SCHEMA, migrations: CONTEXT_SCHEMA.migrations.slice(0, -1) };
    const got = await runInDurableObject(scratch(), (_i, state) => {
      const sql = state.storage.sql;
      createSchema(state.storage, v8);
      // Written as version 8 wrote them: the flag did not exist.
      for (const [seq, item] of items().entries()) {
        const body = JSON.stringify(item);
        const chunks = body.length > CHUNK_CHARS ? Math.ceil(body.length / CHUNK_CHARS) : 0;
        for (let i = 0; i < chunks; i++) {
          sql.exec(
            "INSERT INTO history_chunks (item_id, idx, data) VALUES (?, ?, ?)",
            item.id,
            i,
            body.slice(i * CHUNK_CHARS, (i + 1) * CHUNK_CHARS),
          );
        }
        sql.exec(
          "INSERT INTO history_items (id, seq, task_id, type, body, chunks) VALUES (?, ?, NULL, ?, ?, ?)",
          item.id,
          seq + 1,
          item.type,
          chunks ? null : body,
          chunks,
        );
      }
      const before = sql
        .exec<{ id: string }>(
          `SELECT id FROM history_items WHERE ${PINNED_BY_BODY} AND seq < 1e9 ORDER BY seq`,
        )
        .toArray()
        .map((r) => r.id);
      const opened = openSchema(state.storage, CONTEXT_SCHEMA);
      return {
        refused: opened.refused,
        before,
        after: new HistoryStore<Item>(state.storage)
          .pinned(Number.POSITIVE_INFINITY, 16)
          .map((r) => r.item.id),
        flagged: sql
          .exec<{ id: string }>("SELECT id FROM history_items WHERE pinned = 1 ORDER BY seq")
          .toArray()
          .map((r) => r.id),
      };
    });
    expect(got.refused).toBeNull();
    expect(got.before).toEqual([
      "system",
      "developer",
      "summary-true",
      "summary-one",
      "config",
      "config-long",
    ]);
    expect(got.after).toEqual(got.before);
    expect(got.flagged).toEqual(got.before);
  });
});
