import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { HistoryStore } from "../../../src/conversation/history/history-store";
import { windowSource } from "../../../src/conversation/history/window-source";
import type { Item } from "../../../src/history/items";
import { estimateTokens } from "../../../src/history/tokens";
import { KEEP_SEEK_ROWS, PINNED_LIMIT, readWindow } from "../../../src/history/window-reader";
import { contextObjectName } from "../../../src/storage/ids";
import { CONTEXT_SCHEMA } from "../../../src/storage/schema";
import { ensureSchema } from "../../../src/storage/schema-version";
import { itemAt } from "../../support/window-items";

function stubOf(name: string) {
  const ns = env.EDGELINK_CONTEXT;
  return ns.get(ns.idFromName(contextObjectName("", `window-keep-${name}`)));
}

/** A store over the object's SQLite holding `n` items of a long conversation. */
function filledStore(storage: DurableObjectStorage, n: number): HistoryStore<Item> {
  ensureSchema(storage, CONTEXT_SCHEMA); // white-box: the schema a first write makes
  const store = new HistoryStore<Item>(storage);
  storage.transactionSync(() => {
    for (let i = 0; i < n; i++) store.append(itemAt(i));
  });
  return store;
}

const at = (n: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, n)).toISOString();

/** A turn in progress: its question, then `rounds` calls with outputs of `chars` characters. */
function turn(rounds: number, chars: number): Item[] {
  const items: Item[] = [
    {
      type: "message",
      id: "u-now",
      role: "user",
      content: ["Check it many times"],
      createdAt: at(0),
      interrupted: false,
      extra: {},
    },
  ];
  for (let k = 0; k < rounds; k++) {
    items.push(
      {
        type: "function_call",
        id: `rc${k}`,
        name: "lookup",
        arguments: `{"k":${k}}`,
        callId: `round-call-${k}`,
        createdAt: at(k + 1),
      },
      {
        type: "function_call_output",
        id: `ro${k}`,
        name: "lookup",
        callId: `round-call-${k}`,
        output: k === 0 ? "short" : `${k}:${"r".repeat(chars)}`,
        isError: false,
        createdAt: at(k + 1),
      },
    );
  }
  return items;
}

describe("a window that must carry a turn's question and current round (F25, issue 10)", () => {
  it("F25 F8 F10: the kept items are read past the budget across pages, sent in order, their large outputs cut to fit", async () => {
    const result = await runInDurableObject(stubOf("seek"), async (_i, state) => {
      const store = filledStore(state.storage, 500);
      const current = turn(12, 1200);
      state.storage.transactionSync(() => {
        for (const item of current) store.append(item);
      });
      const policy = { maxTokens: 1000, pageSize: 4 };
      const keep = new Set(current.map((item) => item.id));
      return {
        current,
        kept: await readWindow(windowSource(store), { ...policy, keep }),
        plain: await readWindow(windowSource(store), policy),
      };
    });
    const { current, kept, plain } = result;
    const ids = kept.items.map((item) => item.id);
    // Every kept item is there, in the stored order, after the pinned instructions.
    expect(ids.filter((id) => id === "u-now" || /^r[co]\d+$/.test(id))).toEqual(
      current.map((item) => item.id),
    );
    expect(kept.items[0]).toMatchObject({ role: "system" });
    expect(estimateTokens(kept.items)).toBeLessThanOrEqual(1000);
    // The eleven large outputs were cut, the short one sent whole.
    expect(kept.shortened).toBe(11);
    expect(kept.items.find((item) => item.id === "ro0")).toEqual(current[2]);
    // Without `keep` the same budget is spent on the newest rounds: the question is not read.
    expect(plain.items.some((item) => item.id === "u-now")).toBe(false);
    expect(plain.shortened).toBe(0);
  });

  it("F25: looking for kept items stops after KEEP_SEEK_ROWS rows past the budget", async () => {
    const window = await runInDurableObject(stubOf("bound"), async (_i, state) => {
      const store = filledStore(state.storage, 3000);
      return readWindow(windowSource(store), {
        maxTokens: 100,
        keep: new Set(["not-a-stored-item"]),
      });
    });
    expect(window.rowsRead).toBeGreaterThan(KEEP_SEEK_ROWS);
    expect(window.rowsRead).toBeLessThanOrEqual(KEEP_SEEK_ROWS + 2 * 64 + PINNED_LIMIT + 1);
    expect(estimateTokens(window.items)).toBeLessThanOrEqual(100);
  });
});
