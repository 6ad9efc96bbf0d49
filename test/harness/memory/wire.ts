/**
 * The fake OpenAI provider of the memory tests, at the HTTP wire: chat turns are answered
 * from a script of texts or tool calls, extraction calls (recognized by their
 * structured-output name) from a script of decisions. Every request body is kept.
 */
import { harness } from "./worker";

type Json = Record<string, unknown>;

export type TurnReply = string | { tool: string; args: Json };
export type ExtractionReply = Json | "hang";

/**
 * The longest a hanging extraction call waits for its test to release it: past any test's
 * timeout, so only a test that failed before releasing it meets this; then the call fails
 * and nothing outlives the file.
 */
const HANG_CAP_MS = 30_000;

const USAGE = { prompt_tokens: 100, completion_tokens: 20, total_tokens: 120 };

function chunk(delta: Json, finish: string | null = null): string {
  return `data: ${JSON.stringify({
    id: "chatcmpl-test",
    object: "chat.completion.chunk",
    created: 1,
    model: "gpt-4o-mini",
    choices: [{ index: 0, delta, finish_reason: finish }],
  })}\n\n`;
}

/** An OpenAI chat completion stream: a text, or one tool call, then usage. */
export function sse(reply: TurnReply, usage = USAGE): string {
  const parts =
    typeof reply === "string"
      ? [chunk({ role: "assistant", content: reply }), chunk({}, "stop")]
      : [
          chunk({
            role: "assistant",
            tool_calls: [
              {
                index: 0,
                id: `call_${Math.random().toString(36).slice(2, 10)}`,
                type: "function",
                function: { name: reply.tool, arguments: JSON.stringify(reply.args) },
              },
            ],
          }),
          chunk({}, "tool_calls"),
        ];
  const end = `data: ${JSON.stringify({ id: "chatcmpl-test", object: "chat.completion.chunk", created: 1, model: "gpt-4o-mini", choices: [], usage })}\n\ndata: [DONE]\n\n`;
  return parts.join("") + end;
}

export class Wire {
  readonly turns: Json[] = [];
  readonly extractions: Json[] = [];
  #turnReplies: TurnReply[] = [];
  #extractionReplies: ExtractionReply[] = [];
  /** The user messages of the turns this wire answered. */
  #asked = new Set<string>();
  /** Extraction calls answered so far. */
  answered = 0;
  /** Extraction calls that were held ("hang") and have ended, hung up on. */
  hungUp = 0;
  #released = false;

  constructor() {
    harness.fetch = (input, init) => this.#fetch(new Request(input, init));
  }

  turn(...replies: TurnReply[]): this {
    this.#turnReplies.push(...replies);
    return this;
  }

  extraction(...replies: ExtractionReply[]): this {
    this.#extractionReplies.push(...replies);
    return this;
  }

  /** Ends every held ("hang") extraction call: each then fails with a 400. */
  release(): void {
    this.#released = true;
  }

  /**
   * The recalled memory of each chat turn sent: the user-role message before the
   * conversation that holds it ("" for a turn without one).
   */
  get recalled(): string[] {
    return this.turns.map((body) => {
      const message = (body.messages as Json[]).find(
        (m) => m.role === "user" && String(m.content).startsWith("<recalled_memory>"),
      );
      return message ? String(message.content) : "";
    });
  }

  /** The system prompt of each chat turn sent. */
  get systems(): string[] {
    return this.turns.map((body) => {
      const first = (body.messages as Json[])[0] as Json;
      return first.role === "system" ? String(first.content) : "";
    });
  }

  async #fetch(request: Request): Promise<Response> {
    const body = (await request.json()) as Json;
    const format = body.response_format as { json_schema?: { name?: string } } | undefined;
    if (format?.json_schema?.name === "memory_extraction") {
      // Extraction runs after the answer, so an earlier test's may arrive during this one:
      // only extractions of turns this wire answered take its scripted replies.
      const text = JSON.stringify(body.messages);
      if (![...this.#asked].some((q) => text.includes(JSON.stringify(q).slice(1, -1)))) {
        return new Response(sse(JSON.stringify({ facts: [], entities: [] })), {
          headers: { "content-type": "text/event-stream" },
        });
      }
      this.extractions.push(body);
      const reply = this.#extractionReplies.shift() ?? { facts: [], entities: [] };
      if (reply === "hang") {
        // Held until the test releases it, however long the answer takes on a loaded
        // machine. It checks a flag on a short timer rather than awaiting a promise the
        // test resolves: the call runs in a Durable Object's request, and workerd cancels
        // a wait that only another request could end.
        const cap = Date.now() + HANG_CAP_MS;
        while (!this.#released && Date.now() < cap) {
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
        this.hungUp++;
        return new Response("hung up", { status: 400 });
      }
      this.answered++;
      return new Response(sse(JSON.stringify(reply)), {
        headers: { "content-type": "text/event-stream" },
      });
    }
    this.turns.push(body);
    const users = (body.messages as Json[]).filter((m) => m.role === "user");
    const last = users.at(-1)?.content;
    if (typeof last === "string") this.#asked.add(last);
    const reply = this.#turnReplies.shift();
    if (reply === undefined) throw new Error("fake provider: no chat turn scripted");
    return new Response(sse(reply), { headers: { "content-type": "text/event-stream" } });
  }
}
