import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { generate } from "../../src/providers/base/collect";
import { ModelRequest, type StreamEvent } from "../../src/providers/base/types";
import { openai } from "../../src/providers/openai/openai-chat";
import {
  stripThinkTags,
  ThinkTagFilter,
  type ThinkTagOptions,
} from "../../src/providers/think-tags";
import { collectBatches, FakeProvider } from "./fake-provider";
import { end, ScriptedModel, start } from "./scripted-model";

/** Feeds the chunks and ends the stream; returns what the user sees and the thinking. */
function filter(chunks: string[], options?: ThinkTagOptions) {
  const f = new ThinkTagFilter(options);
  let visible = "";
  let thinking = "";
  for (const chunk of [...chunks.map((c) => f.push(c)), f.end()]) {
    visible += chunk.visible;
    thinking += chunk.thinking;
  }
  return { visible, thinking };
}

/** Splits `text` at the given (sorted, deduplicated) positions. */
function splitAt(text: string, cuts: number[]): string[] {
  const points = [...new Set(cuts.map((c) => c % (text.length + 1)))].sort((a, b) => a - b);
  const chunks: string[] = [];
  let from = 0;
  for (const p of points) {
    chunks.push(text.slice(from, p));
    from = p;
  }
  chunks.push(text.slice(from));
  return chunks;
}

describe("J3: closed think blocks", () => {
  it("J3: a closed block leaves the answer and comes back as thinking", () => {
    expect(filter(["<think>The user wants a capital.</think>Paris."])).toEqual({
      visible: "Paris.",
      thinking: "The user wants a capital.",
    });
  });

  it("J3: <thinking> and <reasoning> too, case-insensitive; several blocks joined by newlines", () => {
    const text = "<THINK>one</Think>A <thinking>two</THINKING>B <Reasoning>three</reasoning>C";
    expect(filter([text])).toEqual({ visible: "A B C", thinking: "one\ntwo\nthree" });
  });

  it("J3: the gap a block leaves is dropped, the text around it kept", () => {
    expect(filter(["<think>\nhmm\n</think>\n\nParis"])).toEqual({
      visible: "Paris",
      thinking: "\nhmm\n",
    });
    expect(filter(["It is <think>hmm</think> Paris"]).visible).toBe("It is Paris");
  });

  it("J3: only the block's own closing tag closes it", () => {
    expect(filter(["<think>a</thinking>b</think>c"])).toEqual({
      visible: "c",
      thinking: "a</thinking>b",
    });
  });

  it("J3: text that only looks like a tag stays visible", () => {
    const text = "a < b, <b>bold</b>, <thinker>, <think >, x<y, <";
    expect(filter([text.slice(0, -1), "<"]).visible).toBe(text.slice(0, -1));
    expect(filter(["a <3 b"]).visible).toBe("a <3 b");
    expect(filter(["<thinker> is not a tag"]).visible).toBe("<thinker> is not a tag");
  });

  it("J3: a stray closing tag is dropped; startInside handles templates that open the block in the prompt", () => {
    expect(filter(["done</think> Paris"]).visible).toBe("doneParis");
    expect(filter(["the user asks", "</thi", "nk>\n\nParis"], { startInside: true })).toEqual({
      visible: "Paris",
      thinking: "the user asks",
    });
  });

  it("J3: push returns each chunk's own visible text and thinking", () => {
    const f = new ThinkTagFilter();
    expect(f.push("Hi <thi")).toEqual({ visible: "Hi ", thinking: "" });
    expect(f.push("nk>hm")).toEqual({ visible: "", thinking: "hm" });
    expect(f.push("m</think>Yo")).toEqual({ visible: "Yo", thinking: "m" });
    expect(f.end()).toEqual({ visible: "", thinking: "" });
  });
});

