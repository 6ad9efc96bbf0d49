/**
 * The benchmark's Edgelink agent: an instant echo. The handler returns the message's
 * text at once (no delay, no model), so what `npm run bench` measures is Edgelink itself:
 * routing, validation, the Durable Object call, the SQLite rows of one task and the
 * index update. bench/run.mjs bundles this file with esbuild and serves it on workerd.
 */
import { defineAgent, textOf } from "../src/index";

const worker = defineAgent({
  card: {
    name: "Edgelink bench echo",
    description: "Echoes the text of each message back as a result artifact, instantly.",
    version: "0.0.0",
  },
  handler: (ctx) => `echo: ${textOf(ctx.message.parts)}`,
});

export const { EdgelinkContext, EdgelinkIndex } = worker;
export default worker;
