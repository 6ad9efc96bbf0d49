import { describe, expect, it, vi } from "vitest";
import type { JsonObject } from "../../src/protocol/json";
import { AllProvidersFailedError, ProviderError } from "../../src/providers/base/errors";
import { type FailoverStore, ModelRequest, type StreamEvent } from "../../src/providers/base/types";
import { type FailoverState, fallback } from "../../src/providers/fallback";
import { openai } from "../../src/providers/openai/openai-chat";
import { collectBatches, FakeProvider } from "./fake-provider";
import { deferred, end, failure, ScriptedModel, type Step, start } from "./scripted-model";

const request = ModelRequest.parse({ messages: [{ role: "user", content: "Hi" }] });

function textOf(events: StreamEvent[]): string {
  return events.map((e) => (e.type === "text_delta" ? e.text : "")).join("");
}

function member(name: string, scripts: Step[][] = []): ScriptedModel {
  return new ScriptedModel({ provider: name, model: `${name}-model`, scripts });
}

/** An answer from `name`, with `ttft` ms of (fake) time before its first token. */
function answer(name: string, text: string, clock?: { t: number }, ttft = 0): Step[] {
  return [
    [start(name, `${name}-model`)],
    {
      run: () => {
        if (clock) clock.t += ttft;
      },
    },
    [{ type: "text_delta", text }],
    [end()],
  ];
}

function toolTurn(name: string, clock: { t: number }, ttft: number): Step[] {
  return [
    [start(name, `${name}-model`)],
    {
      run: () => {
        clock.t += ttft;
      },
    },
    [{ type: "tool_call_start", index: 0, id: "call_1", name: "lookup" }],
    [end()],
  ];
}

/** A store that keeps JSON text, as the Durable Object's SQLite does. */
class JsonStore implements FailoverStore {
  readonly rows = new Map<string, string>();
  saves = 0;
  load(key: string): JsonObject | null {
    const row = this.rows.get(key);
    return row === undefined ? null : (JSON.parse(row) as JsonObject);
  }
  save(key: string, state: JsonObject): void {
    this.saves++;
    this.rows.set(key, JSON.stringify(state));
  }
  state(key: string): FailoverState {
    return JSON.parse(this.rows.get(key) ?? "null") as FailoverState;
  }
}

async function run(model: ReturnType<typeof fallback>, store?: FailoverStore) {
  return collectBatches(model.streamBatches(request, store ? { failoverStore: store } : {}));
}

async function failureOf(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error("expected a failure");
}

