import { describe, expect, it } from "vitest";
import type { Item } from "../../src/history/items";
import { shortenedMarker, shortenOutputs } from "../../src/history/shorten";
import { estimateTokens } from "../../src/history/tokens";
import { truncateItems } from "../../src/history/truncate";
import { mk } from "./helpers";

/** A tool output of `chars` characters (`chars / 4` estimated payload tokens, F7). */
function output(id: string, chars: number, fill = "x"): Item {
  return { ...mk.output(id, `c-${id}`), output: fill.repeat(chars) } as Item;
}
const outputText = (item: Item | undefined) =>
  item?.type === "function_call_output" ? item.output : "";

describe("tool outputs a turn must send are cut to fit the window (F25, issue 10)", () => {
  const round = (sizes: number[]) => [
    mk.user("u"),
    ...sizes.flatMap((size, i) => [mk.call(`call${i}`, `c-out${i}`), output(`out${i}`, size)]),
  ];
  const ids = (items: Item[]) => new Set(items.map((item) => item.id));

  it("F25 F7: within budget nothing changes", () => {
    const items = round([400, 400]);
    const result = shortenOutputs(items, ids(items), estimateTokens(items));
    expect(result).toEqual({ items, shortened: 0 });
  });

  it("F25 F7: the room left is shared fairly: small outputs whole, large ones cut with a marker, the total within budget", () => {
    const items = round([20_000, 40, 8000]);
    const budget = 1200;
    const { items: fitted, shortened } = shortenOutputs(items, ids(items), budget);
    expect(shortened).toBe(2);
    expect(estimateTokens(fitted)).toBeLessThanOrEqual(budget);
    expect(estimateTokens(fitted)).toBeGreaterThan(budget - 10);
    expect(outputText(fitted[4])).toBe("x".repeat(40));
    // Both large outputs get the same share, each ends with a marker naming what it kept.
    const cut = [outputText(fitted[2]), outputText(fitted[6])];
    const [a, b] = cut.map((text) => Math.floor(text.length / 4));
    expect(Math.abs((a ?? 0) - (b ?? 0))).toBeLessThanOrEqual(1);
    for (const [text, total] of [
      [cut[0] ?? "", 20_000],
      [cut[1] ?? "", 8000],
    ] as const) {
      const kept = Number(/first (\d+) of/.exec(text)?.[1]);
      expect(kept).toBeGreaterThan(1500);
      expect(text).toBe(`${"x".repeat(kept)}${shortenedMarker(kept, total)}`);
    }
    // Everything else is left as it was.
    for (const i of [0, 1, 3, 4, 5]) expect(fitted[i]).toBe(items[i]);
  });

  it("F25: only the outputs named are cut; when the rest alone is over, they are cut to their markers", () => {
    const older = output("old", 4000);
    const items = [older, ...round([4000])];
    const { items: fitted } = shortenOutputs(items, new Set(["out0"]), 10);
    expect(fitted[0]).toBe(older);
    expect(outputText(fitted[3])).toBe(shortenedMarker(0, 4000));
  });

  it("F25: a cut never splits a surrogate pair", () => {
    for (const prefix of ["", "a"]) {
      for (let budget = 40; budget < 60; budget++) {
        const out = { ...output("out", 0), output: `${prefix}${"😀".repeat(400)}` } as Item;
        const items = [mk.user("u"), mk.call("call", "c-out"), out];
        const text = outputText(shortenOutputs(items, new Set(["out"]), budget).items[2]);
        const head = text.slice(prefix.length, text.indexOf("\n[Edgelink"));
        // Compared as a flag: a lone surrogate in a failure message breaks the runner's socket.
        expect(head === "😀".repeat(head.length / 2)).toBe(true);
      }
    }
  });

  it("F8 F10: truncation never removes the items it is told to keep, and still drops a pair together", () => {
    const items = [
      mk.user("u1"),
      mk.call("a", "ca"),
      { ...mk.output("ao", "ca"), output: "y".repeat(400) } as Item,
      mk.user("u2"),
      mk.call("b", "cb"),
      { ...mk.output("bo", "cb"), output: "z".repeat(400) } as Item,
    ];
    const kept = truncateItems(items, { maxTokens: 20 }, new Set(["b", "bo"])).kept;
    expect(kept.map((item) => item.id)).toEqual(["u2", "b", "bo"]);
    expect(truncateItems(items, { maxTokens: 20 }).kept.map((item) => item.id)).toEqual(["u2"]);
  });
});