describe("J4: split and unclosed tags", () => {
  const text =
    "Sure. <think>Let me think: 2+2=4 ✓ 😀</think>\nThe answer is 4.<reasoning>done</reasoning>!";

  it("J4: every split point and pair of split points gives the unsplit result", () => {
    const whole = filter([text]);
    expect(whole).toEqual({
      visible: "Sure. The answer is 4.!",
      thinking: "Let me think: 2+2=4 ✓ 😀\ndone",
    });
    for (let i = 0; i <= text.length; i++) {
      expect(filter([text.slice(0, i), text.slice(i)])).toEqual(whole);
      for (let j = i; j <= text.length; j += 3) {
        expect(filter([text.slice(0, i), text.slice(i, j), text.slice(j)])).toEqual(whole);
      }
    }
  });

  it("J4: one character at a time", () => {
    expect(filter([...text])).toEqual(filter([text]));
    expect(filter(Array.from(text, (c) => c).map((c) => c.toUpperCase()))).toEqual(
      filter([text.toUpperCase()]),
    );
  });

  it("J4: an unclosed block at the end is stripped from the answer and kept as thinking", () => {
    expect(filter(["Answer.", "<think>I was cut off"])).toEqual({
      visible: "Answer.",
      thinking: "I was cut off",
    });
    expect(filter(["<think>half a closing tag </thi"])).toEqual({
      visible: "",
      thinking: "half a closing tag </thi",
    });
  });

  it("J4: a tag cut off at the end never shows", () => {
    for (const tail of ["<", "<t", "<thin", "<thinking", "<REASON", "</think"]) {
      expect(filter(["Answer.", tail]).visible).toBe("Answer.");
    }
  });

  type Part =
    | { visible: string }
    | { name: string; upper: boolean[]; content: string; closed: boolean };
  const NAMES = ["think", "thinking", "reasoning"];
  const visibleChars = fc.constantFrom("a", "b", " ", "\n", ">", "/", "t", "h", "é", "😀", "2");
  const contentChars = fc.constantFrom(
    "a",
    "<",
    "/",
    ">",
    "t",
    "h",
    "i",
    "n",
    "k",
    " ",
    "\n",
    "😀",
  );
  const part: fc.Arbitrary<Part> = fc.oneof(
    fc.record({ visible: fc.string({ unit: visibleChars, maxLength: 12 }) }),
    fc.record({
      name: fc.constantFrom(...NAMES),
      upper: fc.array(fc.boolean(), { minLength: 12, maxLength: 12 }),
      content: fc.string({ unit: contentChars, maxLength: 16 }),
      closed: fc.constant(true),
    }),
  );
  const lastBlock = fc.option(
    fc.record({
      name: fc.constantFrom(...NAMES),
      upper: fc.array(fc.boolean(), { minLength: 12, maxLength: 12 }),
      content: fc.string({ unit: contentChars, maxLength: 16 }),
      closed: fc.constant(false),
    }),
    { nil: undefined },
  );

  const cased = (tag: string, upper: boolean[]) =>
    [...tag].map((c, i) => (upper[i % upper.length] ? c.toUpperCase() : c)).join("");

  /** The text a model would send, and what the user should see and the thinking, by construction. */
  function build(parts: Part[]) {
    let text = "";
    let visible = "";
    let thinking = "";
    let thought = false;
    let trimming = false;
    for (const p of parts) {
      if ("visible" in p) {
        text += p.visible;
        let shown = p.visible;
        if (trimming) {
          shown = shown.trimStart();
          if (shown) trimming = false;
        }
        visible += shown;
        continue;
      }
      // Content holding its own closing tag would end the block early: not what we build.
      const content = p.content.toLowerCase().includes(`</${p.name}>`) ? "" : p.content;
      text += cased(`<${p.name}>`, p.upper) + content;
      if (p.closed) text += cased(`</${p.name}>`, p.upper.slice().reverse());
      if (thought) thinking += "\n";
      thinking += content;
      thought ||= content !== "";
      trimming = p.closed;
    }
    return { text, visible, thinking };
  }

  it("J4: random texts with think blocks and random splits: visible output is the unsplit one and holds no tag fragment (property)", () => {
    fc.assert(
      fc.property(
        fc.array(part, { maxLength: 8 }),
        lastBlock,
        fc.array(fc.nat(), { maxLength: 20 }),
        (parts, last, cuts) => {
          const { text, visible, thinking } = build(last ? [...parts, last] : parts);
          const whole = filter([text]);
          expect(whole).toEqual({ visible, thinking });
          expect(filter(splitAt(text, cuts))).toEqual(whole);
          // Visible parts hold no "<", so any "<" would be a leaked tag fragment.
          expect(whole.visible).not.toContain("<");
        },
      ),
      { numRuns: 500 },
    );
  });

  it("J4: any text, tag-like or not, filters the same however it is split (property)", () => {
    const piece = fc.constantFrom(
      "<think>",
      "</think>",
      "<THINKING>",
      "</Thinking>",
      "<reasoning>",
      "</REASONING>",
      "<",
      "</",
      "<th",
      "ink>",
      ">",
      "x",
      " ",
      "\n",
      "é",
    );
    fc.assert(
      fc.property(
        fc.array(piece, { maxLength: 30 }),
        fc.array(fc.nat(), { maxLength: 20 }),
        (pieces, cuts) => {
          const text = pieces.join("");
          expect(filter(splitAt(text, cuts))).toEqual(filter([text]));
        },
      ),
      { numRuns: 500 },
    );
  });
});

