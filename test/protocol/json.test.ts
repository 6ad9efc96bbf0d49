import { afterEach, describe, expect, it, vi } from "vitest";
import { flatText, nowIso } from "../../src/protocol/json";

describe("nowIso (A2A §5.6.1 timestamps; formatted once per millisecond, issue 10)", () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it("follows the clock: the remembered string never outlives its millisecond", () => {
    vi.useFakeTimers();
    vi.setSystemTime(new Date("2026-01-02T03:04:05.006Z"));
    expect(nowIso()).toBe("2026-01-02T03:04:05.006Z");
    expect(nowIso()).toBe("2026-01-02T03:04:05.006Z");
    vi.setSystemTime(new Date("2026-01-02T03:04:05.007Z"));
    expect(nowIso()).toBe("2026-01-02T03:04:05.007Z");
    vi.setSystemTime(new Date("2025-12-31T23:59:59.999Z"));
    expect(nowIso()).toBe("2025-12-31T23:59:59.999Z");
  });

  it("B1: formats each millisecond as toISOString does, across minutes, days, and years before 1970 or past 9999", () => {
    vi.useFakeTimers();
    const at = (iso: string) => {
      vi.setSystemTime(new Date(iso));
      return nowIso();
    };
    // The same minute, then the next, the next day and year: only the seconds were added.
    for (const iso of [
      "2026-01-02T03:04:05.006Z",
      "2026-01-02T03:04:59.999Z",
      "2026-01-02T03:05:00.000Z",
      "2026-01-02T03:05:00.010Z",
      "2026-01-02T23:59:59.999Z",
      "2026-01-03T00:00:00.000Z",
      "1969-12-31T23:59:58.001Z",
      "1969-12-31T23:59:59.999Z",
      "+010000-01-01T00:00:01.002Z",
      "+010000-01-01T00:00:01.003Z",
      "-000001-06-01T12:30:45.678Z",
    ]) {
      expect(at(iso)).toBe(new Date(iso).toISOString());
    }
    for (
      let ms = Date.UTC(2026, 0, 2, 3, 4, 58, 990);
      ms < Date.UTC(2026, 0, 2, 3, 5, 1);
      ms += 7
    ) {
      vi.setSystemTime(ms);
      expect(nowIso()).toBe(new Date(ms).toISOString());
    }
  });
});

describe("flatText (a handler's answer copied flat once)", () => {
  it("keeps every string as it is, character for character", () => {
    const long = "x".repeat(5000);
    const made = (a: string, b: string) => `${a}${b}`;
    for (const text of [
      "",
      "hi",
      "echo: loop 123",
      made("echo: ", "a longer answer"),
      made("😀", " split after its first code unit"),
      made("\u00e9t\u00e9 ", "\ud800 lone surrogate kept"),
      made(long, long),
    ]) {
      expect(flatText(text)).toBe(text);
    }
  });
});
