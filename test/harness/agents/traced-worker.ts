/**
 * An agent traced as the tracing guide sets it up (otel-cf-workers, its OTLP exporter
 * behind Edgelink's FinishedSpanProcessor), served as the `agents` project's second
 * Worker. A message starting "delegate" is handed to PEER: a service binding to this same
 * Worker, so the helper's invocation runs nested inside the caller's, in one isolate.
 * Exports go to OTLP_URL, which the project's fake collector (node/otlp-collector.mjs) serves.
 */
import {
  instrument,
  instrumentDO,
  OTLPExporter,
  type ResolveConfigFn,
} from "@microlabs/otel-cf-workers";
import { defineAgent, FinishedSpanProcessor, textOf } from "../../../src/index";

/** The tests' own `Env` too: otel-cf-workers types an object's `env` as the global one. */
interface TracedEnv extends Cloudflare.Env {
  OTLP_URL: string;
  PEER: Fetcher;
}

const agent = defineAgent<TracedEnv>({
  card: { name: "Traced agent", description: "Answers, or asks itself through a binding" },
  async handler(ctx) {
    const text = textOf(ctx.message.parts);
    if (text.startsWith("delegate")) {
      const answer = await ctx.delegate(ctx.env.PEER, "hello helper").answer();
      // The caller's own work after the helper answered (a model turn, say): the helper's
      // invocation has ended by then, and its flush runs while the caller's spans are open.
      await scheduler.wait(50);
      return `helper said: ${answer}`;
    }
    return `you said: ${text}`;
  },
});

const config: ResolveConfigFn<TracedEnv> = (env) => ({
  spanProcessors: new FinishedSpanProcessor(new OTLPExporter({ url: env.OTLP_URL })),
  service: { name: "traced-agent" },
});

export default instrument(agent, config);
export const EdgelinkContext = instrumentDO(agent.EdgelinkContext, config);
export const EdgelinkIndex = agent.EdgelinkIndex;