describe("J3, J4: stripThinkTags wraps a model", () => {
  it("J3: text deltas become text and reasoning deltas in stream order; other events pass", async () => {
    const model = new ScriptedModel({
      scripts: [
        [
          [start()],
          [{ type: "text_delta", text: "Hi <thi" }],
          [
            { type: "text_delta", text: "nk>hmm</thi" },
            { type: "usage", usage: { promptTokens: 1, completionTokens: 2, totalTokens: 3 } },
          ],
          [{ type: "text_delta", text: "nk> there" }],
          [end()],
        ],
      ],
    });
    const batches: StreamEvent[][] = [];
    for await (const batch of stripThinkTags(model).streamBatches(
      ModelRequest.parse({ messages: [] }),
    ))
      batches.push(batch);
    expect(batches).toEqual([
      [start()],
      [{ type: "text_delta", text: "Hi " }],
      [
        { type: "reasoning_delta", text: "hmm" },
        { type: "usage", usage: { promptTokens: 1, completionTokens: 2, totalTokens: 3 } },
      ],
      [{ type: "text_delta", text: "there" }],
      [end()],
    ]);
  });

  it("J4: an unclosed block is flushed as reasoning just before message_end", async () => {
    const model = new ScriptedModel({
      scripts: [
        [
          [start()],
          [
            { type: "text_delta", text: "A<think>cut" },
            { type: "text_delta", text: " off</thi" },
          ],
          [end()],
        ],
      ],
    });
    const response = await generate(stripThinkTags(model), {
      messages: [{ role: "user", content: "q" }],
    });
    expect(response.text).toBe("A");
    expect(response.reasoning).toBe("cut off</thi");
    expect(response.stopReason).toBe("stop");
  });

  it("J3, J4: through the real OpenAI adapter with tags split across network reads", async () => {
    const deltas = ["<thi", "nk>The user ", "wants 2+2.</th", "ink>", "\n\n4", "."];
    const chunk = (delta: object, finish: string | null = null) =>
      `data: ${JSON.stringify({ id: "c1", object: "chat.completion.chunk", model: "deepseek-r1", choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
    const body = [
      chunk({ role: "assistant", content: "" }),
      ...deltas.map((content) => chunk({ content })),
      chunk({}, "stop"),
      "data: [DONE]\n\n",
    ].join("");
    for (const seed of [1, 2, 3]) {
      const fake = new FakeProvider({ seed, maxChunk: 7 }).reply({
        status: 200,
        headers: { "content-type": "text/event-stream" },
        body,
      });
      const model = stripThinkTags(
        openai({ model: "deepseek-r1", apiKey: "k", baseUrl: "https://fake.test/v1" }),
      );
      const response = await generate(
        model,
        { messages: [{ role: "user", content: "2+2?" }] },
        { fetch: fake.fetch },
      );
      expect(response.text).toBe("4.");
      expect(response.reasoning).toBe("The user wants 2+2.");
      const events = await collectBatches(
        model.streamBatches(ModelRequest.parse({ messages: [] }), {
          fetch: new FakeProvider({ seed }).reply({ status: 200, body }).fetch,
        }),
      );
      for (const e of events) if (e.type === "text_delta") expect(e.text).not.toMatch(/[<>]/);
    }
  });
});
