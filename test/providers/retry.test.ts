import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { generate } from "../../src/providers/base/collect";
import { ProviderError } from "../../src/providers/base/errors";
import { ModelRequest, type StreamEvent } from "../../src/providers/base/types";
import { openai } from "../../src/providers/openai/openai-chat";
import {
  abortableSleep,
  DEFAULT_RETRY_POLICY,
  retryDelay,
  shouldRetry,
  withRetry,
} from "../../src/providers/retry";
import { collectBatches, FakeProvider, fixtureText } from "./fake-provider";
import { end, failure, ScriptedModel, type Step, start, textScript } from "./scripted-model";

const request = ModelRequest.parse({ messages: [{ role: "user", content: "Hi" }] });

/** A retry wrapper whose waits are recorded instead of slept. */
function retrying(model: ScriptedModel, options: Parameters<typeof withRetry>[1] = {}) {
  const waits: number[] = [];
  const wrapped = withRetry(model, {
    random: () => 0.5,
    sleep: async (ms) => {
      waits.push(ms);
    },
    ...options,
  });
  return { wrapped, waits };
}

function textOf(events: StreamEvent[]): string {
  return events.map((e) => (e.type === "text_delta" ? e.text : "")).join("");
}

async function failureOf(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error("expected a failure");
}

describe("H7: retry decision", () => {
  it("H7: 429 and 5xx are retried, then the successful attempt is streamed", async () => {
    for (const status of [429, 500, 502, 503, 529]) {
      const model = new ScriptedModel({
        scripts: [[{ fail: failure({ status }) }], textScript(["Hel", "lo"])],
      });
      const { wrapped } = retrying(model);
      const events = await collectBatches(wrapped.streamBatches(request));
      expect(model.calls).toHaveLength(2);
      expect(textOf(events)).toBe("Hello");
    }
  });

  it("H7: a retryIf predicate replaces the status rule: a 400 it accepts is retried, a 503 it refuses is not", async () => {
    const asked: [number | null, number][] = [];
    const retryIf = (error: ProviderError, attempt: number) => {
      asked.push([error.status, attempt]);
      return error.status === 400;
    };
    const bad = new ScriptedModel({
      scripts: [[{ fail: failure({ status: 400 }) }], textScript(["ok"])],
    });
    const events = await collectBatches(retrying(bad, { retryIf }).wrapped.streamBatches(request));
    expect(textOf(events)).toBe("ok");
    const busy = new ScriptedModel({
      scripts: [[{ fail: failure({ status: 503 }) }], textScript(["no"])],
    });
    const error = await failureOf(
      collectBatches(retrying(busy, { retryIf }).wrapped.streamBatches(request)),
    );
    expect((error as ProviderError).status).toBe(503);
    expect(busy.calls).toHaveLength(1);
    expect(asked).toEqual([
      [400, 1],
      [503, 1],
    ]);
  });

  it("H7: network and timeout failures are retried", async () => {
    for (const kind of ["network", "timeout"] as const) {
      const model = new ScriptedModel({
        scripts: [[{ fail: failure({ kind }) }], textScript(["ok"])],
      });
      const events = await collectBatches(retrying(model).wrapped.streamBatches(request));
      expect(model.calls).toHaveLength(2);
      expect(textOf(events)).toBe("ok");
    }
  });

  it("H7: other 4xx, config errors, cancellations and non-provider errors are never retried", async () => {
    const fatal = [
      failure({ status: 400 }),
      failure({ status: 401 }),
      failure({ status: 404 }),
      failure({ status: 422 }),
      failure({ kind: "config", message: "no API key" }),
      failure({ kind: "aborted" }),
      new TypeError("a bug in an adapter"),
    ];
    for (const error of fatal) {
      const model = new ScriptedModel({ scripts: [[{ fail: error }], textScript(["never"])] });
      const { wrapped, waits } = retrying(model);
      expect(await failureOf(collectBatches(wrapped.streamBatches(request)))).toBe(error);
      expect(model.calls).toHaveLength(1);
      expect(waits).toEqual([]);
    }
  });

  it("H7: no retry once the attempts reach maxAttempts; the last error is thrown", async () => {
    const errors = [failure({ status: 500 }), failure({ status: 502 }), failure({ status: 503 })];
    const model = new ScriptedModel({
      scripts: [...errors.map((fail): Step[] => [{ fail }]), textScript(["too late"])],
    });
    const { wrapped, waits } = retrying(model, { maxAttempts: 3, jitter: 0 });
    expect(await failureOf(collectBatches(wrapped.streamBatches(request)))).toBe(errors[2]);
    expect(model.calls).toHaveLength(3);
    expect(waits).toEqual([500, 1000]);
  });

  it("H7: shouldRetry compares the attempts made with the maximum", () => {
    const e503 = failure({ status: 503 });
    expect(shouldRetry(e503, 1, 3)).toBe(true);
    expect(shouldRetry(e503, 2, 3)).toBe(true);
    expect(shouldRetry(e503, 3, 3)).toBe(false);
    expect(shouldRetry(e503, 4, 3)).toBe(false);
    expect(shouldRetry(e503, 1, 1)).toBe(false);
    expect(shouldRetry(failure({ status: 429 }), 1, 3)).toBe(true);
    expect(shouldRetry(failure({ status: 403 }), 1, 3)).toBe(false);
    expect(shouldRetry(new Error("plain"), 1, 3)).toBe(false);
    // A 5xx the adapter marked as not worth retrying stays unretried.
    expect(shouldRetry(failure({ status: 500, retryable: false }), 1, 3)).toBe(false);
  });

  it("H7: maxAttempts 1 means a single try", async () => {
    const model = new ScriptedModel({ scripts: [[{ fail: failure({ status: 503 }) }]] });
    await expect(
      collectBatches(retrying(model, { maxAttempts: 1 }).wrapped.streamBatches(request)),
    ).rejects.toThrow(ProviderError);
    expect(model.calls).toHaveLength(1);
  });

  it("H7: nonsense settings are refused when the wrapper is built", () => {
    const model = new ScriptedModel({});
    expect(() => withRetry(model, { maxAttempts: 0 })).toThrow(RangeError);
    expect(() => withRetry(model, { jitter: 1.5 })).toThrow(RangeError);
    expect(() => withRetry(model, { base: 0.5 })).toThrow(RangeError);
  });
});

