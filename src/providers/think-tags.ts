import type { CallOptions, Model, ModelRequest, StreamEvent } from "./base/types";

/**
 * Models that think in their visible output (DeepSeek R1, QwQ, many open models behind
 * OpenAI-compatible servers) wrap it in `<think>…</think>`, `<thinking>…</thinking>` or
 * `<reasoning>…</reasoning>`. This filter takes those blocks out of the answer as it
 * streams, whatever the chunking: text that might be the start of a tag is held
 * until the next chunk tells, so no tag fragment ever reaches the visible text.
 */

const NAMES = ["think", "thinking", "reasoning"] as const;
/** Every tag the filter knows outside a block: openings, and stray closings to drop. */
const OUTSIDE_TAGS = NAMES.flatMap((n) => [`<${n}>`, `</${n}>`]);

/** Text split into what the user sees and what the model thought. */
export interface ThinkSplit {
  visible: string;
  thinking: string;
}

/** One run of visible text or thinking, in stream order. */
export interface ThinkPart {
  thinking: boolean;
  text: string;
}

export interface ThinkTagOptions {
  /**
   * Start inside a `<think>` block: for chat templates that put the opening tag in the
   * prompt, so the model only ever sends the closing one.
   */
  startInside?: boolean;
}

/**
 * The incremental filter. Several blocks' thinking is joined with a newline; whitespace
 * right after a closing tag is dropped (the gap the block leaves); a stray closing tag
 * outside a block is dropped; at the end an unclosed block, or a tag cut off mid-way, is
 * stripped from the visible text (an unclosed block's text counts as thinking).
 * @example
 * const filter = new ThinkTagFilter();
 * filter.push("<thi"); // { visible: "", thinking: "" }
 * filter.push("nk>why</think>Paris"); // { visible: "Paris", thinking: "why" }
 * filter.end(); // { visible: "", thinking: "" }
 */
export class ThinkTagFilter {
  /** The open block's tag name, or null outside. */
  #inside: string | null;
  /** Text that may be the start of a tag, held until the next chunk settles it. */
  #pending = "";
  /** Some thinking was emitted: the next block's is set apart by a newline. */
  #thought = false;
  /** Just after a closing tag: leading whitespace is the gap the block left. */
  #trimming = false;

  constructor(options: ThinkTagOptions = {}) {
    this.#inside = options.startInside ? "think" : null;
  }

  push(text: string): ThinkSplit {
    return join(this.pushParts(text));
  }

  /** The stream ended: settle what is held. */
  end(): ThinkSplit {
    return join(this.endParts());
  }

  pushParts(text: string): ThinkPart[] {
    const out: ThinkPart[] = [];
    let buffer = this.#pending + text;
    this.#pending = "";
    while (buffer) {
      buffer = this.#inside === null ? this.#outside(buffer, out) : this.#within(buffer, out);
    }
    return out;
  }

  endParts(): ThinkPart[] {
    const out: ThinkPart[] = [];
    // Inside a block the rest is thinking (a half-received closing tag too); outside, what
    // is held is a cut-off tag, which is dropped rather than shown.
    if (this.#inside !== null) this.#think(out, this.#pending);
    this.#pending = "";
    return out;
  }

  /** Consumes visible text up to the next tag; returns what is left to scan. */
  #outside(buffer: string, out: ThinkPart[]): string {
    let text = buffer;
    if (this.#trimming) {
      text = text.replace(/^\s+/, "");
      if (!text) return "";
      this.#trimming = false;
    }
    const lt = text.indexOf("<");
    if (lt < 0) {
      emit(out, false, text);
      return "";
    }
    emit(out, false, text.slice(0, lt));
    const rest = text.slice(lt);
    const head = asciiLower(rest.slice(0, 13));
    const tag = OUTSIDE_TAGS.find((t) => head.startsWith(t));
    if (tag) {
      if (tag[1] === "/") {
        this.#trimming = true;
      } else {
        this.#inside = tag.slice(1, -1);
        if (this.#thought) emit(out, true, "\n");
      }
      return rest.slice(tag.length);
    }
    if (OUTSIDE_TAGS.some((t) => t.startsWith(head))) {
      this.#pending = rest;
      return "";
    }
    emit(out, false, "<");
    return rest.slice(1);
  }

  #think(out: ThinkPart[], text: string): void {
    if (!text) return;
    this.#thought = true;
    emit(out, true, text);
  }

  /** Consumes thinking up to the block's closing tag; returns what is left to scan. */
  #within(buffer: string, out: ThinkPart[]): string {
    const close = `</${this.#inside}>`;
    const lower = asciiLower(buffer);
    const at = lower.indexOf(close);
    if (at >= 0) {
      this.#think(out, buffer.slice(0, at));
      this.#inside = null;
      this.#trimming = true;
      return buffer.slice(at + close.length);
    }
    const keep = heldSuffix(lower, close);
    this.#think(out, buffer.slice(0, buffer.length - keep));
    this.#pending = buffer.slice(buffer.length - keep);
    return "";
  }
}

/** Length of the longest end of `text` that `tag` starts with (a tag cut by the chunking). */
function heldSuffix(text: string, tag: string): number {
  for (let n = Math.min(tag.length - 1, text.length); n > 0; n--) {
    if (tag.startsWith(text.slice(text.length - n))) return n;
  }
  return 0;
}

/** Lower-cases A–Z only, so indexes still line up with the original text. */
function asciiLower(text: string): string {
  return text.replace(/[A-Z]/g, (c) => c.toLowerCase());
}

function emit(out: ThinkPart[], thinking: boolean, text: string): void {
  if (!text) return;
  const last = out.at(-1);
  if (last && last.thinking === thinking) last.text += text;
  else out.push({ thinking, text });
}

function join(parts: ThinkPart[]): ThinkSplit {
  let visible = "";
  let thinking = "";
  for (const part of parts) {
    if (part.thinking) thinking += part.text;
    else visible += part.text;
  }
  return { visible, thinking };
}

/**
 * Wraps a model so `<think>` blocks in its text become `reasoning_delta` events:
 * the answer's `text_delta`s carry only visible text, in stream order with the thinking.
 * What the filter still holds when `message_end` arrives is settled just before it.
 * @example
 * const model = stripThinkTags(workersAI({ model: "@cf/deepseek-ai/deepseek-r1-distill-qwen-32b" }));
 * (await generate(model, request)).reasoning; // the model's <think> text
 */
export function stripThinkTags(model: Model, options: ThinkTagOptions = {}): Model {
  return {
    provider: model.provider,
    model: model.model,
    configProblems: (env) => model.configProblems?.(env) ?? [],
    // Read through, not copied: the wrapped model's capabilities are what a turn budgets by.
    get capabilities() {
      return model.capabilities;
    },
    async *streamBatches(
      request: ModelRequest,
      call: CallOptions = {},
    ): AsyncGenerator<StreamEvent[]> {
      const filter = new ThinkTagFilter(options);
      for await (const batch of model.streamBatches(request, call)) {
        const out: StreamEvent[] = [];
        for (const event of batch) {
          if (event.type === "text_delta") out.push(...toEvents(filter.pushParts(event.text)));
          else if (event.type === "message_end") out.push(...toEvents(filter.endParts()), event);
          else out.push(event);
        }
        if (out.length) yield out;
      }
    },
  };
}

function toEvents(parts: ThinkPart[]): StreamEvent[] {
  return parts.map((p) =>
    p.thinking ? { type: "reasoning_delta", text: p.text } : { type: "text_delta", text: p.text },
  );
}
