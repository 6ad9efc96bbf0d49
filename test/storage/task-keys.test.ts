import { describe, expect, it } from "vitest";
import { LIMITS } from "../../src/protocol/limits";
import { keyedTaskId, TASK_KEY_SUFFIX_LENGTH, taskIdParts } from "../../src/storage/task-keys";

describe("a task id's key", () => {
  it("B12: an id is its sealed part, a dot and the key in decimal; the parts come back", () => {
    expect(keyedTaskId("q8Zk_-3", 42)).toBe("q8Zk_-3.42");
    expect(taskIdParts("q8Zk_-3.42")).toEqual({ sealed: "q8Zk_-3", key: 42 });
    expect(taskIdParts("q8Zk_-3")).toEqual({ sealed: "q8Zk_-3", key: null });
    const largest = 10 ** 15 - 1;
    expect(taskIdParts(keyedTaskId("s", largest))).toEqual({ sealed: "s", key: largest });
  });

  it("B12: a suffix that is not a key as issued is no id at all", () => {
    for (const id of [
      "s.",
      "s.0",
      "s.01",
      "s.-1",
      "s.+1",
      "s.1e3",
      "s.x",
      "s.1.2",
      "s. 1",
      `s.${"9".repeat(16)}`,
    ]) {
      expect(taskIdParts(id), id).toBeNull();
    }
    for (const key of [0, -1, 1.5, 10 ** 15, Number.NaN]) {
      expect(() => keyedTaskId("s", key), String(key)).toThrow(RangeError);
    }
  });

  it("B12: the task id length limit leaves room for the longest key", () => {
    const sealedMax = Math.ceil(((12 + 3 * 256 + 16) * 4) / 3);
    expect(LIMITS.taskIdLength).toBe(sealedMax + TASK_KEY_SUFFIX_LENGTH);
  });
});
