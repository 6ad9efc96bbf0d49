import type { JsonObject, JsonValue } from "../../protocol/json";
import { isObject } from "../base/http";

/**
 * Gemini's streamed function-call arguments (`functionCall.partialArgs`): each piece names
 * a JSON path (`$.address.city`, `$.items[0]`) and a value; a string may arrive in several
 * pieces (`willContinue: true` on all but the last). This class builds the arguments object
 * from the pieces and, at the same time, writes them as JSON text piece by piece, so the
 * adapter can stream `tool_call_delta`s whose concatenation is the final arguments.
 *
 * The model writes its arguments left to right, so paths arrive in document order and the
 * text can be written append-only. Should a path ever come out of order, the text written
 * so far no longer matches the object; `arguments` then falls back to the object
 * serialized, so the assembled call is still right (only the preview deltas were off).
 * @example
 * const args = new StreamedArgs();
 * args.apply([{ jsonPath: "$.id", stringValue: "A", willContinue: true }]); // '{"id":"A'
 * args.apply([{ jsonPath: "$.id", stringValue: "" }]); // '"'
 * args.finish(); // '}'
 * args.value; // { id: "A" }
 */
export class StreamedArgs {
  readonly #root: JsonObject = {};
  #text = "";
  /** Open containers below the root, with how many entries each has so far. */
  readonly #open: { segment: Segment; array: boolean; count: number }[] = [];
  #rootCount = 0;
  #rootOpen = false;
  /** The path of a string value still being written, its closing quote not yet sent. */
  #openString: string | null = null;
  #finished = false;

  /** Applies pieces of arguments; returns the JSON text to send as a delta ("" if none). */
  apply(pieces: readonly unknown[]): string {
    let delta = "";
    for (const piece of pieces) delta += this.#applyOne(piece);
    this.#text += delta;
    return delta;
  }

