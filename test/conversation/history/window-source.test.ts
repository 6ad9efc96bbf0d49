import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { HistoryStore } from "../../../src/conversation/history/history-store";
import { windowSource } from "../../../src/conversation/history/window-source";
import { type Item, isSummary } from "../../../src/history/items";
import { SUMMARY_LABEL, type Summarizer, summaryMessage } from "../../../src/history/summarize";
import { estimateTokens } from "../../../src/history/tokens";
import {
  type ConversationWindow,
  readWindow,
  type WindowPolicy,
} from "../../../src/history/window-reader";
import { contextObjectName } from "../../../src/storage/ids";
import { CONTEXT_SCHEMA } from "../../../src/storage/schema";
import { ensureSchema } from "../../../src/storage/schema-version";
import { countedStorage } from "../../support/counted-storage";
import { itemAt } from "../../support/window-items";

function stubOf(name: string) {
  const ns = env.EDGELINK_CONTEXT;
  return ns.get(ns.idFromName(contextObjectName("", `window-${name}`)));
}

/** A store over the object's SQLite whose statements (text and cursor) are recorded. */
function countedStore(storage: DurableObjectStorage) {
  ensureSchema(storage, CONTEXT_SCHEMA); // white-box: the schema a first write makes
  const { proxy, measure } = countedStorage(storage);
  const store = new HistoryStore<Item>(proxy);
  // Filled through a store of its own, so 100,000 appends are not recorded.
  const filler = new HistoryStore<Item>(storage);
  return {
    store,
    fill(n: number) {
      filler.forget();
      for (let start = filler.count(); start < n; start += 5000) {
        storage.transactionSync(() => {
          for (let i = start; i < Math.min(n, start + 5000); i++) filler.append(itemAt(i));
        });
      }
    },
    /** Statements and SQLite rows read from here on. */
    measure,
  };
}

/** Every call has its output in the window and every output its call (F10, E11). */
function pairsIntact(items: readonly Item[]): boolean {
  const calls = new Set(items.flatMap((i) => (i.type === "function_call" ? [i.callId] : [])));
  const outputs = new Set(
    items.flatMap((i) => (i.type === "function_call_output" ? [i.callId] : [])),
  );
  return [...calls].every((c) => outputs.has(c)) && [...outputs].every((c) => calls.has(c));
}

const text = (item: Item | undefined) =>
  item?.type === "message" ? String(item.content[0]) : item?.type;

function recordingSummarizer(answer = (n: number) => `summary number ${n}`) {
  const transcripts: string[] = [];
  const summarizer: Summarizer = async (transcript) => {
    transcripts.push(transcript);
    return answer(transcripts.length);
  };
  return { summarizer, transcripts };
}

