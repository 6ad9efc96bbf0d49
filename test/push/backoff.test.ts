import { describe, expect, it } from "vitest";
import {
  backoffCeiling,
  DEFAULT_BACKOFF,
  isRetryableStatus,
  jitteredDelay,
  nextDelay,
  parseRetryAfter,
} from "../../src/push/backoff";

const SEC = 1000;
const MIN = 60 * SEC;
const HOUR = 60 * MIN;
const T0 = Date.UTC(2026, 0, 1);

describe("backoff defaults (issue 5: 24 h horizon, 12 attempts)", () => {
  it("are documented values", () => {
    expect(DEFAULT_BACKOFF).toMatchObject({
      initialDelayMs: 30 * SEC,
      maxDelayMs: 6 * HOUR,
      horizonMs: 24 * HOUR,
      maxAttempts: 12,
    });
  });

  it("the un-jittered schedule of the defaults fits in the horizon", () => {
    let total = 0;
    for (let n = 0; n < DEFAULT_BACKOFF.maxAttempts - 1; n++) total += backoffCeiling(n);
    expect(total).toBeLessThan(DEFAULT_BACKOFF.horizonMs);
    expect(total).toBeGreaterThan(12 * HOUR);
  });
});

describe("backoffCeiling (H8: min(initial × 2^n, max))", () => {
  const options = { initialDelayMs: 1000, maxDelayMs: 60_000 };

  it("doubles from the initial delay", () => {
    expect([0, 1, 2, 3, 4, 5].map((n) => backoffCeiling(n, options))).toEqual([
      1000, 2000, 4000, 8000, 16_000, 32_000,
    ]);
  });

  it("is monotone and capped at maxDelay, even for huge n", () => {
    let previous = 0;
    for (let n = 0; n < 2000; n++) {
      const ceiling = backoffCeiling(n, options);
      expect(ceiling).toBeGreaterThanOrEqual(previous);
      expect(ceiling).toBeLessThanOrEqual(60_000);
      previous = ceiling;
    }
    expect(backoffCeiling(6, options)).toBe(60_000);
    expect(backoffCeiling(1e6, options)).toBe(60_000);
  });
});

describe("jitteredDelay (H8 better: full jitter never above maxDelay)", () => {
  const options = { initialDelayMs: 1000, maxDelayMs: 60_000 };

  it("scales the ceiling by the random draw", () => {
    expect(jitteredDelay(2, { ...options, random: () => 0 })).toBe(0);
    expect(jitteredDelay(2, { ...options, random: () => 0.5 })).toBe(2000);
    expect(jitteredDelay(2, { ...options, random: () => 0.25 })).toBe(1000);
  });

  it("with random = 0.9999 stays below maxDelay at every attempt", () => {
    for (let n = 0; n < 64; n++) {
      const delay = jitteredDelay(n, { ...options, random: () => 0.9999 });
      expect(delay).toBeLessThanOrEqual(60_000);
      expect(delay).toBeLessThanOrEqual(backoffCeiling(n, options));
    }
    expect(jitteredDelay(30, { ...options, random: () => 0.9999 })).toBe(59_994);
  });

  it("a random source returning 1 or more, or negative, is clamped", () => {
    expect(jitteredDelay(30, { ...options, random: () => 1 })).toBe(60_000);
    expect(jitteredDelay(30, { ...options, random: () => 7 })).toBe(60_000);
    expect(jitteredDelay(3, { ...options, random: () => -1 })).toBe(0);
  });

  it("uses Math.random by default, within [0, ceiling]", () => {
    for (let i = 0; i < 100; i++) {
      const delay = jitteredDelay(3, options);
      expect(delay).toBeGreaterThanOrEqual(0);
      expect(delay).toBeLessThanOrEqual(8000);
    }
  });
});

