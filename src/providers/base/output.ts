import { type Schema, Validator } from "@cfworker/json-schema";
import type { JsonObject, JsonValue } from "../../protocol/json";

/** An answer checked against an output schema: the value, or why there is none. */
export type CheckedOutput =
  | { output: JsonValue; error: null }
  | { output: undefined; error: string };

const validators = new WeakMap<JsonObject, Validator>();

/**
 * Parses a model's answer as JSON (a ```json fence around it is accepted) and validates
 * it against `schema` (JSON Schema 2020-12, by a validator that needs no code generation,
 * so it runs on Workers). Never throws: a failure is returned, naming what is wrong.
 * @example
 * checkOutput('{"city":"Paris"}', { type: "object", required: ["city"] }); // { output: {city: "Paris"}, error: null }
 */
export function checkOutput(text: string, schema: JsonObject): CheckedOutput {
  let value: JsonValue;
  try {
    value = JSON.parse(stripFence(text)) as JsonValue;
  } catch (error) {
    return {
      output: undefined,
      error: `the answer is not valid JSON: ${(error as Error).message}`,
    };
  }
  let validator = validators.get(schema);
  if (!validator) {
    validator = new Validator(schema as Schema, "2020-12", false);
    validators.set(schema, validator);
  }
  const result = validator.validate(value);
  if (result.valid) return { output: value, error: null };
  // The deepest errors say what is wrong; the ones above them only say "a child failed".
  const deepest = Math.max(...result.errors.map((e) => e.instanceLocation.length));
  const why = result.errors
    .filter((e) => e.instanceLocation.length === deepest)
    .slice(0, 5)
    .map((e) => `${e.instanceLocation.replace(/^#/, "output") || "output"}: ${e.error}`);
  return {
    output: undefined,
    error: `the answer does not match the output schema: ${why.join("; ")}`,
  };
}

function stripFence(text: string): string {
  const match = /^\s*```(?:json)?\s*([\s\S]*?)\s*```\s*$/.exec(text);
  return match?.[1] ?? text;
}
