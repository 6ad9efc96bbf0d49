import type { JsonObject } from "../models/json";
import type { InferPart } from "../models/part";
import { generate } from "../providers/collect";
import type { Model } from "../providers/types";
import type { TaskContext } from "./context";
import type { InferFn } from "./definition";

/**
 * Answers `infer` parts (C7) with the agent's own model when it gives no `infer` function:
 * `user` (or, alone, `prompt`) is the user's message, `prompt` beside a `user` is the
 * system prompt, and `outputSchema` turns on structured output, validated: a matching
 * answer comes back as its JSON object, a failure fails the part with the reason.
 */
export function modelInfer<Env>(model: Model): InferFn<Env> {
  return async (part: InferPart, ctx: TaskContext<Env>) => {
    const { prompt, user, outputSchema } = part.content;
    const response = await generate(
      model,
      {
        system: user !== undefined ? prompt : undefined,
        messages: [{ role: "user", content: user ?? prompt ?? "" }],
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