describe("H1: failover in priority order", () => {
  it("H1: a failing first member is recorded, the same request goes to the next, with an error event", async () => {
    const boom = failure({ provider: "a", status: 503 });
    const a = member("a", [[{ fail: boom }]]);
    const b = member("b", [answer("b", "from b")]);
    const events = await run(fallback([a, b]));
    expect(textOf(events)).toBe("from b");
    expect(b.calls[0]?.request).toBe(a.calls[0]?.request);
    expect(events.slice(0, 2)).toEqual([
      start("b", "b-model"),
      { type: "error", error: boom, provider: "a", model: "a-model", recovered: true },
    ]);
  });

  it("H1: one error event per failure, in the order tried", async () => {
    const a = member("a", [
      [[start("a", "a-model")], { fail: failure({ provider: "a", status: 500 }) }],
    ]);
    const b = member("b", [[{ fail: failure({ provider: "b", kind: "network" }) }]]);
    const c = member("c", [answer("c", "third time")]);
    const events = await run(fallback([a, b, c]));
    expect(
      events.filter((e) => e.type === "error").map((e) => e.type === "error" && e.provider),
    ).toEqual(["a", "b"]);
    // The failed member's message_start never reaches the consumer.
    expect(events.filter((e) => e.type === "message_start")).toEqual([start("c", "c-model")]);
    expect(textOf(events)).toBe("third time");
  });

  it("H1, I1: when the last member fails too, one AllProvidersFailedError lists every failure and carries the last one's status", async () => {
    const failures = [
      failure({ provider: "a", status: 503 }),
      failure({ provider: "b", status: 429, code: "rate_limit" }),
    ];
    const a = member("a", [[{ fail: failures[0] as Error }]]);
    const b = member("b", [[{ fail: failures[1] as Error }]]);
    const error = await failureOf(run(fallback([a, b])));
    expect(error).toBeInstanceOf(AllProvidersFailedError);
    const all = error as AllProvidersFailedError;
    expect(all.failures).toEqual(failures);
    expect(all.status).toBe(429);
    expect(all.code).toBe("rate_limit");
    expect(all.message).toContain("a: http 503 failure");
    expect(all.message).toContain("b: http 429 failure");
  });

  it("H1: any failure moves on (a missing key, a bad request, a bug), but a cancellation does not", async () => {
    for (const error of [
      failure({ provider: "a", kind: "config" }),
      failure({ provider: "a", status: 400 }),
      new TypeError("adapter bug"),
    ]) {
      const events = await run(
        fallback([member("a", [[{ fail: error }]]), member("b", [answer("b", "ok")])]),
      );
      expect(textOf(events)).toBe("ok");
    }
    const controller = new AbortController();
    const store = new JsonStore();
    const a = member("a", [[{ hang: true }]]);
    const b = member("b", [answer("b", "never")]);
    const model = fallback([a, b], { name: "f" });
    const call = collectBatches(
      model.streamBatches(request, { signal: controller.signal, failoverStore: store }),
    );
    setTimeout(() => controller.abort(), 5);
    const error = await failureOf(call);
    expect((error as ProviderError).kind).toBe("aborted");
    expect(b.calls).toHaveLength(0);
    // Nothing recorded: a cancellation says nothing about the member.
    expect(store.saves).toBe(0);
  });

  it("H1: the fallback reports its first member's capabilities and names its members", () => {
    const a = new ScriptedModel({ provider: "a", capabilities: { tools: true, vision: true } });
    const b = new ScriptedModel({ provider: "b" });
    const model = fallback([a, b]);
    expect(model.capabilities).toEqual(a.capabilities);
    expect(model.provider).toBe("fallback");
    expect(model.model).toBe("fallback(a/m1,b/m1)");
    expect(() => fallback([])).toThrow(TypeError);
  });
});

