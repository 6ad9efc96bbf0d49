import { describe, expect, it } from "vitest";
import { AllProvidersFailedError, ProviderError } from "../../src/providers/base/errors";
import {
  type Model,
  ModelRequest,
  type ModelRequestInput,
  type StreamEvent,
} from "../../src/providers/base/types";
import { openai } from "../../src/providers/openai/openai-chat";
import { type Route, router } from "../../src/providers/router";
import { collectBatches, FakeProvider } from "./fake-provider";
import {
  deferred,
  end,
  failure,
  ScriptedModel,
  type Step,
  start,
  textScript,
} from "./scripted-model";

const request = ModelRequest.parse({ messages: [{ role: "user", content: "Hi" }] });

function textOf(events: StreamEvent[]): string {
  return events.map((e) => (e.type === "text_delta" ? e.text : "")).join("");
}

function member(
  name: string,
  scripts: Step[][] = [],
  capabilities: ConstructorParameters<typeof ScriptedModel>[0]["capabilities"] = {},
): ScriptedModel {
  return new ScriptedModel({ provider: name, model: `${name}-model`, scripts, capabilities });
}

function answer(name: string, text: string): Step[] {
  return textScript([text], { provider: name, model: `${name}-model` });
}

function fails(name: string, status = 503): Step[] {
  return [{ fail: failure({ provider: name, status }) }];
}

async function run(model: Model, input: ModelRequestInput | ModelRequest = request) {
  return collectBatches(model.streamBatches(ModelRequest.parse(input)));
}

async function failureOf(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error("expected a failure");
}

describe("I1: fallback strategy", () => {
  it("I1: models in order, the first success answers, failures before it are logged", async () => {
    const a = member("a", [fails("a")]);
    const b = member("b", [answer("b", "from b")]);
    const c = member("c");
    const events = await run(router({ strategy: "fallback", models: [a, b, c] }));
    expect(textOf(events)).toBe("from b");
    expect(c.calls).toHaveLength(0);
    expect(
      events.filter((e) => e.type === "error").map((e) => e.type === "error" && e.provider),
    ).toEqual(["a"]);
  });

  it("I1: all failing → one AllProvidersFailedError listing every failure in order", async () => {
    const models = ["a", "b", "c"].map((n, i) => member(n, [fails(n, 500 + i)]));
    const error = await failureOf(run(router({ strategy: "fallback", models })));
    expect(error).toBeInstanceOf(AllProvidersFailedError);
    const all = error as AllProvidersFailedError;
    expect(all.failures.map((f) => [f.provider, f.status])).toEqual([
      ["a", 500],
      ["b", 501],
      ["c", 502],
    ]);
    expect(all.message).toMatch(/a: .*; b: .*; c: /);
  });

  it("I1: a router needs models; a cancellation is not routed on", async () => {
    expect(() => router({ strategy: "fallback", models: [] })).toThrow(TypeError);
    const controller = new AbortController();
    const a = member("a", [[{ hang: true }]]);
    const b = member("b", [answer("b", "never")]);
    const call = collectBatches(
      router({ strategy: "fallback", models: [a, b] }).streamBatches(request, {
        signal: controller.signal,
      }),
    );
    setTimeout(() => controller.abort(), 5);
    expect(((await failureOf(call)) as ProviderError).kind).toBe("aborted");
    expect(b.calls).toHaveLength(0);
  });
});

describe("I2: round robin", () => {
  it("I2: each call starts one model further and wraps around", async () => {
    const models = ["a", "b", "c"].map((n) => member(n, [answer(n, n), answer(n, n)]));
    const model = router({ strategy: "round_robin", models });
    const firsts: string[] = [];
    for (let i = 0; i < 5; i++) firsts.push(textOf(await run(model)));
    expect(firsts).toEqual(["a", "b", "c", "a", "b"]);
  });

  it("I2: a failure continues with the next model, wrapping past the end", async () => {
    const a = member("a", [answer("a", "a1"), answer("a", "a wraps")]);
    const b = member("b", [answer("b", "b1")]);
    const c = member("c", [fails("c")]);
    const model = router({ strategy: "round_robin", models: [a, b, c] });
    await run(model);
    await run(model);
    expect(textOf(await run(model))).toBe("a wraps");
  });

  it("I2: concurrent calls get distinct starts", async () => {
    const gate = deferred();
    const models = ["a", "b", "c"].map((n) =>
      member(n, [[{ run: () => gate.promise }, ...answer(n, n)]]),
    );
    const model = router({ strategy: "round_robin", models });
    const calls = [run(model), run(model), run(model)];
    gate.resolve();
    const texts = (await Promise.all(calls)).map(textOf);
    expect(texts).toEqual(["a", "b", "c"]);
    for (const m of models) expect(m.calls).toHaveLength(1);
  });
});