describe("H8: retry delay", () => {
  const policy = { ...DEFAULT_RETRY_POLICY, jitter: 0 };

  it("H8: exponential from the initial delay, capped at maxDelayMs", () => {
    const delays = [0, 1, 2, 3, 4, 5, 6, 7, 10].map((n) =>
      retryDelay(n, failure({ status: 503 }), policy),
    );
    expect(delays).toEqual([500, 1000, 2000, 4000, 8000, 16000, 30000, 30000, 30000]);
    expect(retryDelay(2, failure(), { ...policy, initialDelayMs: 100, base: 3 })).toBe(900);
  });

  it("H8: Retry-After is honoured as sent, but never beyond maxDelayMs", () => {
    expect(retryDelay(0, failure({ status: 429, retryAfterMs: 2000 }), DEFAULT_RETRY_POLICY)).toBe(
      2000,
    );
    // Retry-After wins over the exponential schedule, even when shorter.
    expect(retryDelay(5, failure({ status: 429, retryAfterMs: 10 }), DEFAULT_RETRY_POLICY)).toBe(
      10,
    );
    expect(
      retryDelay(0, failure({ status: 429, retryAfterMs: 120_000 }), DEFAULT_RETRY_POLICY),
    ).toBe(30_000);
  });

  it("H8: jitter spreads the wait from the injected random source", () => {
    const p = { ...DEFAULT_RETRY_POLICY, jitter: 0.2 };
    expect(retryDelay(1, failure(), p, () => 0)).toBe(800);
    expect(retryDelay(1, failure(), p, () => 0.5)).toBe(1000);
    expect(retryDelay(1, failure(), p, () => 0.999_999)).toBe(1200);
  });

  it("H8: jitter never takes a wait past maxDelayMs nor below zero (property)", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 40 }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        fc.double({ min: 0, max: 0.999_999_9, noNaN: true }),
        fc.integer({ min: 0, max: 60_000 }),
        fc.integer({ min: 0, max: 60_000 }),
        (retry, jitter, r, initialDelayMs, maxDelayMs) => {
          const p = { maxAttempts: 3, initialDelayMs, base: 2, maxDelayMs, jitter };
          const delay = retryDelay(retry, failure({ status: 503 }), p, () => r);
          const computed = Math.min(initialDelayMs * 2 ** retry, maxDelayMs);
          expect(delay).toBeGreaterThanOrEqual(0);
          expect(delay).toBeLessThanOrEqual(maxDelayMs);
          expect(delay).toBeGreaterThanOrEqual(Math.floor(computed * (1 - jitter)) - 1);
          expect(delay).toBeLessThanOrEqual(Math.ceil(computed * (1 + jitter)) + 1);
        },
      ),
    );
  });

  it("H8: the wrapper sleeps what retryDelay says, Retry-After included", async () => {
    const model = new ScriptedModel({
      scripts: [
        [{ fail: failure({ status: 429, retryAfterMs: 1500 }) }],
        [{ fail: failure({ status: 503 }) }],
        textScript(["done"]),
      ],
    });
    const { wrapped, waits } = retrying(model, { maxAttempts: 5, random: () => 0 });
    await collectBatches(wrapped.streamBatches(request));
    // Retry-After for the first, then the second exponential step with the lowest jitter.
    expect(waits).toEqual([1500, 800]);
  });

  it("H8: aborting during the wait ends the call at once, without another attempt", async () => {
    const controller = new AbortController();
    const model = new ScriptedModel({
      scripts: [[{ fail: failure({ status: 503 }) }], textScript(["never"])],
    });
    const wrapped = withRetry(model, {
      sleep: (ms, signal) => {
        queueMicrotask(() => controller.abort());
        return abortableSleep(ms, signal);
      },
    });
    const error = await failureOf(
      collectBatches(wrapped.streamBatches(request, { signal: controller.signal })),
    );
    expect(error).toBeInstanceOf(ProviderError);
    expect((error as ProviderError).kind).toBe("aborted");
    expect(model.calls).toHaveLength(1);
  });

  it("H8: the default sleep waits, and rejects as soon as the signal aborts", async () => {
    const started = Date.now();
    await abortableSleep(20);
    expect(Date.now() - started).toBeGreaterThanOrEqual(15);
    const controller = new AbortController();
    const sleeping = abortableSleep(60_000, controller.signal);
    controller.abort(new Error("stop"));
    await expect(sleeping).rejects.toThrow("stop");
    await expect(abortableSleep(10, controller.signal)).rejects.toThrow("stop");
  });
});

