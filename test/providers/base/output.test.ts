import { describe, expect, it } from "vitest";
import { checkOutput } from "../../../src/providers/base/output";

const schema = {
  type: "object",
  properties: {
    city: { type: "string" },
    population: { type: "integer", minimum: 0 },
  },
  required: ["city", "population"],
  additionalProperties: false,
};

describe("structured output validation (G18)", () => {
  it("G18: a matching answer is parsed, a ```json fence accepted", () => {
    expect(checkOutput('{"city":"Paris","population":2100000}', schema)).toEqual({
      output: { city: "Paris", population: 2100000 },
      error: null,
    });
    expect(checkOutput('```json\n{"city":"Oslo","population":1}\n```', schema).output).toEqual({
      city: "Oslo",
      population: 1,
    });
  });

  it("G18: an answer that is not JSON, or does not match, is reported naming the field, never thrown", () => {
    expect(checkOutput("Paris, obviously", schema).error).toMatch(/^the answer is not valid JSON/);
    const wrong = checkOutput('{"city":"Paris","population":-3}', schema);
    expect(wrong.output).toBeUndefined();
    expect(wrong.error).toMatch(
      /^the answer does not match the output schema: output\/population: /,
    );
    const missing = checkOutput('{"city":"Paris"}', schema);
    expect(missing.error).toMatch(/population/);
  });
});
