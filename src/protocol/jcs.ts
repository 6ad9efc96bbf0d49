import type { JsonValue } from "./json";

/**
 * RFC 8785 (JSON Canonicalization Scheme): one byte sequence for one JSON value, so a
 * signature over it verifies whatever serializer produced the document. The RFC defines
 * its primitives by ECMAScript's own `JSON.stringify` (strings escaped its way, numbers as
 * `Number.prototype.toString` writes them), so those are used for leaves; what this adds
 * is the property order (by UTF-16 code units, which is what `<` compares in JavaScript),
 * no whitespace, and refusing what I-JSON forbids (lone surrogates, non-finite numbers).
 *
 * @throws TypeError naming the path of a value JSON cannot carry canonically.
 * @example
 * canonicalJson({ b: 1, a: [true, null, 1e21] }); // '{"a":[true,null,1e+21],"b":1}'
 */
export function canonicalJson(value: JsonValue): string {
  return serialize(value, "$");
}

/** Same as `canonicalJson`, as the UTF-8 bytes a signature is computed over. */
export function canonicalJsonBytes(value: JsonValue): Uint8Array {
  return new TextEncoder().encode(canonicalJson(value));
}

/** A lone surrogate: I-JSON (RFC 7493), which JCS requires, has none. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

function string(value: string, path: string): string {
  if (LONE_SURROGATE.test(value)) {
    throw new TypeError(`canonical JSON: ${path} holds a lone surrogate (not I-JSON)`);
  }
  return JSON.stringify(value);
}

function serialize(value: JsonValue, path: string): string {
  if (value === null) return "null";
  switch (typeof value) {
    case "boolean":
      return value ? "true" : "false";
    case "number":
      if (!Number.isFinite(value)) {
        throw new TypeError(`canonical JSON: ${path} is ${value}, which JSON cannot carry`);
      }
      // ECMAScript's Number::toString is the RFC's number format (and it writes -0 as 0).
      return JSON.stringify(value);
    case "string":
      return string(value, path);
    case "object":
      break;
    default:
      throw new TypeError(`canonical JSON: ${path} is a ${typeof value}, not JSON`);
  }
  if (Array.isArray(value)) {
    return `[${value.map((item, i) => serialize(item, `${path}[${i}]`)).join(",")}]`;
  }
  // Properties whose value is undefined are absent, as JSON.stringify treats them.
  const keys = Object.keys(value)
    .filter((k) => value[k] !== undefined)
    .sort(byCodeUnits);
  const members = keys.map(
    (k) => `${string(k, `${path} key`)}:${serialize(value[k] as JsonValue, `${path}.${k}`)}`,
  );
  return `{${members.join(",")}}`;
}

/** Order by UTF-16 code units, as RFC 8785 §3.2.3 sorts property names. */
function byCodeUnits(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
