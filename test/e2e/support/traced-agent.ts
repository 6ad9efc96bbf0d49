/**
 * An agent traced with @microlabs/otel-cf-workers as the tracing guide sets it up,
 * exporting by OTLP/HTTP to OTLP_URL
 * (test/e2e/tracing.test.ts starts a receiver). With PEER_URL set it delegates a message
 * starting "delegate" to the agent there, which is this same Worker started again.
 */
import {
  instrument,
  instrumentDO,
  OTLPExporter,
  type ResolveConfigFn,
} from "@microlabs/otel-cf-workers";
import { defineAgent, FinishedSpanProcessor } from "../../../src/index";

interface Env {
  OTLP_URL: string;
  SERVICE_NAME: string;
  PEER_URL?: string;
}

const worker = defineAgent<Env>({
  card: { name: "Traced e2e agent", description: "Answers, or asks its peer" },
  async handler(ctx) {
    const text = ctx.message.parts.map((p) => (p.type === "text" ? p.content : "")).join("");
    if (text.startsWith("delegate") && ctx.env.PEER_URL) {
      const answer = await ctx.delegate(ctx.env.PEER_URL, "hello peer").answer();
      return `peer said: ${answer}`;
    }
    return `you said: ${text}`;
  },
});

const config: ResolveConfigFn<Env> = (env) => ({
  spanProcessors: new FinishedSpanProcessor(new OTLPExporter({ url: env.OTLP_URL })),
  service: { name: env.SERVICE_NAME },
});

export default instrument(worker, config);
export const EdgelinkContext = instrumentDO(worker.EdgelinkContext, config);
export const EdgelinkIndex = worker.EdgelinkIndex;
