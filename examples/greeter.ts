// The "Define your own agent" example of docs/guides/getting-started.md, as a file of its own.
import * as z from "zod";
import { defineAgent, textOf, tool } from "../src/index";

interface Env {
  GREETING: string;
}

const worker = defineAgent<Env>({
  card: {
    name: "Greeter",
    description: "Greets people and adds numbers",
    skills: [{ id: "greet", description: "Says hello", tags: ["demo"] }],
  },
  tools: {
    add: tool({
      description: "Adds",
      input: z.object({ a: z.number(), b: z.number() }),
      run: ({ a, b }) => a + b,
    }),
  },
  async handler(ctx) {
    const name = textOf(ctx.message.parts).trim();
    if (!name) return ctx.requestInput("What's your name?");
    ctx.status("Thinking…");
    return `${ctx.env.GREETING}, ${name}!`;
  },
});

export const { EdgelinkContext, EdgelinkIndex } = worker;
export default worker;