  /** Closes what is open; returns the last JSON text to send. */
  finish(): string {
    if (this.#finished) return "";
    this.#finished = true;
    let tail = this.#closeString();
    if (!this.#rootOpen) tail += "{";
    while (this.#open.length) tail += this.#open.pop()?.array ? "]" : "}";
    tail += "}";
    this.#text += tail;
    return tail;
  }

  /** The arguments object built from the pieces. */
  get value(): JsonObject {
    return this.#root;
  }

  /** The arguments as text: what was streamed when it matches the object, else the object. */
  get arguments(): string {
    const canonical = JSON.stringify(this.#root);
    try {
      if (JSON.stringify(JSON.parse(this.#text)) === canonical) return this.#text;
    } catch {
      // Out-of-order pieces made the streamed text invalid; the object is the truth.
    }
    return canonical;
  }

  #applyOne(piece: unknown): string {
    if (!isObject(piece) || typeof piece.jsonPath !== "string") return "";
    const value = pieceValue(piece);
    if (value === undefined) return "";
    const path = parsePath(piece.jsonPath);
    if (path === null || path.length === 0) return "";
    const more = piece.willContinue === true;
    const key = pathKey(path);
    setAt(this.#root, path, value, key === this.#openString);

    if (key === this.#openString && typeof value === "string") {
      const text = escapeString(value);
      if (more) return text;
      this.#openString = null;
      return `${text}"`;
    }
    let text = this.#closeString();
    if (!this.#rootOpen) {
      this.#rootOpen = true;
      text += "{";
    }
    text += this.#moveTo(path);
    text += this.#separator() + this.#keyOf(path[path.length - 1] as Segment);
    this.#countEntry();
    if (typeof value === "string") {
      text += `"${escapeString(value)}`;
      if (more) this.#openString = key;
      else text += '"';
    } else {
      text += JSON.stringify(value);
    }
    return text;
  }

  #closeString(): string {
    if (this.#openString === null) return "";
    this.#openString = null;
    return '"';
  }

  /** Closes containers off the way to the parent of `path` and opens the ones it needs. */
  #moveTo(path: Segment[]): string {
    const depth = path.length - 1;
    let common = 0;
    while (
      common < this.#open.length &&
      common < depth &&
      this.#open[common]?.segment === path[common] &&
      this.#open[common]?.array === (typeof path[common + 1] === "number")
    )
      common++;
    let text = "";
    while (this.#open.length > common) text += this.#open.pop()?.array ? "]" : "}";
    for (let i = common; i < depth; i++) {
      const segment = path[i] as Segment;
      const array = typeof path[i + 1] === "number";
      text += this.#separator() + this.#keyOf(segment);
      this.#countEntry();
      this.#open.push({ segment, array, count: 0 });
      text += array ? "[" : "{";
    }
    return text;
  }

  #separator(): string {
    const count = this.#open.at(-1)?.count ?? this.#rootCount;
    return count > 0 ? "," : "";
  }

  #keyOf(segment: Segment): string {
    const inArray = this.#open.at(-1)?.array ?? false;
    return inArray ? "" : `${JSON.stringify(String(segment))}:`;
  }

  #countEntry(): void {
    const top = this.#open.at(-1);
    if (top) top.count++;
    else this.#rootCount++;
  }
}

type Segment = string | number;

function pieceValue(piece: Record<string, unknown>): JsonValue | undefined {
  if (typeof piece.stringValue === "string") return piece.stringValue;
  if (typeof piece.numberValue === "number") return piece.numberValue;
  if (typeof piece.boolValue === "boolean") return piece.boolValue;
  if ("nullValue" in piece) return null;
  return undefined;
}

/** `$.a.b[0]['c d']` → `["a", "b", 0, "c d"]`; `null` for a path we cannot read. */
export function parsePath(path: string): Segment[] | null {
  const segments: Segment[] = [];
  let i = path.startsWith("$") ? 1 : 0;
  if (i === 0 && path !== "" && path[0] !== "." && path[0] !== "[") {
    // A bare `a.b` path: read it as if it started with `$.`.
    path = `.${path}`;
  }
  while (i < path.length) {
    const c = path[i];
    if (c === ".") {
      let end = i + 1;
      while (end < path.length && path[end] !== "." && path[end] !== "[") end++;
      if (end === i + 1) return null;
      segments.push(path.slice(i + 1, end));
      i = end;
    } else if (c === "[") {
      const close = path.indexOf("]", i);
      if (close < 0) return null;
      const inner = path.slice(i + 1, close);
      if (/^\d+$/.test(inner)) segments.push(Number(inner));
      else if (/^(['"]).*\1$/s.test(inner)) segments.push(inner.slice(1, -1));
      else return null;
      i = close + 1;
    } else {
      return null;
    }
  }
  return segments;
}

function pathKey(path: Segment[]): string {
  return JSON.stringify(path);
}

/** Sets a value at a path, creating containers; `append` extends a string being streamed. */
function setAt(root: JsonObject, path: Segment[], value: JsonValue, append: boolean): void {
  let node: JsonObject | JsonValue[] = root;
  for (let i = 0; i < path.length - 1; i++) {
    const segment = path[i] as Segment;
    const wantArray = typeof path[i + 1] === "number";
    const current: JsonValue | undefined = read(node, segment);
    if (wantArray ? Array.isArray(current) : isObject(current)) {
      node = current as JsonObject | JsonValue[];
    } else {
      const created: JsonObject | JsonValue[] = wantArray ? [] : {};
      write(node, segment, created);
      node = created;
    }
  }
  const last = path[path.length - 1] as Segment;
  const previous = read(node, last);
  const next =
    append && typeof previous === "string" && typeof value === "string" ? previous + value : value;
  write(node, last, next);
}

function read(node: JsonObject | JsonValue[], segment: Segment): JsonValue | undefined {
  if (Array.isArray(node)) return typeof segment === "number" ? node[segment] : undefined;
  return Object.hasOwn(node, String(segment)) ? node[String(segment)] : undefined;
}

function write(node: JsonObject | JsonValue[], segment: Segment, value: JsonValue): void {
  if (Array.isArray(node)) {
    if (typeof segment === "number") {
      while (node.length < segment) node.push(null);
      node[segment] = value;
    }
  } else {
    node[String(segment)] = value;
  }
}

function escapeString(value: string): string {
  return JSON.stringify(value).slice(1, -1);
}
