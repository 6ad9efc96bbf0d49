import { describe, expect, it } from "vitest";
import {
  cardForSigning,
  cardSigningPayload,
  cardSigningPayloads,
  servedSignedForm,
} from "../../src/protocol/card/card-signature";
import { canonicalJson } from "../../src/protocol/jcs";
import type { JsonObject } from "../../src/protocol/json";

describe("RFC 8785 canonical JSON", () => {
  it("orders properties by UTF-16 code units, recursively, arrays kept in order", () => {
    // A supplementary character sorts by its high surrogate (0xD83D), before U+FB33.
    const value = {
      "\u20ac": "euro",
      "\r": "cr",
      "\ufb33": "hebrew",
      "1": "one",
      "\ud83d\ude00": "emoji",
      "\u0080": "control",
      "\u00f6": "o-umlaut",
    };
    const keys = Object.keys(JSON.parse(canonicalJson(value)) as object);
    expect(canonicalJson(value).startsWith('{"\\r":"cr","1":"one","\u0080":')).toBe(true);
    expect(keys).toStrictEqual(["1", "\r", "\u0080", "\u00f6", "\u20ac", "\ud83d\ude00", "\ufb33"]);
    expect(canonicalJson({ b: [3, { z: 1, a: 2 }, 1], a: {} })).toBe(
      '{"a":{},"b":[3,{"a":2,"z":1},1]}',
    );
  });

  it.each([
    [0, "0"],
    [-0, "0"],
    [1, "1"],
    [-1.5, "-1.5"],
    [4.5, "4.5"],
    [0.002, "0.002"],
    [0.000001, "0.000001"],
    [1e-7, "1e-7"],
    [1e21, "1e+21"],
    [1e20, "100000000000000000000"],
    [1e30, "1e+30"],
    [Number("333333333.33333329"), "333333333.3333333"],
    [9007199254740992, "9007199254740992"],
    [5e-324, "5e-324"],
    [1.7976931348623157e308, "1.7976931348623157e+308"],
    [-1e-27, "-1e-27"],
  ])("writes the number %s as ECMAScript does: %s", (n, text) => {
    expect(canonicalJson(n)).toBe(text);
  });

  it("escapes strings as ECMAScript does: controls as \\u00xx in lower case, no escaped slash", () => {
    const s = '\u20ac$\u000f\nA\'B"\\\\"/';
    expect(canonicalJson(s)).toBe('"\u20ac$\\u000f\\nA\'B\\"\\\\\\\\\\"/"');
    expect(canonicalJson("\b\t\f\r\u001f\u007f")).toBe('"\\b\\t\\f\\r\\u001f\u007f"');
  });

  it("matches the RFC's composite example, whitespace gone and literals as written", () => {
    const input = `{
      "numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001],
      "string": "\\u20ac$\\u000F\\u000aA'\\u0042\\u0022\\u005c\\\\\\"\\/",
      "literals": [null, true, false]
    }`;
    expect(canonicalJson(JSON.parse(input))).toBe(
      '{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],' +
        '"string":"\u20ac$\\u000f\\nA\'B\\"\\\\\\\\\\"/"}',
    );
  });

  it("refuses what I-JSON cannot carry, naming where", () => {
    expect(() => canonicalJson({ a: [Number.NaN] })).toThrow(/\$\.a\[0\] is NaN/);
    expect(() => canonicalJson(Number.POSITIVE_INFINITY)).toThrow(/Infinity/);
    expect(() => canonicalJson({ s: "x\ud800" })).toThrow(/\$\.s holds a lone surrogate/);
    expect(() => canonicalJson({ "\udc00": 1 })).toThrow(/lone surrogate/);
    expect(canonicalJson("\ud83d\ude00")).toBe('"\ud83d\ude00"');
  });
});

