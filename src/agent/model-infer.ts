import type { JsonObject } from "../protocol/json";
import type { InferPart } from "../protocol/part";
import { generate } from "../providers/base/collect";
import type { Model } from "../providers/base/types";
import type { InferFn } from "./agent-config";
import type { Agent } from "./definition";
import { systemPrompt } from "./prompt";
import type { RunContext } from "./run-context";

/**
 * Answers `infer` parts with the agent's own model when it gives no `infer` function.
 * The system prompt is always the agent's `instructions`: a part comes from a client, and
 * a client never sets it. The part's `prompt` and `user` go, in that order, as the user's
 * message. `outputSchema` turns on structured output, validated: a matching answer comes
 * back as its JSON object, a failure fails the part with the reason.
 */
export function modelInfer<Env>(
  model: Model,
  agent: Pick<Agent<Env>, "instructions" | "tools">,
): InferFn<Env> {
  return async (part: InferPart, ctx: RunContext<Env>) => {
    const { prompt, user, outputSchema } = part.content;
    const system = await systemPrompt(agent, ctx);
    const asked = [prompt, user].filter((s): s is string => s !== undefined && s !== "");
    const response = await generate(
      model,
      {
        system: system ?? undefined,
        messages: [{ role: "user", content: asked.join("\n\n") }],
        outputSchema,
      },
      { env: ctx.env as object, signal: ctx.signal },
    );
    if (!outputSchema) return response.text;
    if (response.outputError !== null) throw new Error(`infer: ${response.outputError}`);
    const output = response.output;
    return typeof output === "object" && output !== null && !Array.isArray(output)
      ? (output as JsonObject)
      : JSON.stringify(output);
  };
}