describe("nextDelay (H7: attempts and horizon; dead letter is null)", () => {
  const options = {
    initialDelayMs: 1000,
    maxDelayMs: 60_000,
    horizonMs: HOUR,
    maxAttempts: 5,
    random: () => 0.5,
  };

  it("after the first failure waits a jittered initial delay", () => {
    expect(nextDelay({ attempts: 1, firstAttemptAt: T0, now: T0 }, options)).toBe(500);
    expect(nextDelay({ attempts: 3, firstAttemptAt: T0, now: T0 + 10 * SEC }, options)).toBe(2000);
  });

  it("returns null once attempts reach maxAttempts (H7: no retry once attempt ≥ max)", () => {
    expect(nextDelay({ attempts: 4, firstAttemptAt: T0, now: T0 }, options)).not.toBeNull();
    expect(nextDelay({ attempts: 5, firstAttemptAt: T0, now: T0 }, options)).toBeNull();
    expect(nextDelay({ attempts: 6, firstAttemptAt: T0, now: T0 }, options)).toBeNull();
  });

  it("returns null at and past the horizon", () => {
    expect(nextDelay({ attempts: 2, firstAttemptAt: T0, now: T0 + HOUR }, options)).toBeNull();
    expect(nextDelay({ attempts: 2, firstAttemptAt: T0, now: T0 + 2 * HOUR }, options)).toBeNull();
  });

  it("shortens a delay that would end past the horizon so the last attempt is at it", () => {
    const now = T0 + HOUR - 100;
    expect(nextDelay({ attempts: 2, firstAttemptAt: T0, now }, options)).toBe(100);
  });

  it("with the defaults, 12 attempts then null", () => {
    const state = { firstAttemptAt: T0, now: T0 };
    expect(nextDelay({ ...state, attempts: 11 })).not.toBeNull();
    expect(nextDelay({ ...state, attempts: 12 })).toBeNull();
    expect(nextDelay({ ...state, attempts: 1, now: T0 + 24 * HOUR })).toBeNull();
    expect(nextDelay({ ...state, attempts: 1, now: T0 + 24 * HOUR - 1 })).not.toBeNull();
  });

  it("H8: a Retry-After replaces the jitter, capped at maxDelay", () => {
    const state = { attempts: 1, firstAttemptAt: T0, now: T0 };
    expect(nextDelay({ ...state, retryAfterMs: 7000 }, options)).toBe(7000);
    expect(nextDelay({ ...state, retryAfterMs: 0 }, options)).toBe(0);
    expect(nextDelay({ ...state, retryAfterMs: 10 * HOUR }, options)).toBe(60_000);
  });

  it("a Retry-After does not extend the attempts or the horizon", () => {
    expect(
      nextDelay({ attempts: 5, firstAttemptAt: T0, now: T0, retryAfterMs: 1000 }, options),
    ).toBeNull();
    expect(
      nextDelay({ attempts: 2, firstAttemptAt: T0, now: T0 + HOUR, retryAfterMs: 1 }, options),
    ).toBeNull();
  });
});

describe("parseRetryAfter (H8: seconds or HTTP date)", () => {
  const now = Date.UTC(2026, 9, 21, 7, 28, 0);

  it("reads delay-seconds", () => {
    expect(parseRetryAfter("120", now)).toBe(120_000);
    expect(parseRetryAfter(" 0 ", now)).toBe(0);
  });

  it("reads an HTTP date relative to now; a past date is 0", () => {
    expect(parseRetryAfter("Wed, 21 Oct 2026 07:28:30 GMT", now)).toBe(30_000);
    expect(parseRetryAfter("Wed, 21 Oct 2026 08:28:00 GMT", now)).toBe(HOUR);
    expect(parseRetryAfter("Wed, 21 Oct 2026 07:00:00 GMT", now)).toBe(0);
  });

  it.each([null, undefined, "", "soon", "-5", "1.5", "12abc", "Fooday, 99 Nah 2026"])(
    "ignores %j",
    (value) => {
      expect(parseRetryAfter(value, now)).toBeUndefined();
    },
  );
});

describe("isRetryableStatus (H7: 408, 429, 5xx retried; other 4xx never)", () => {
  it.each([408, 429, 500, 501, 502, 503, 504, 599])("%i is retried", (status) => {
    expect(isRetryableStatus(status)).toBe(true);
  });

  it.each([400, 401, 403, 404, 405, 409, 410, 413, 415, 422, 499, 301, 302, 200, 600])(
    "%i is not",
    (status) => {
      expect(isRetryableStatus(status)).toBe(false);
    },
  );
});
