/**
 * A dependency that never answers, for the tests of a cut-off. The test proves the cut-off
 * by what it leaves behind (the abort signal the code passed, its reason, the error), never
 * by how long it took: a loaded machine makes any wall-time bound flaky.
 */

/** A `fetch` that never answers; it rejects only when the signal it was given aborts. */
export interface HangingFetch {
  fetch: typeof fetch;
  /** The signal of each call, in order (`undefined` for a call made without one). */
  signals: (AbortSignal | undefined)[];
}

/**
 * A fetch that hangs until its caller aborts. A call without a signal is refused at once,
 * so code that lost its time limit fails the test instead of hanging it.
 * @example
 * const hanging = hangingFetch();
 * await expect(load(url, { fetch: hanging.fetch, timeoutMs: 50 })).rejects.toThrow();
 * expect(hanging.signals[0]?.reason).toMatchObject({ name: "TimeoutError" });
 */
export function hangingFetch(): HangingFetch {
  const signals: (AbortSignal | undefined)[] = [];
  const fetchFn = ((_input: RequestInfo | URL, init?: RequestInit) => {
    const signal = init?.signal ?? undefined;
    signals.push(signal);
    if (!signal) return Promise.reject(new Error("hanging fetch: called without a signal"));
    return new Promise<Response>((_resolve, reject) => {
      if (signal.aborted) reject(signal.reason);
      signal.addEventListener("abort", () => reject(signal.reason), { once: true });
    });
  }) as typeof fetch;
  return { fetch: fetchFn, signals };
}
