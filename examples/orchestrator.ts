/**
 * A keyless orchestrator: it hands each message to the demo agent (another Worker,
 * reached through the `DEMO` service binding, no network hop) and streams the demo
 * agent's progress and answer back as its own. Run both Workers together:
 *
 *   echo "EDGELINK_ID_KEY=$(openssl rand -base64 48)" > .dev.vars   # once
 *   npx wrangler dev -c examples/orchestrator.wrangler.toml -c wrangler.toml
 *
 * (The demo agent is reached through the binding, not from localhost, so it needs its
 * task-id signing key even under `wrangler dev`.)
 * The first config is served on http://localhost:8787; the demo agent runs beside it.
 *
 * - any text: the demo agent echoes it, word by word, through the orchestrator
 * - "count 5": the demo agent counts; its progress messages become the orchestrator's
 * - "both <text>": two demo tasks at once, their answers joined
 */
import { defineAgent, textOf } from "../src/index";

interface Env {
  /** The demo agent (wrangler.toml), bound as a service in orchestrator.wrangler.toml. */
  DEMO: Fetcher;
}

const worker = defineAgent<Env>({
  card: {
    name: "Edgelink orchestrator",
    description: "Delegates to the demo agent and relays its work. Keyless.",
    version: "0.1.0",
    skills: [
      {
        id: "delegate",
        name: "Delegate",
        description: "Hands your message to the demo agent and streams its answer",
        tags: ["delegation"],
        examples: ["count 3", "both hello world"],
      },
    ],
  },
  async handler(ctx) {
    const text = textOf(ctx.message.parts).trim();
    const both = /^both\s+(.+)$/i.exec(text);
    if (both) {
      // Two children at once; each is recorded, so a restart re-attaches to both.
      const [first, second] = await Promise.all([
        ctx.delegate(ctx.env.DEMO, both[1] ?? "").answer(),
        ctx.delegate(ctx.env.DEMO, (both[1] ?? "").split(" ").reverse().join(" ")).answer(),
      ]);
      return `${first}\n${second}`;
    }
    // One call relays the child's status messages and artifacts into this task.
    const child = await ctx.delegate(ctx.env.DEMO, text || "hello from the orchestrator").forward();
    if (child.status.state === "failed")
      ctx.fail(`The demo agent failed: ${textOf(child.status.message?.parts ?? [])}`);
    else if (child.status.state === "input-required") {
      ctx.requestInput(child.status.message?.parts ?? "The demo agent needs more input");
    }
  },
});

export const { EdgelinkContext, EdgelinkIndex } = worker;
export default worker;