describe("I5: capability routing", () => {
  const plain = () => member("plain", [answer("plain", "plain")]);
  const tools = () => member("tools", [answer("tools", "tools")], { tools: true });
  const all = () =>
    member("all", [answer("all", "all")], { tools: true, structuredOutput: true, vision: true });

  it("I5: tools need capabilities.tools", async () => {
    const model = router({ strategy: "capability", models: [plain(), tools(), all()] });
    const routes: Route[] = [];
    const watched = router({
      strategy: "capability",
      models: [plain(), tools(), all()],
      onRoute: (r) => routes.push(r),
    });
    const withTools = { ...request, tools: [{ name: "f", description: "", parameters: {} }] };
    expect(textOf(await run(model, withTools))).toBe("tools");
    await run(watched, withTools);
    expect(routes[0]?.order.map((m) => m.provider)).toEqual(["tools", "all"]);
    expect(routes[0]?.reason).toBe("needs tools");
  });

  it("I5: an output schema needs structuredOutput, images need vision", async () => {
    const model = () => router({ strategy: "capability", models: [plain(), tools(), all()] });
    expect(textOf(await run(model(), { ...request, outputSchema: { type: "object" } }))).toBe(
      "all",
    );
    const image = {
      messages: [
        {
          type: "message",
          role: "user",
          content: ["What is it?", { type: "image", url: "https://x.test/cat.png" }],
        },
      ],
    };
    expect(textOf(await run(model(), image))).toBe("all");
    expect(textOf(await run(model(), request))).toBe("plain");
  });

  it("I5: no capable model → a config error naming what is missing", async () => {
    const model = router({ strategy: "capability", models: [plain(), tools()] });
    const needs = {
      messages: [
        {
          type: "message",
          role: "user",
          content: [{ type: "image", url: "https://x.test/a.png" }],
        },
      ],
      tools: [{ name: "f" }],
      outputSchema: { type: "object" },
    };
    const error = (await failureOf(run(model, needs))) as ProviderError;
    expect(error).toBeInstanceOf(ProviderError);
    expect(error.kind).toBe("config");
    expect(error.message).toContain("structuredOutput and vision");
    expect(error.message).not.toContain("tools");
    // Each need is met by some model, but not all by one.
    const split = router({
      strategy: "capability",
      models: [member("t", [], { tools: true }), member("v", [], { vision: true })],
    });
    const both = { ...needs, outputSchema: undefined };
    const error2 = (await failureOf(run(split, both))) as ProviderError;
    expect(error2.message).toContain("tools and vision together");
  });

  it("I5: the router's capabilities are what at least one member can do", () => {
    const model = router({
      strategy: "capability",
      models: [
        member("a", [], { tools: true, contextWindow: 8000, inputPricePerMillion: 1 }),
        member("b", [], { vision: true, contextWindow: 128000 }),
      ],
    });
    expect(model.capabilities).toMatchObject({
      tools: true,
      vision: true,
      structuredOutput: false,
      contextWindow: 128000,
      inputPricePerMillion: null,
    });
  });
});

describe("I6: custom routing", () => {
  it("I6: choose(request, models) picks the model, and its reason is reported", async () => {
    const a = member("a");
    const b = member("b", [answer("b", "chosen")]);
    const routes: Route[] = [];
    const seen: unknown[] = [];
    const model = router({
      strategy: "custom",
      models: [a, b],
      choose: async (req, models) => {
        seen.push(req, models);
        return { model: models[1] as Model, reason: "b is better at this" };
      },
      onRoute: (r) => routes.push(r),
    });
    expect(textOf(await run(model))).toBe("chosen");
    expect(seen[1]).toEqual([a, b]);
    expect(routes).toEqual([{ strategy: "custom", order: [b], reason: "b is better at this" }]);
  });

  it("I6: the custom strategy requires a choose function", () => {
    expect(() => router({ strategy: "custom", models: [member("a")] })).toThrow(TypeError);
  });

  it("I6: a failing chosen model fails the call with its failure listed", async () => {
    const model = router({
      strategy: "custom",
      models: [member("a", [fails("a", 502)]), member("b")],
      choose: (_, models) => ({ model: models[0] as Model, reason: "a" }),
    });
    const error = (await failureOf(run(model))) as AllProvidersFailedError;
    expect(error.failures.map((f) => f.status)).toEqual([502]);
  });
});