describe("H6: retry only before the first content", () => {
  it("H6: a failure after text reached the consumer is thrown as is, never retried", async () => {
    const cut = failure({ kind: "stream", message: "connection lost", retryable: true });
    const model = new ScriptedModel({
      scripts: [
        [[start()], [{ type: "text_delta", text: "Par" }], { fail: cut }],
        textScript(["x"]),
      ],
    });
    const { wrapped, waits } = retrying(model);
    const seen: StreamEvent[] = [];
    const error = await failureOf(
      (async () => {
        for await (const batch of wrapped.streamBatches(request)) seen.push(...batch);
      })(),
    );
    expect(error).toBe(cut);
    expect(model.calls).toHaveLength(1);
    expect(waits).toEqual([]);
    expect(textOf(seen)).toBe("Par");
  });

  it("H6: a failure after message_start only is retried and message_start is not repeated", async () => {
    const model = new ScriptedModel({
      scripts: [
        [[start("scripted", "first")], { fail: failure({ status: 503 }) }],
        textScript(["fine"], { model: "second" }),
      ],
    });
    const events = await collectBatches(retrying(model).wrapped.streamBatches(request));
    const starts = events.filter((e) => e.type === "message_start");
    expect(starts).toEqual([start("scripted", "second")]);
    expect(textOf(events)).toBe("fine");
  });

  it("H6: recovered failures come as error events in the first batch, after message_start", async () => {
    const first = failure({ status: 429 });
    const second = failure({ kind: "timeout" });
    const model = new ScriptedModel({
      scripts: [[{ fail: first }], [[start()], { fail: second }], textScript(["ok"])],
    });
    const batches: StreamEvent[][] = [];
    for await (const batch of retrying(model).wrapped.streamBatches(request)) batches.push(batch);
    expect(batches[0]?.map((e) => e.type)).toEqual([
      "message_start",
      "error",
      "error",
      "text_delta",
    ]);
    const errors = batches[0]?.filter((e) => e.type === "error");
    expect(errors).toEqual([
      { type: "error", error: first, provider: "scripted", model: "m1", recovered: true },
      { type: "error", error: second, provider: "scripted", model: "m1", recovered: true },
    ]);
    // generate() ignores them: the answer is the successful attempt's.
    const model2 = new ScriptedModel({ scripts: [[{ fail: first }], textScript(["ok"])] });
    const response = await generate(retrying(model2).wrapped, request);
    expect(response.text).toBe("ok");
  });

  it("H6: an answer without content still ends cleanly and passes its events on", async () => {
    const model = new ScriptedModel({
      scripts: [[{ fail: failure({ status: 500 }) }], [[start()], [end()]]],
    });
    const events = await collectBatches(retrying(model).wrapped.streamBatches(request));
    expect(events.map((e) => e.type)).toEqual(["message_start", "error", "message_end"]);
  });

  it("H6: a consumer that stops early closes the upstream attempt", async () => {
    const model = new ScriptedModel({ scripts: [textScript(["a", "b", "c"])] });
    for await (const batch of retrying(model).wrapped.streamBatches(request)) {
      if (batch.some((e) => e.type === "text_delta")) break;
    }
    expect(model.closedEarly).toBe(1);
  });
});

