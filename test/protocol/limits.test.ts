import { describe, expect, it } from "vitest";
import { A2AError } from "../../src/protocol/errors";
import {
  ClientId,
  checkDepth,
  clientIdProblem,
  isClientId,
  LIMITS,
  NameList,
} from "../../src/protocol/limits";

/** `{k0: {k1: ... }}`, `levels` objects deep. */
function nested(levels: number): unknown {
  let value: unknown = {};
  for (let i = levels - 1; i >= 0; i--) value = { [`k${i}`]: value };
  return value;
}

function refusal(value: unknown, prefix?: string): A2AError {
  try {
    checkDepth(value, prefix);
  } catch (error) {
    expect(error).toBeInstanceOf(A2AError);
    return error as A2AError;
  }
  return expect.unreachable("expected a refusal");
}

describe("checkDepth", () => {
  it("passes JSON up to the depth limit, and scalars", () => {
    expect(() => checkDepth(nested(LIMITS.depth - 1))).not.toThrow();
    expect(() => checkDepth([[[1, "a", null]]])).not.toThrow();
    expect(() => checkDepth("text")).not.toThrow();
    expect(() => checkDepth(null)).not.toThrow();
  });

  it("refuses deeper JSON, naming the path's first eight levels", () => {
    const error = refusal(nested(LIMITS.depth + 5));
    expect(error.kind).toBe("InvalidRequest");
    expect(error.fieldViolations.map((v) => v.field)).toStrictEqual([
      "params.k0.k1.k2.k3.k4.k5.k6.k7",
    ]);
    const shallow = refusal({ a: [nested(LIMITS.depth)] }, "");
    expect(shallow.fieldViolations[0]?.field).toBe("a.0.k0.k1.k2.k3.k4.k5");
  });

  it("refuses a __proto__ key wherever it is, naming where", () => {
    const body = JSON.parse('{"message":{"parts":[{"metadata":{"__proto__":{"x":1}}}]}}');
    const error = refusal(body);
    expect(error.fieldViolations[0]?.field).toBe("params.message.parts.0.metadata.__proto__");
    expect(refusal(JSON.parse('{"__proto__":1}'), "").fieldViolations[0]?.field).toBe("__proto__");
  });
});

describe("isClientId", () => {
  it("is ClientId's rule: length and printable characters", () => {
    expect(isClientId("a".repeat(LIMITS.idLength))).toBe(true);
    expect(isClientId("é😀")).toBe(true);
    expect(isClientId("a".repeat(LIMITS.idLength + 1))).toBe(false);
    expect(isClientId("a\nb")).toBe(false);
    expect(isClientId("a\u007f")).toBe(false);
    expect(isClientId("a\ud800")).toBe(false);
  });
});

describe("ClientId and NameList, the schemas the wire models use", () => {
  it("ClientId refuses control characters and lone surrogates, naming why, as isClientId does", () => {
    for (const bad of ["a\nb", "a\u0000", "a\u007f", "a\ud800", "a".repeat(LIMITS.idLength + 1)]) {
      expect(ClientId.safeParse(bad).success, JSON.stringify(bad)).toBe(false);
      expect(isClientId(bad)).toBe(false);
    }
    expect(clientIdProblem("a\tb")).toBe("must not contain control characters or lone surrogates");
    expect(ClientId.safeParse("ctx-é😀").success).toBe(true);
  });

  it("NameList takes at most LIMITS.names names of at most LIMITS.nameLength characters", () => {
    expect(NameList.safeParse(Array(LIMITS.names).fill("text/plain")).success).toBe(true);
    const many = NameList.safeParse(Array(LIMITS.names + 1).fill("text/plain"));
    expect(many.success).toBe(false);
    expect(many.error?.issues[0]?.message).toBe(`at most ${LIMITS.names} entries`);
    expect(NameList.safeParse(["x".repeat(LIMITS.nameLength)]).success).toBe(true);
    expect(NameList.safeParse(["x".repeat(LIMITS.nameLength + 1)]).success).toBe(false);
  });
});