describe("I7: routing while streaming", () => {
  for (const strategy of ["fallback", "round_robin", "cheapest"] as const) {
    it(`I7: ${strategy} moves on only if opening the stream fails`, async () => {
      const cut = failure({ provider: "a", kind: "stream", message: "cut" });
      const a = member("a", [
        [[start("a", "a-model")], { fail: failure({ provider: "a", status: 503 }) }],
        [[start("a", "a-model")], [{ type: "text_delta", text: "par" }], { fail: cut }],
      ]);
      const b = member("b", [answer("b", "from b"), answer("b", "unused")]);
      const model = router({ strategy, models: [a, b] });
      const opened = await run(model);
      expect(textOf(opened)).toBe("from b");
      expect(opened.filter((e) => e.type === "message_start")).toEqual([start("b", "b-model")]);
      if (strategy === "round_robin") {
        // The second call starts at b; put a first again for the mid-stream case.
        await run(model);
      }
      const seen: StreamEvent[] = [];
      const error = await failureOf(
        (async () => {
          for await (const batch of model.streamBatches(request)) seen.push(...batch);
        })(),
      );
      expect(error).toBe(cut);
      expect(textOf(seen)).toBe("par");
      expect(b.calls).toHaveLength(strategy === "round_robin" ? 2 : 1);
    });
  }

  it("I7: through the real adapter, a 503 on opening routes on; the next model answers", async () => {
    const fake = new FakeProvider({ seed: 9, maxChunk: 5 }).reply(
      {
        status: 503,
        headers: { "content-type": "application/json" },
        body: '{"error":{"message":"overloaded","type":"server_error","code":null}}',
      },
      { fixture: "openai-chat/text-with-usage.sse" },
    );
    const make = (m: string) =>
      openai({ model: m, apiKey: "sk-test", baseUrl: "https://fake.test/v1" });
    const model = router({ strategy: "fallback", models: [make("gpt-4o"), make("gpt-4o-mini")] });
    const events = await collectBatches(model.streamBatches(request, { fetch: fake.fetch }));
    expect(textOf(events)).toBe("The capital of Mexico is Mexico City.");
    expect(fake.requests.map((r) => r.body.model)).toEqual(["gpt-4o", "gpt-4o-mini"]);
  });
});

