import { afterEach, describe, expect, it, vi } from "vitest";
import { nowIso } from "../../src/protocol/json";

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
});