describe("the card's signing payload (A2A §8.4.1)", () => {
  it("reproduces the specification's example: defaults and signatures left out", () => {
    const card = {
      name: "Example Agent",
      description: "",
      capabilities: { streaming: false, pushNotifications: false, extensions: [] },
      skills: [],
      signatures: [{ protected: "x", signature: "y" }],
    };
    expect(new TextDecoder().decode(cardSigningPayload(card))).toBe(
      '{"capabilities":{"pushNotifications":false,"streaming":false},"description":"","name":"Example Agent","skills":[]}',
    );
  });

  it("drops implicit-presence defaults field by field, keeps REQUIRED, optional and free JSON", () => {
    const card: JsonObject = {
      name: "A",
      description: "",
      version: "",
      documentationUrl: "",
      supportedInterfaces: [
        { url: "https://a/", protocolBinding: "JSONRPC", tenant: "", protocolVersion: "1.0" },
      ],
      capabilities: {
        extendedAgentCard: false,
        extensions: [
          {
            uri: "urn:x",
            description: "",
            required: false,
            params: { off: false, empty: "", list: [] },
          },
        ],
      },
      securitySchemes: {
        key: { apiKeySecurityScheme: { location: "header", name: "X-Key", description: "" } },
        tls: { mtlsSecurityScheme: {} },
      },
      securityRequirements: [{ schemes: { key: { list: [] } } }],
      defaultInputModes: [],
      defaultOutputModes: ["text/plain"],
      skills: [{ id: "s", name: "s", description: "", tags: [], examples: [], inputModes: [] }],
      unknownField: "",
    };
    expect(cardForSigning(card)).toStrictEqual({
      name: "A",
      description: "",
      version: "",
      documentationUrl: "",
      supportedInterfaces: [
        { url: "https://a/", protocolBinding: "JSONRPC", protocolVersion: "1.0" },
      ],
      capabilities: {
        extendedAgentCard: false,
        extensions: [{ uri: "urn:x", params: { off: false, empty: "", list: [] } }],
      },
      securitySchemes: {
        key: { apiKeySecurityScheme: { location: "header", name: "X-Key" } },
        tls: { mtlsSecurityScheme: {} },
      },
      securityRequirements: [{ schemes: { key: {} } }],
      defaultInputModes: [],
      defaultOutputModes: ["text/plain"],
      skills: [{ id: "s", name: "s", description: "", tags: [] }],
      unknownField: "",
    });
    // Normalizing twice changes nothing: the served card is its own signing payload.
    expect(cardForSigning(cardForSigning(card))).toStrictEqual(cardForSigning(card));
  });

  it("serves a signed card with no empty value, a form every canonicalization leaves alone", () => {
    const card: JsonObject = {
      name: "A",
      description: "",
      capabilities: {
        streaming: false,
        extensions: [
          { uri: "urn:x", params: { keep: false, zero: 0, drop: "", none: [], nil: null } },
        ],
      },
      skills: [],
    };
    // Both readings of the card: the specification's keeps its empty REQUIRED fields.
    expect(cardSigningPayloads(card)).toHaveLength(2);
    const served = servedSignedForm(card);
    expect(served).toStrictEqual({
      name: "A",
      capabilities: {
        streaming: false,
        extensions: [{ uri: "urn:x", params: { keep: false, zero: 0 } }],
      },
    });
    const payloads = cardSigningPayloads(served);
    expect(payloads).toHaveLength(1);
    expect(new TextDecoder().decode(payloads[0])).toBe(canonicalJson(served));
  });
  it("A2 a member named __proto__ (as JSON.parse keeps it) stays in every signing payload", () => {
    const text = (top: string, inSkill: string) =>
      `{"name":"A","description":"d",${top}"skills":[{"id":"s","name":"s","description":"d",${inSkill}"tags":["t"]}]}`;
    const card = JSON.parse(
      text('"__proto__":{"url":"https://elsewhere.example/"},', '"__proto__":{"x":1},'),
    ) as JsonObject;
    const plain = JSON.parse(text("", "")) as JsonObject;
    for (const form of [cardForSigning(card), servedSignedForm(card)]) {
      expect(Object.keys(form)).toContain("__proto__");
      expect(canonicalJson(form)).toContain('"__proto__":{"url":"https://elsewhere.example/"}');
      // Nothing became a prototype on the way.
      expect(Object.getPrototypeOf(form)).not.toHaveProperty("url");
    }
    const decode = (bytes: Uint8Array[]) => bytes.map((b) => new TextDecoder().decode(b));
    const withMember = decode(cardSigningPayloads(card));
    for (const payload of decode(cardSigningPayloads(plain))) {
      expect(withMember).not.toContain(payload);
    }
    expect(new TextDecoder().decode(cardSigningPayload(card))).toContain('{"x":1}');
  });
});