describe("I3: fastest", () => {
  it("I3: all start at once; the first to send content wins and the others are canceled", async () => {
    const slowGate = deferred();
    const slow = member("slow", [
      [[start("slow", "slow-model")], { run: () => slowGate.promise }, ...answer("slow", "slow")],
    ]);
    const hanging = member("hang", [[{ hang: true }]]);
    const fast = member("fast", [answer("fast", "fast wins")]);
    const model = router({ strategy: "fastest", models: [slow, hanging, fast] });
    const events: StreamEvent[] = [];
    for await (const batch of model.streamBatches(request)) {
      // The losers are canceled as soon as the winner opens, not when it ends.
      if (events.length === 0) {
        expect(hanging.calls[0]?.options.signal?.aborted).toBe(true);
        expect(slow.calls[0]?.options.signal?.aborted).toBe(true);
        expect(fast.calls[0]?.options.signal?.aborted).toBe(false);
      }
      events.push(...batch);
    }
    expect(textOf(events)).toBe("fast wins");
    expect(events.filter((e) => e.type === "message_start")).toEqual([start("fast", "fast-model")]);
    for (const m of [slow, hanging, fast]) expect(m.calls).toHaveLength(1);
    expect(hanging.calls[0]?.options.signal?.aborted).toBe(true);
    expect(slow.calls[0]?.options.signal?.aborted).toBe(true);
    slowGate.resolve();
    await new Promise((r) => setTimeout(r, 1));
    expect(slow.closedEarly).toBe(1);
    expect(hanging.closedEarly).toBe(1);
  });

  it("I3: a model that fails first is skipped and logged; all failing → AllProvidersFailedError", async () => {
    const gate = deferred();
    const broken = member("broken", [fails("broken")]);
    const later = member("later", [[{ run: () => gate.promise }, ...answer("later", "later")]]);
    const model = router({ strategy: "fastest", models: [broken, later] });
    const call = run(model);
    setTimeout(() => gate.resolve(), 1);
    const events = await call;
    expect(textOf(events)).toBe("later");
    expect(
      events.filter((e) => e.type === "error").map((e) => e.type === "error" && e.provider),
    ).toEqual(["broken"]);
    const error = await failureOf(
      run(
        router({
          strategy: "fastest",
          models: [member("x", [fails("x")]), member("y", [fails("y")])],
        }),
      ),
    );
    expect((error as AllProvidersFailedError).failures.map((f) => f.provider).sort()).toEqual([
      "x",
      "y",
    ]);
  });

  it("I3: the winner's failure after content is thrown; stopping early cancels the winner", async () => {
    const cut = failure({ provider: "w", kind: "stream" });
    const w = member("w", [
      [[start("w", "w-model")], [{ type: "text_delta", text: "x" }], { fail: cut }],
    ]);
    expect(await failureOf(run(router({ strategy: "fastest", models: [w] })))).toBe(cut);
    const long = member("long", [textScript(["a", "b", "c"], { provider: "long" })]);
    for await (const batch of router({ strategy: "fastest", models: [long] }).streamBatches(
      request,
    )) {
      if (batch.some((e) => e.type === "text_delta")) break;
    }
    expect(long.closedEarly).toBe(1);
  });

  it("I3: aborting the call cancels every model", async () => {
    const controller = new AbortController();
    const models = [member("a", [[{ hang: true }]]), member("b", [[{ hang: true }]])];
    const call = collectBatches(
      router({ strategy: "fastest", models }).streamBatches(request, { signal: controller.signal }),
    );
    setTimeout(() => controller.abort(), 5);
    expect(((await failureOf(call)) as ProviderError).kind).toBe("aborted");
    for (const m of models) expect(m.calls[0]?.options.signal?.aborted).toBe(true);
  });
});

describe("I4: cheapest", () => {
  it("I4: by input + output price, unknown prices last, ties in order, then falls back", async () => {
    const pricey = member("pricey", [answer("pricey", "pricey")], {
      inputPricePerMillion: 5,
      outputPricePerMillion: 15,
    });
    const cheap = member("cheap", [fails("cheap")], {
      inputPricePerMillion: 0.1,
      outputPricePerMillion: 0.4,
    });
    const unknown = member("unknown", [], {
      inputPricePerMillion: 0.01,
      outputPricePerMillion: null,
    });
    const mid1 = member("mid1", [fails("mid1")], {
      inputPricePerMillion: 1,
      outputPricePerMillion: 1,
    });
    const mid2 = member("mid2", [fails("mid2")], {
      inputPricePerMillion: 1.5,
      outputPricePerMillion: 0.5,
    });
    const routes: Route[] = [];
    const model = router({
      strategy: "cheapest",
      models: [unknown, pricey, mid1, cheap, mid2],
      onRoute: (r) => routes.push(r),
    });
    const events = await run(model);
    expect(routes[0]?.order.map((m) => m.provider)).toEqual([
      "cheap",
      "mid1",
      "mid2",
      "pricey",
      "unknown",
    ]);
    expect(textOf(events)).toBe("pricey");
    expect(events.filter((e) => e.type === "error")).toHaveLength(3);
    expect(unknown.calls).toHaveLength(0);
  });
});

describe("I1–I7: finished streams pass through unchanged", () => {
  it("I1: the winning model's events are passed on as they came", async () => {
    const script: Step[] = [
      [start("a", "a-model")],
      [
        { type: "text_delta", text: "x" },
        { type: "text_delta", text: "y" },
      ],
      [end()],
    ];
    const a = member("a", [script]);
    const batches: StreamEvent[][] = [];
    for await (const batch of router({ strategy: "fallback", models: [a] }).streamBatches(request))
      batches.push(batch);
    expect(batches).toEqual([
      [start("a", "a-model"), { type: "text_delta", text: "x" }, { type: "text_delta", text: "y" }],
      [end()],
    ]);
  });
});
