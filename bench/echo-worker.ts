/**
 * The benchmark's Edgelink agent: an instant echo. The handler returns the message's
 * text at once (no delay, no model), so what `npm run bench` measures is Edgelink itself:
 * routing, validation, the Durable Object call, the SQLite rows of one task and the
 * index update. A message starting with `STREAM_PREFIX` is answered in 20 chunks instead
 * (the streaming scenario). bench/run.mjs bundles this file with esbuild and serves it on
 * workerd.
 */
import { defineAgent, Parts, textOf } from "../src/index";
import { STREAM_PREFIX, streamChunks } from "./stream-chunks.mjs";

const worker = defineAgent({
  card: {
    name: "Edgelink bench echo",
    description: "Echoes the text of each message back as a result artifact, instantly.",
    version: "0.0.0",
  },
  handler: (ctx) => {
    const text = textOf(ctx.message.parts);
    if (!text.startsWith(STREAM_PREFIX)) return `echo: ${text}`;
    // The streaming scenario (bs): the same artifact in STREAM_CHUNKS chunks, each
    // written and sent as it comes, as a model's answer would be.
    const chunks = streamChunks(text);
    let artifactId: string | undefined;
    chunks.forEach((chunk, i) => {
      artifactId = ctx.artifact({
        artifactId,
        name: "result",
        parts: [Parts.text(chunk)],
        append: i > 0,
        lastChunk: i === chunks.length - 1,
      });
    });
    return undefined;
  },
});

export const { EdgelinkContext, EdgelinkIndex } = worker;
export default worker;
