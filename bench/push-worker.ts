/**
 * The push benchmark's agent (bench/push.mjs): webhooks on, `http://127.0.0.1` receivers
 * allowed. Its handler emits status updates whose text carries the emission time, so the
 * receiver can tell how long each event took to arrive:
 *
 *   "burst 500"     500 status updates at once (one synchronous loop), then completes;
 *   "paced 100 20"  100 status updates 20 ms apart, then completes.
 *
 * Each status text is "<i> <Date.now()>". workerd's clock only moves between I/O, so in a
 * burst every update carries the same time: the moment the burst was emitted.
 */
import { defineAgent, textOf } from "../src/index";

const worker = defineAgent({
  card: {
    name: "Edgelink bench push",
    description: "Emits timestamped status updates for the webhook push benchmark.",
    version: "0.0.0",
  },
  push: { allowLocalhost: true },
  handler: async (ctx) => {
    const [mode, countText, gapText] = textOf(ctx.message.parts).trim().split(/\s+/);
    const count = Number(countText);
    if (!Number.isInteger(count) || count < 1) throw new Error(`bad count: ${countText}`);
    if (mode === "burst") {
      for (let i = 0; i < count; i++) ctx.status(`${i} ${Date.now()}`);
    } else if (mode === "paced") {
      const gap = Number(gapText ?? 20);
      for (let i = 0; i < count; i++) {
        await new Promise((resolve) => setTimeout(resolve, gap));
        ctx.status(`${i} ${Date.now()}`);
      }
    } else {
      throw new Error(`unknown mode: ${mode}`);
    }
    return `done ${count}`;
  },
});

export const { EdgelinkContext, EdgelinkIndex } = worker;
export default worker;