describe("H2, H3: cool-down and permanent disable", () => {
  it("H2: a failed member is skipped for temporaryDisableMs, then restored", async () => {
    const clock = { t: 1_000_000 };
    const a = member("a", [
      [{ fail: failure({ provider: "a", status: 503 }) }],
      answer("a", "a is back"),
    ]);
    const b = member("b", [answer("b", "b1"), answer("b", "b2"), answer("b", "b3")]);
    const model = fallback([a, b], { now: () => clock.t, temporaryDisableMs: 60_000 });
    expect(textOf(await run(model))).toBe("b1");
    clock.t += 59_999;
    expect(textOf(await run(model))).toBe("b2");
    expect(a.calls).toHaveLength(1);
    clock.t += 1;
    expect(textOf(await run(model))).toBe("a is back");
    expect(a.calls).toHaveLength(2);
    expect(b.calls).toHaveLength(2);
  });

  it("H2: when every usable member is cooling down, they are still tried in order", async () => {
    const clock = { t: 0 };
    const a = member("a", [
      [{ fail: failure({ provider: "a", status: 500 }) }],
      answer("a", "a anyway"),
    ]);
    const b = member("b", [[{ fail: failure({ provider: "b", status: 500 }) }]]);
    const model = fallback([a, b], { now: () => clock.t });
    await expect(run(model)).rejects.toBeInstanceOf(AllProvidersFailedError);
    clock.t += 10;
    expect(textOf(await run(model))).toBe("a anyway");
  });

  it("H3: after permanentFailures failures in a row a member is disabled for permanentDisableMs", async () => {
    const clock = { t: 0 };
    const store = new JsonStore();
    const fail = (): Step[] => [{ fail: failure({ provider: "a", status: 503 }) }];
    const a = member("a", [fail(), fail(), fail()]);
    const b = member(
      "b",
      Array.from({ length: 5 }, (_, i) => answer("b", `b${i}`)),
    );
    const model = fallback([a, b], {
      name: "f",
      now: () => clock.t,
      permanentFailures: 3,
      permanentDisableMs: 60 * 60_000,
    });
    for (let i = 0; i < 3; i++) {
      await run(model, store);
      clock.t += 60_000;
    }
    expect(store.state("f").members["a/a-model"]?.failures).toBe(3);
    clock.t += 10 * 60_000;
    expect(textOf(await run(model, store))).toBe("b3");
    expect(a.calls).toHaveLength(3);
  });

  it("H3: a success starts the failure count again: failures not in a row never disable", async () => {
    const clock = { t: 0 };
    const store = new JsonStore();
    const fail = (): Step[] => [{ fail: failure({ provider: "a", status: 503 }) }];
    // fail, fail, answer, fail, fail, answer: four failures, never three in a row.
    const a = member("a", [fail(), fail(), answer("a", "a1"), fail(), fail(), answer("a", "a2")]);
    const b = member(
      "b",
      Array.from({ length: 4 }, (_, i) => answer("b", `b${i}`)),
    );
    const model = fallback([a, b], { name: "f", now: () => clock.t, permanentFailures: 3 });
    const texts: string[] = [];
    for (let i = 0; i < 6; i++) {
      texts.push(textOf(await run(model, store)));
      clock.t += 60_000;
    }
    expect(texts).toEqual(["b0", "b1", "a1", "b2", "b3", "a2"]);
    expect(store.state("f").members["a/a-model"]?.failures).toBe(0);
  });

  it("H3: a disabled member is tried again once permanentDisableMs has passed; a failure disables it as long again", async () => {
    const clock = { t: 0 };
    const store = new JsonStore();
    const fail = (): Step[] => [{ fail: failure({ provider: "a", status: 503 }) }];
    const a = member("a", [fail(), fail(), fail(), answer("a", "a is back")]);
    const b = member(
      "b",
      Array.from({ length: 6 }, (_, i) => answer("b", `b${i}`)),
    );
    const hour = 60 * 60_000;
    const model = fallback([a, b], {
      name: "f",
      now: () => clock.t,
      permanentFailures: 2,
      permanentDisableMs: hour,
    });
    await run(model, store);
    clock.t += 60_000;
    await run(model, store); // second failure in a row: disabled for an hour
    clock.t += hour - 1;
    expect(textOf(await run(model, store))).toBe("b2");
    expect(a.calls).toHaveLength(2);
    clock.t += 1;
    expect(textOf(await run(model, store))).toBe("b3"); // a tried and failed: out another hour
    expect(a.calls).toHaveLength(3);
    clock.t += hour - 1;
    expect(textOf(await run(model, store))).toBe("b4");
    expect(a.calls).toHaveLength(3);
    clock.t += 1;
    expect(textOf(await run(model, store))).toBe("a is back");
    expect(store.state("f").members["a/a-model"]?.failures).toBe(0);
  });

  it("H3: when every member is disabled for good the call fails with a config error; reset restores them", async () => {
    const store = new JsonStore();
    const a = member("a", [
      [{ fail: failure({ provider: "a", status: 500 }) }],
      answer("a", "again"),
    ]);
    const model = fallback([a], { name: "solo", permanentFailures: 1 });
    await expect(run(model, store)).rejects.toBeInstanceOf(AllProvidersFailedError);
    const error = await failureOf(run(model, store));
    expect((error as ProviderError).kind).toBe("config");
    expect((error as ProviderError).message).toContain("disabled");
    await model.reset(store);
    expect(textOf(await run(model, store))).toBe("again");
  });
});

