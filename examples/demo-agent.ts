/**
 * The built-in demo agent that `npm run dev` serves. It needs no API key and answers
 * deterministically, so it is easy to explore with curl:
 *
 * - any text: echoed back, streamed word by word into an artifact
 * - "hello": asks for your name (input-required); answer in the same task
 * - "count 5": counts to 5, one number a second (try cancel and subscribe on it)
 * - "recap": lists what you said earlier in this conversation (its history)
 * - "fail": fails the task on purpose
 * - "ping": answered at once with a message, no task (a direct reply)
 * - a tool_call part (add, reverse, wordCount): run by the default execution
 */
import * as z from "zod";
import { messageText } from "../src/history/index";
import {
  defineAgent,
  type RunContext,
  runDefaultExecution,
  textOf,
  tool,
  UserFacingError,
} from "../src/index";

interface Env {
  /** Pause between streamed words, in milliseconds (wrangler.toml sets it). */
  DEMO_CHUNK_DELAY_MS?: string;
}

const tools = {
  add: tool({
    description: "Adds two numbers",
    input: z.object({ a: z.number(), b: z.number() }),
    run: ({ a, b }) => a + b,
  }),
  reverse: tool({
    description: "Reverses a string",
    input: z.object({ text: z.string() }),
    run: ({ text }) => [...text].reverse().join(""),
  }),
  wordCount: tool({
    description: "Counts the words in a text",
    input: z.object({ text: z.string() }),
    run: ({ text }) => text.split(/\s+/).filter(Boolean).length,
  }),
};

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (ms <= 0) return resolve();
    const timer = setTimeout(resolve, ms);
    signal.addEventListener("abort", () => {
      clearTimeout(timer);
      reject(signal.reason);
    });
  });
}

/** Streams `text` into one artifact, a word per chunk. */
async function streamWords(ctx: RunContext<Env>, text: string, name: string): Promise<void> {
  const delay = Number(ctx.env.DEMO_CHUNK_DELAY_MS ?? 0);
  const words = text.split(/(?<= )/);
  let artifactId: string | undefined;
  for (const [i, word] of words.entries()) {
    await sleep(delay, ctx.signal);
    artifactId = ctx.artifact({
      artifactId,
      name,
      parts: [{ type: "text", content: word }],
      append: i > 0,
      lastChunk: i === words.length - 1,
    });
  }
}

const worker = defineAgent<Env>({
  card: {
    name: "Edgelink demo agent",
    description: "Echoes, asks your name, counts, and runs tools. Deterministic, no API key.",
    version: "0.1.0",
    capabilities: { toolCalling: true },
    skills: [
      { id: "echo", name: "Echo", description: "Streams your text back", tags: ["demo"] },
      {
        id: "greet",
        name: "Greet",
        description: 'Say "hello" and it asks for your name',
        tags: ["multi-turn"],
        examples: ["hello"],
      },
      {
        id: "recap",
        name: "Recap",
        description: "Recalls what you said earlier in the same context",
        tags: ["history"],
        examples: ["recap"],
      },
      {
        id: "count",
        name: "Count",
        description: "Counts slowly; cancel it or subscribe to it",
        tags: ["long-running"],
        examples: ["count 5"],
      },
      {
        id: "tools",
        name: "Tools",
        description: "Runs tool_call parts: add, reverse, wordCount",
        tags: ["tools"],
        examples: [{ toolName: "add", args: { a: 2, b: 3 } }],
      },
    ],
  },
  tools,
  // Webhooks; signed with PUSH_SIGNING_KEYS when set, an ephemeral key under wrangler dev.
  push: {},
  // Keyless and deterministic: a real agent would ask a model for this.
  summarizer: async (transcript) => {
    const words = transcript.split(/\s+/).filter(Boolean);
    return `Summary of ${words.length} words: ${words.slice(0, 12).join(" ")}${words.length > 12 ? " …" : ""}`;
  },
  // A quick answer needs no task: SendMessage returns this message itself.
  reply: ({ message }) => (/^ping$/i.test(textOf(message.parts).trim()) ? "pong" : undefined),
  async handler(ctx) {
    if (ctx.message.parts.some((p) => p.type === "tool_call")) {
      return runDefaultExecution(ctx, { tools, infer: null });
    }
    const text = textOf(ctx.message.parts).trim();
    const waitingForName = ctx.task.stateHistory.some((s) => s.newState === "input-required");
    if (waitingForName) {
      if (!text) return ctx.requestInput("I still didn't catch your name. What is it?");
      return streamWords(ctx, `Nice to meet you, ${text}!`, "greeting");
    }
    if (/^(hello|hi|hey)\b/i.test(text)) return ctx.requestInput("Hi! What's your name?");
    if (/^fail\b/i.test(text)) throw new UserFacingError("You asked me to fail, so I did.");
    if (/^recap$/i.test(text)) {
      // Every user turn of this context except this "recap" itself.
      const earlier = ctx.conversation
        .messages()
        .filter((m) => m.role === "user")
        .slice(0, -1)
        .map((m) => messageText(m));
      return earlier.length
        ? `Earlier in this conversation you said: ${earlier.join(" / ")}`
        : "This is the start of our conversation.";
    }
    const count = /^count\s+(\d{1,3})$/i.exec(text);
    if (count) {
      const n = Number(count[1]);
      for (let i = 1; i <= n; i++) {
        await sleep(1000, ctx.signal);
        ctx.status(`${i}…`);
      }
      return `Counted to ${n}.`;
    }
    return streamWords(ctx, `You said: ${text || "(nothing)"}`, "echo");
  },
});

export const { EdgelinkContext, EdgelinkIndex } = worker;
export default worker;
