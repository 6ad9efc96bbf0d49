import { describe, expect, it } from "vitest";
import { setBounded } from "../../src/storage/bounded-map";

describe("a bounded map", () => {
  it("keeps at most its limit, dropping the entry least recently set", () => {
    const map = new Map<string, number>();
    for (const [i, key] of ["a", "b", "c"].entries()) setBounded(map, key, i, 2);
    expect([...map]).toEqual([
      ["b", 1],
      ["c", 2],
    ]);
    // Set again, an entry becomes the newest: the other one goes next.
    setBounded(map, "b", 10, 2);
    setBounded(map, "d", 3, 2);
    expect([...map]).toEqual([
      ["b", 10],
      ["d", 3],
    ]);
  });

  it("an entry set again takes no room of its own", () => {
    const map = new Map([["a", 1]]);
    setBounded(map, "a", 2, 1);
    expect([...map]).toEqual([["a", 2]]);
  });
});