describe("H4: latency failover", () => {
  it("H4: N consecutive slow first tokens move the fallback to the next member", async () => {
    const clock = { t: 0 };
    const a = member("a", [answer("a", "slow1", clock, 150), answer("a", "slow2", clock, 150)]);
    const b = member("b", [answer("b", "fast", clock, 10)]);
    const model = fallback([a, b], { now: () => clock.t, latencyThresholdMs: 100, latencyHits: 2 });
    // The slow turns themselves still answer: the switch applies to the next call.
    expect(textOf(await run(model))).toBe("slow1");
    expect(textOf(await run(model))).toBe("slow2");
    expect(textOf(await run(model))).toBe("fast");
  });

  it("H4: a fast turn resets the count", async () => {
    const clock = { t: 0 };
    const a = member("a", [
      answer("a", "slow", clock, 150),
      answer("a", "fast", clock, 50),
      answer("a", "slow again", clock, 150),
      answer("a", "still a", clock, 5),
    ]);
    const b = member("b");
    const model = fallback([a, b], { now: () => clock.t, latencyThresholdMs: 100, latencyHits: 2 });
    for (const text of ["slow", "fast", "slow again", "still a"])
      expect(textOf(await run(model))).toBe(text);
    expect(b.calls).toHaveLength(0);
  });

  it("H4: turns that start with a tool call are not counted", async () => {
    const clock = { t: 0 };
    const a = member("a", [
      answer("a", "slow", clock, 150),
      toolTurn("a", clock, 900),
      toolTurn("a", clock, 900),
      answer("a", "slow 2", clock, 150),
    ]);
    const b = member("b", [answer("b", "b now", clock, 1)]);
    const model = fallback([a, b], { now: () => clock.t, latencyThresholdMs: 100, latencyHits: 2 });
    await run(model);
    await run(model);
    await run(model);
    expect(a.calls).toHaveLength(3);
    expect(textOf(await run(model))).toBe("slow 2");
    expect(textOf(await run(model))).toBe("b now");
  });

  it("H4: a slow member is only cooled down, not counted toward the permanent limit", async () => {
    const clock = { t: 0 };
    const store = new JsonStore();
    const a = member("a", [
      answer("a", "s1", clock, 200),
      answer("a", "s2", clock, 200),
      answer("a", "back", clock, 1),
    ]);
    const b = member("b", [answer("b", "b", clock, 1)]);
    const model = fallback([a, b], {
      name: "f",
      now: () => clock.t,
      latencyThresholdMs: 100,
      latencyHits: 2,
      permanentFailures: 1,
    });
    await run(model, store);
    await run(model, store);
    expect(store.state("f").members["a/a-model"]).toEqual({
      failures: 0,
      lastFailureAt: 400,
      slowHits: 0,
    });
    expect(store.state("f").active).toBe(1);
    expect(textOf(await run(model, store))).toBe("b");
    clock.t += 60_000;
    expect(textOf(await run(model, store))).toBe("back");
  });

  it("H4: without a threshold, slowness changes nothing", async () => {
    const clock = { t: 0 };
    const a = member("a", [
      answer("a", "1", clock, 10_000),
      answer("a", "2", clock, 10_000),
      answer("a", "3", clock, 10_000),
    ]);
    const model = fallback([a, member("b")], { now: () => clock.t });
    for (const text of ["1", "2", "3"]) expect(textOf(await run(model))).toBe(text);
  });
});