describe("the window a model turn reads (F25, issue 10)", () => {
  it("F25 F8: a turn over 100,000 items reads its window, not the conversation: the same rows as over 10", async () => {
    const result = await runInDurableObject(stubOf("100k"), async (_i, state) => {
      const small = countedStore(state.storage);
      const outcome: Record<
        string,
        { rowsRead: number; queries: string[]; window: ConversationWindow }
      > = {};
      for (const n of [10, 100_000]) {
        small.store.clear();
        small.fill(n);
        const done = small.measure();
        const window = await readWindow(windowSource(small.store), { maxTokens: 2000 });
        outcome[n] = { ...done(), window };
      }
      return outcome;
    });
    const big = result[100_000];
    const tiny = result[10];
    if (!big || !tiny) throw new Error("missing measurement");
    // The 10-item conversation fits whole; the 100k one sends the newest items within budget.
    expect(tiny.window.items).toHaveLength(10);
    expect(big.window.tokens).toBeLessThanOrEqual(2000);
    expect(big.window.items.length).toBeGreaterThan(20);
    // F8: the system message, 100,000 items back, is still sent first (through its index).
    expect(text(big.window.items[0])).toBe("You answer questions about the weather.");
    expect(big.window.items.at(-1)?.id).toBe(itemAt(99_999).id);
    expect(pairsIntact(big.window.items)).toBe(true);
    // A few pages and the pinned lookup: SQLite read a few hundred rows of 100,000.
    expect(big.rowsRead).toBeLessThan(400);
    expect(big.window.rowsRead).toBeLessThan(400);
    for (const query of big.queries) expect(query).toMatch(/LIMIT|meta/);
    expect(big.queries.length).toBeLessThanOrEqual(10);
  });

  it("F25 F10 E11: at every budget and page size the window's edge keeps a call with its output and stays within budget", async () => {
    const failures = await runInDurableObject(stubOf("edges"), async (_i, state) => {
      const { store, fill } = countedStore(state.storage);
      fill(61);
      const bad: string[] = [];
      for (const pageSize of [1, 2, 3, 7, 64]) {
        for (let maxTokens = 20; maxTokens <= 700; maxTokens += 13) {
          const window = await readWindow(windowSource(store), { maxTokens, pageSize });
          const tokens = estimateTokens(window.items);
          if (!pairsIntact(window.items)) bad.push(`pair split at ${maxTokens}/${pageSize}`);
          // Over budget only when nothing but protected items is left: instructions and the last turn.
          if (tokens > maxTokens && window.items.length > 3) {
            bad.push(`${tokens} tokens > ${maxTokens} at page ${pageSize}`);
          }
          if (window.items.at(-1)?.id !== itemAt(60).id) bad.push(`newest missing at ${maxTokens}`);
        }
      }
      return bad;
    });
    expect(failures).toEqual([]);
  });

  it("F25: over budget it summarizes the older part first (stored as the running summary), then truncates; later turns reuse it", async () => {
    const result = await runInDurableObject(stubOf("summary"), async (_i, state) => {
      const { store, fill, measure } = countedStore(state.storage);
      fill(401); // 80 turns
      const { summarizer, transcripts } = recordingSummarizer();
      const policy: WindowPolicy = { maxTokens: 600, keepRecentTurns: 3, summarizer };
      const first = await readWindow(windowSource(store), policy);
      const stored = store.runningSummary();
      const done = measure();
      const second = await readWindow(windowSource(store), policy);
      const secondReads = done();
      const callsAfterSecond = transcripts.length;
      for (let i = 401; i < 461; i++) store.append(itemAt(i)); // 12 more turns
      const third = await readWindow(windowSource(store), policy);
      return { first, second, third, stored, transcripts, secondReads, callsAfterSecond };
    });
    const { first, second, third, stored, transcripts } = result;
    // One summarizer call, over what precedes the three newest user turns.
    expect(first.summarized).toBe(true);
    expect(transcripts[0]).toContain("question 78:");
    expect(transcripts[0]).not.toContain("thanks for town 78");
    // At most `foldMaxTokens` (the budget) of older items go into one summary: the rest is dropped.
    expect(transcripts[0]).not.toContain("question 1:");
    expect(first.unsummarized).toBe(true);
    expect(first.items.map(text).slice(0, 2)).toEqual([
      "You answer questions about the weather.",
      `${SUMMARY_LABEL}\nsummary number 1`,
    ]);
    // The kept turns start at the third newest user message: "thanks for town 78" is one.
    expect(text(first.items[2])).toBe("thanks for town 78");
    expect(first.tokens).toBeLessThanOrEqual(600);
    expect(text(stored?.summary)).toEqual(`${SUMMARY_LABEL}\nsummary number 1`);
    // The next turn starts from the stored summary: no summarizer call, only the recent rows.
    expect(second.summarized).toBe(false);
    expect(result.callsAfterSecond).toBe(1);
    expect(second.items.map((i) => i.id)).toEqual(first.items.map((i) => i.id));
    expect(result.secondReads.rowsRead).toBeLessThan(40);
    // Over budget again: the new summary folds the previous one in (a running summary).
    expect(third.summarized).toBe(true);
    expect(transcripts[1]).toMatch(
      /^assistant: Summary of the earlier conversation:\nsummary number 1\n/,
    );
    expect(text(third.items[1])).toBe(`${SUMMARY_LABEL}\nsummary number 2`);
  });

  it("F25: summarize comes before truncate: with a budget the kept turns overflow, the summary is made and the window is then truncated", async () => {
    const result = await runInDurableObject(stubOf("order"), async (_i, state) => {
      const { store, fill } = countedStore(state.storage);
      fill(101);
      const { summarizer, transcripts } = recordingSummarizer();
      const window = await readWindow(windowSource(store), {
        maxTokens: 70,
        keepRecentTurns: 3,
        summarizer,
      });
      return { window, transcripts, stored: store.runningSummary() };
    });
    expect(result.transcripts).toHaveLength(1);
    expect(result.window.summarized).toBe(true);
    expect(result.window.truncated).toBeGreaterThan(0);
    // Truncation kept the protected items: instructions, the summary, the last user message.
    expect(result.window.items.filter(isSummary)).toHaveLength(1);
    expect(text(result.window.items.at(-1))).toBe("thanks for town 19");
    expect(result.window.tokens).toBeLessThanOrEqual(70);
    expect(result.stored).not.toBeNull();
  });

  it("F25: a failing summarizer (or one answering past its row) costs the summary, not the turn; an abort stores nothing", async () => {
    const result = await runInDurableObject(stubOf("failing"), async (_i, state) => {
      const { store, fill } = countedStore(state.storage);
      fill(101);
      const failing: Summarizer = async () => {
        throw new Error("summarizer down");
      };
      const window = await readWindow(windowSource(store), { maxTokens: 300, summarizer: failing });
      const verbose: Summarizer = async () => "word ".repeat(60_000);
      const tooLong = await readWindow(windowSource(store), {
        maxTokens: 300,
        summarizer: verbose,
      });
      const controller = new AbortController();
      const aborting: Summarizer = async () => {
        controller.abort(new Error("stop"));
        return "never stored";
      };
      const aborted = await readWindow(windowSource(store), {
        maxTokens: 300,
        summarizer: aborting,
        signal: controller.signal,
      }).then(
        () => "resolved",
        (e: Error) => e.message,
      );
      return { window, tooLong, aborted, stored: store.runningSummary() };
    });
    expect(String(result.window.summaryError)).toMatch(/summarizer down/);
    expect(result.window.summarized).toBe(false);
    expect(result.window.tokens).toBeLessThanOrEqual(300);
    // A summary too long for its row is refused like a failure: the turn is truncated.
    expect(String(result.tooLong.summaryError)).toMatch(/running summary is \d+ characters/);
    expect(result.tooLong.tokens).toBeLessThanOrEqual(300);
    expect(result.aborted).toBe("stop");
    expect(result.stored).toBeNull();
  });

  it("F25 F8 E8: a compaction's summary older than the window is sent (F8), or folded into the running summary, never lost", async () => {
    const result = await runInDurableObject(stubOf("compacted"), async (_i, state) => {
      const { store, fill } = countedStore(state.storage);
      fill(1);
      store.append(summaryMessage(SUMMARY_LABEL, "the user lives in Lyon"));
      for (let i = 1; i < 200; i++) store.append(itemAt(i));
      // Without a summarizer it is pinned (F8: the first summary stays), however old.
      const truncated = await readWindow(windowSource(store), { maxTokens: 500 });
      const { summarizer, transcripts } = recordingSummarizer();
      const folded = await readWindow(windowSource(store), {
        maxTokens: 2000,
        summarizer,
        foldMaxTokens: 5000,
      });
      return { truncated: truncated.items.map(text), folded: folded.items.map(text), transcripts };
    });
    expect(result.truncated.slice(0, 2)).toEqual([
      "You answer questions about the weather.",
      `${SUMMARY_LABEL}\nthe user lives in Lyon`,
    ]);
    // With one, it is folded into the running summary and not sent again beside it.
    expect(result.folded.filter((t) => t?.includes("Lyon"))).toEqual([]);
    expect(result.folded[1]).toBe(`${SUMMARY_LABEL}\nsummary number 1`);
    const { transcripts } = result;
    expect(transcripts).toHaveLength(1);
    expect(transcripts[0]).toMatch(
      /^assistant: Summary of the earlier conversation:\nthe user lives in Lyon\n/,
    );
  });

  it("two turns summarizing at once store one running summary (the first one written wins)", async () => {
    const result = await runInDurableObject(stubOf("race"), async (_i, state) => {
      const { store, fill } = countedStore(state.storage);
      fill(201);
      // Each summary waits for its gate, opened in a set order (not timers, which a loaded
      // machine can fire out of order): the second call's first, then the first call's.
      let calls = 0;
      const gates = new Map<number, () => void>();
      let bothWaiting!: () => void;
      const waiting = new Promise<void>((resolve) => {
        bothWaiting = resolve;
      });
      const slow: Summarizer = async () => {
        const n = ++calls;
        await new Promise<void>((resolve) => {
          gates.set(n, resolve);
          if (gates.size === 2) bothWaiting();
        });
        return `summary from call ${n}`;
      };
      const policy = { maxTokens: 400, summarizer: slow };
      const first = readWindow(windowSource(store), policy);
      const second = readWindow(windowSource(store), policy);
      await waiting;
      gates.get(2)?.();
      const b = await second;
      gates.get(1)?.();
      const a = await first;
      return { a: a.items.map(text), b: b.items.map(text), stored: store.runningSummary() };
    });
    // The second call finished first and stored; the first one's summary was not stored.
    expect(text(result.stored?.summary)).toEqual(`${SUMMARY_LABEL}\nsummary from call 2`);
    expect(result.a[1]).toBe(`${SUMMARY_LABEL}\nsummary from call 1`);
    expect(result.b[1]).toBe(`${SUMMARY_LABEL}\nsummary from call 2`);
  });

  it("F25: the running summary is read from SQLite once, not every turn; a summary written is read again", async () => {
    const result = await runInDurableObject(stubOf("summary-memo"), async (_i, state) => {
      const { store, fill, measure } = countedStore(state.storage);
      fill(101);
      const { summarizer } = recordingSummarizer();
      const metaReads = (queries: string[]) =>
        queries.filter((q) => q.startsWith("SELECT value FROM meta")).length;
      const first = measure();
      await readWindow(windowSource(store), { maxTokens: 5000 });
      const firstReads = metaReads(first().queries);
      const second = measure();
      await readWindow(windowSource(store), { maxTokens: 5000 });
      const secondReads = metaReads(second().queries);
      // Over budget: the turn summarizes and stores; the next turn starts from that summary.
      await readWindow(windowSource(store), { maxTokens: 200, summarizer });
      const stored = text(store.runningSummary()?.summary);
      const afterSave = measure();
      const next = await readWindow(windowSource(store), { maxTokens: 200 });
      return {
        firstReads,
        secondReads,
        stored,
        readAfterSave: metaReads(afterSave().queries),
        nextSummary: next.items.map(text).find((t) => t?.startsWith(SUMMARY_LABEL)),
      };
    });
    expect(result.firstReads).toBe(1);
    expect(result.secondReads).toBe(0);
    expect(result.stored).toBe(`${SUMMARY_LABEL}\nsummary number 1`);
    expect(result.readAfterSave).toBe(0);
    expect(result.nextSummary).toBe(`${SUMMARY_LABEL}\nsummary number 1`);
  });

  it("a compaction or a reset of the history drops the running summary", async () => {
    const result = await runInDurableObject(stubOf("reset"), async (_i, state) => {
      const { store, fill } = countedStore(state.storage);
      fill(101);
      const { summarizer } = recordingSummarizer();
      await readWindow(windowSource(store), { maxTokens: 200, summarizer });
      const before = store.runningSummary() !== null;
      store.apply({ removed: [itemAt(1).id], added: [], changed: [] });
      const afterCompaction = store.runningSummary();
      await readWindow(windowSource(store), { maxTokens: 200, summarizer });
      store.clear();
      return { before, afterCompaction, afterClear: store.runningSummary() };
    });
    expect(result.before).toBe(true);
    expect(result.afterCompaction).toBeNull();
    expect(result.afterClear).toBeNull();
  });
});