describe("H6–H8 through the real OpenAI adapter and the fake provider", () => {
  const adapter = () =>
    openai({ model: "gpt-4o", apiKey: "sk-test", baseUrl: "https://fake.test/v1" });
  const expected = "The capital of Mexico is Mexico City.";

  it("H8: a 429 with Retry-After waits that long (capped) and then succeeds", async () => {
    for (const [header, waited] of [
      ["2", 2000],
      ["120", 10_000],
    ] as const) {
      const fake = new FakeProvider({ seed: 3, maxChunk: 9 }).reply(
        {
          status: 429,
          headers: { "retry-after": header, "content-type": "application/json" },
          body: '{"error":{"message":"Rate limit reached","type":"requests","code":"rate_limit_exceeded"}}',
        },
        { fixture: "openai-chat/text-with-usage.sse" },
      );
      const waits: number[] = [];
      const model = withRetry(adapter(), {
        maxDelayMs: 10_000,
        sleep: async (ms) => {
          waits.push(ms);
        },
      });
      const events = await collectBatches(model.streamBatches(request, { fetch: fake.fetch }));
      expect(waits).toEqual([waited]);
      expect(fake.requests).toHaveLength(2);
      expect(fake.requests[0]?.body).toEqual(fake.requests[1]?.body);
      expect(textOf(events)).toBe(expected);
      const recovered = events.find((e) => e.type === "error");
      expect(recovered?.type === "error" && (recovered.error as ProviderError).status).toBe(429);
      expect(recovered?.type === "error" && (recovered.error as ProviderError).retryAfterMs).toBe(
        Number(header) * 1000,
      );
    }
  });

  it("H7: 500 three times fails after three attempts with the last error", async () => {
    const fake = new FakeProvider().reply(
      ...[1, 2, 3].map((n) => ({
        status: 500,
        headers: { "content-type": "application/json" },
        body: `{"error":{"message":"server error ${n}","type":"server_error","code":null}}`,
      })),
    );
    const model = withRetry(adapter(), { sleep: async () => {} });
    const error = await failureOf(
      collectBatches(model.streamBatches(request, { fetch: fake.fetch })),
    );
    expect(fake.requests).toHaveLength(3);
    expect(error).toBeInstanceOf(ProviderError);
    expect((error as ProviderError).status).toBe(500);
    expect((error as ProviderError).message).toContain("server error 3");
  });

  it("H7: a hang before the first byte times out and is retried", async () => {
    const fake = new FakeProvider({ seed: 5, maxChunk: 4 }).reply(
      { hang: true },
      { fixture: "openai-chat/text-with-usage.sse" },
    );
    const model = withRetry(
      openai({ model: "gpt-4o", apiKey: "sk-test", baseUrl: "https://fake.test/v1", stallMs: 50 }),
      { sleep: async () => {} },
    );
    const events = await collectBatches(model.streamBatches(request, { fetch: fake.fetch }));
    expect(fake.requests).toHaveLength(2);
    expect(textOf(events)).toBe(expected);
    const recovered = events.find((e) => e.type === "error");
    expect(recovered?.type === "error" && (recovered.error as ProviderError).kind).toBe("timeout");
  });

  it("H6: a stall after message_start but before any text is retried: nothing reached the consumer", async () => {
    const body = fixtureText("openai-chat/text-with-usage.sse");
    // The first event is the role delta with empty content: message_start only.
    const firstEvent = body.indexOf("\n\n") + 2;
    const fake = new FakeProvider({ seed: 8, maxChunk: 6 }).reply(
      { stallAfterBytes: firstEvent, body },
      { fixture: "openai-chat/text-with-usage.sse" },
    );
    const model = withRetry(
      openai({ model: "gpt-4o", apiKey: "sk-test", baseUrl: "https://fake.test/v1", stallMs: 50 }),
      { sleep: async () => {} },
    );
    const events = await collectBatches(model.streamBatches(request, { fetch: fake.fetch }));
    expect(fake.requests).toHaveLength(2);
    expect(fake.canceledStreams).toBe(1);
    expect(textOf(events)).toBe(expected);
    expect(events.filter((e) => e.type === "message_start")).toHaveLength(1);
    expect(events.map((e) => e.type).slice(0, 3)).toEqual(["message_start", "error", "text_delta"]);
  });

  it("H6: a cut mid-stream after text was sent is not retried: one request, a clean error, no duplicated text", async () => {
    for (const seed of [1, 2, 3]) {
      const fake = new FakeProvider({ seed, maxChunk: 16 }).reply(
        { fixture: "openai-chat/text-with-usage.sse", cutAfterBytes: 1400 },
        { fixture: "openai-chat/text-with-usage.sse" },
      );
      const model = withRetry(adapter(), { sleep: async () => {} });
      const seen: StreamEvent[] = [];
      const error = await failureOf(
        (async () => {
          for await (const batch of model.streamBatches(request, { fetch: fake.fetch }))
            seen.push(...batch);
        })(),
      );
      expect(fake.requests).toHaveLength(1);
      expect(fake.pending).toBe(1);
      expect(error).toBeInstanceOf(ProviderError);
      const text = textOf(seen);
      expect(text.length).toBeGreaterThan(0);
      expect(expected.startsWith(text)).toBe(true);
      expect(text).not.toBe(expected);
      expect(seen.filter((e) => e.type === "message_start")).toHaveLength(1);
      expect(seen.some((e) => e.type === "error")).toBe(false);
    }
  });

  it("H7: aborting mid-stream stops at once with an aborted error and no retry", async () => {
    const fake = new FakeProvider({ seed: 2, maxChunk: 32 }).reply(
      { fixture: "openai-chat/text-with-usage.sse", delayMs: 2 },
      { fixture: "openai-chat/text-with-usage.sse" },
    );
    const controller = new AbortController();
    const model = withRetry(adapter(), { sleep: async () => {} });
    const seen: StreamEvent[] = [];
    const error = await failureOf(
      (async () => {
        for await (const batch of model.streamBatches(request, {
          fetch: fake.fetch,
          signal: controller.signal,
        })) {
          seen.push(...batch);
          if (seen.some((e) => e.type === "text_delta")) controller.abort();
        }
      })(),
    );
    expect(error).toBeInstanceOf(ProviderError);
    expect((error as ProviderError).kind).toBe("aborted");
    expect(fake.requests).toHaveLength(1);
    expect(fake.canceledStreams).toBe(1);
  });
});