describe("H5: concurrent failure reports", () => {
  it("H5: two calls failing on the same member count one failure", async () => {
    const store = new JsonStore();
    const gate = deferred();
    const a = member("a", [
      [{ run: () => gate.promise }, { fail: failure({ provider: "a", status: 503 }) }],
      [{ run: () => gate.promise }, { fail: failure({ provider: "a", status: 503 }) }],
    ]);
    const b = member("b", [answer("b", "one"), answer("b", "two")]);
    const model = fallback([a, b], { name: "f" });
    const calls = [run(model, store), run(model, store)];
    // Both calls are in flight before the gate opens (polled: a loaded machine is slow).
    await vi.waitFor(() => expect(a.calls).toHaveLength(2));
    gate.resolve();
    const texts = (await Promise.all(calls)).map(textOf).sort();
    expect(texts).toEqual(["one", "two"]);
    expect(store.state("f").members["a/a-model"]?.failures).toBe(1);
    expect(store.state("f").active).toBe(1);
  });

  it("H5: concurrent calls on a slow store lose no update (three slow turns at once count three)", async () => {
    const clock = { t: 0 };
    const rows = new JsonStore();
    // Like Durable Object storage: every read and write takes a moment.
    const slowStore: FailoverStore = {
      load: async (key) => {
        await new Promise((r) => setTimeout(r, 2));
        return rows.load(key);
      },
      save: async (key, state) => {
        await new Promise((r) => setTimeout(r, 2));
        rows.save(key, state);
      },
    };
    const gate = deferred();
    const slowTurn = (): Step[] => [
      [start("a", "a-model")],
      { run: () => gate.promise },
      [{ type: "text_delta", text: "slow" }],
      [end()],
    ];
    const a = member("a", [slowTurn(), slowTurn(), slowTurn()]);
    const model = fallback([a, member("b")], {
      name: "f",
      now: () => clock.t,
      latencyThresholdMs: 100,
      latencyHits: 3,
    });
    const calls = [1, 2, 3].map(() => run(model, slowStore));
    await vi.waitFor(() => expect(a.calls).toHaveLength(3));
    clock.t = 500;
    gate.resolve();
    await Promise.all(calls);
    expect(rows.state("f").members["a/a-model"]).toEqual({
      failures: 0,
      lastFailureAt: 500,
      slowHits: 0,
    });
  });

  it("H5: a later, separate failure of the same member still counts", async () => {
    const store = new JsonStore();
    const clock = { t: 0 };
    const a = member("a", [
      [{ fail: failure({ provider: "a", status: 503 }) }],
      [{ fail: failure({ provider: "a", status: 503 }) }],
    ]);
    const b = member("b", [answer("b", "1"), answer("b", "2")]);
    const model = fallback([a, b], { name: "f", now: () => clock.t });
    await run(model, store);
    clock.t += 60_000;
    await run(model, store);
    expect(store.state("f").members["a/a-model"]?.failures).toBe(2);
  });
});

describe("H6: no failover after content", () => {
  it("H6: a failure after text reached the consumer is rethrown as is, the next member is not asked, and it is recorded", async () => {
    const store = new JsonStore();
    const cut = failure({ provider: "a", kind: "stream", message: "cut" });
    const a = member("a", [
      [[start("a", "a-model")], [{ type: "text_delta", text: "Par" }], { fail: cut }],
    ]);
    const b = member("b", [answer("b", "b next time")]);
    const model = fallback([a, b], { name: "f" });
    const seen: StreamEvent[] = [];
    const error = await failureOf(
      (async () => {
        for await (const batch of model.streamBatches(request, { failoverStore: store }))
          seen.push(...batch);
      })(),
    );
    expect(error).toBe(cut);
    expect(textOf(seen)).toBe("Par");
    expect(b.calls).toHaveLength(0);
    expect(store.state("f").members["a/a-model"]?.failures).toBe(1);
    expect(textOf(await run(model, store))).toBe("b next time");
  });
});

