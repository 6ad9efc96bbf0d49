import * as z from "zod";
import type { JsonObject } from "../protocol/json";
import { ToolSpec } from "./base/types";

/**
 * A tool spec from a zod schema: the schema becomes the JSON Schema of the arguments.
 * @example
 * toolSpec("get_weather", "Weather for a city", z.object({ city: z.string() }));
 */
export function toolSpec(name: string, description: string, input: z.ZodType): ToolSpec {
  return ToolSpec.parse({ name, description, parameters: jsonSchemaOf(input) });
}

/** JSON Schema of a zod schema as providers accept it: an object, no `$schema` key. */
export function jsonSchemaOf(schema: z.ZodType): JsonObject {
  const json = z.toJSONSchema(schema, {
    target: "draft-7",
    io: "input",
    unrepresentable: "any",
  }) as JsonObject;
  delete json.$schema;
  return json;
}