describe("H2–H5: bookkeeping in a FailoverStore", () => {
  it("H2: the state is plain JSON under the fallback's name and outlives the fallback instance", async () => {
    const store = new JsonStore();
    const clock = { t: 5_000 };
    const make = (a: ScriptedModel, b: ScriptedModel) =>
      fallback([a, b], { name: "agent-1", now: () => clock.t });
    await run(
      make(
        member("a", [[{ fail: failure({ provider: "a", status: 502 }) }]]),
        member("b", [answer("b", "x")]),
      ),
      store,
    );
    expect(store.state("agent-1")).toEqual({
      active: 1,
      members: {
        "a/a-model": { failures: 1, lastFailureAt: 5_000, slowHits: 0 },
        "b/b-model": { failures: 0, lastFailureAt: null, slowHits: 0 },
      },
    });
    // A new request (a new fallback built by the agent) starts where the last one left.
    const a2 = member("a");
    const b2 = member("b", [answer("b", "still b")]);
    expect(textOf(await run(make(a2, b2), store))).toBe("still b");
    expect(a2.calls).toHaveLength(0);
  });

  it("H2: the call's failoverStore wins over the fallback's own store", async () => {
    const own = new JsonStore();
    const call = new JsonStore();
    const model = fallback(
      [
        member("a", [[{ fail: failure({ provider: "a", status: 500 }) }]]),
        member("b", [answer("b", "ok")]),
      ],
      { name: "f", store: own },
    );
    await run(model, call);
    expect(call.rows.has("f")).toBe(true);
    expect(own.rows.size).toBe(0);
  });

  it("H2: a stored state from another member list is read tolerantly", async () => {
    const store = new JsonStore();
    store.save("f", {
      active: 7,
      members: { "gone/x": { failures: 9, lastFailureAt: 1, slowHits: 0 } },
    });
    const model = fallback([member("a", [answer("a", "fresh")])], { name: "f" });
    expect(textOf(await run(model, store))).toBe("fresh");
  });

  it("H3: permanentDisableMs Infinity disables for good, until reset", async () => {
    const clock = { t: 0 };
    const a = member("a", [[{ fail: failure({ provider: "a", status: 500 }) }], answer("a", "a")]);
    const b = member("b", [answer("b", "b0"), answer("b", "b1")]);
    const model = fallback([a, b], {
      now: () => clock.t,
      permanentFailures: 1,
      permanentDisableMs: Number.POSITIVE_INFINITY,
    });
    await run(model);
    clock.t += 365 * 24 * 60 * 60_000;
    expect(textOf(await run(model))).toBe("b1");
    await model.reset();
    expect(textOf(await run(model))).toBe("a");
  });

  it("H2: in-memory bookkeeping is shared by the calls of one fallback", async () => {
    const a = member("a", [[{ fail: failure({ provider: "a", status: 500 }) }]]);
    const b = member("b", [answer("b", "1"), answer("b", "2")]);
    const model = fallback([a, b]);
    await run(model);
    await run(model);
    expect(a.calls).toHaveLength(1);
  });
});

describe("H1, H6 through the real OpenAI adapter and the fake provider", () => {
  const first = () =>
    openai({ model: "gpt-4o", apiKey: "sk-test", baseUrl: "https://fake.test/v1" });
  const second = () =>
    openai({ model: "gpt-4o-mini", apiKey: "sk-test", baseUrl: "https://fake.test/v1" });

  it("H1: a 500 from the first model sends the same conversation to the second", async () => {
    const fake = new FakeProvider({ seed: 4, maxChunk: 11 }).reply(
      {
        status: 500,
        headers: { "content-type": "application/json" },
        body: '{"error":{"message":"The server had an error","type":"server_error","code":null}}',
      },
      { fixture: "openai-chat/text-with-usage.sse" },
    );
    const events = await collectBatches(
      fallback([first(), second()]).streamBatches(request, { fetch: fake.fetch }),
    );
    expect(fake.requests.map((r) => r.body.model)).toEqual(["gpt-4o", "gpt-4o-mini"]);
    expect(fake.requests[1]?.body.messages).toEqual(fake.requests[0]?.body.messages);
    expect(textOf(events)).toBe("The capital of Mexico is Mexico City.");
    const recovered = events.find((e) => e.type === "error");
    expect(recovered?.type === "error" && (recovered.error as ProviderError).status).toBe(500);
  });

  it("H6: a cut mid-stream is not failed over: one request, a clean error, no duplicated text", async () => {
    const fake = new FakeProvider({ seed: 6, maxChunk: 13 }).reply(
      { fixture: "openai-chat/text-with-usage.sse", cutAfterBytes: 2000 },
      { fixture: "openai-chat/text-with-usage.sse" },
    );
    const seen: StreamEvent[] = [];
    const error = await failureOf(
      (async () => {
        for await (const batch of fallback([first(), second()]).streamBatches(request, {
          fetch: fake.fetch,
        }))
          seen.push(...batch);
      })(),
    );
    expect(error).toBeInstanceOf(ProviderError);
    expect(error).not.toBeInstanceOf(AllProvidersFailedError);
    expect(fake.requests).toHaveLength(1);
    const text = textOf(seen);
    expect(text.length).toBeGreaterThan(0);
    expect("The capital of Mexico is Mexico City.".startsWith(text)).toBe(true);
  });
});
