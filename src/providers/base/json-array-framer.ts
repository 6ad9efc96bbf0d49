import type { Frame, Framer } from "./sse";

/**
 * Frames a body that is a JSON array streamed in arbitrary pieces, e.g. Gemini's
 * `streamGenerateContent` without `alt=sse`: `[{...}\n,\r\n{...}\n]`. Each top-level object
 * becomes one frame as soon as its closing brace arrives, so a consumer sees it without
 * waiting for the array to close. A body that is a single object (a non-streaming
 * `generateContent` answer, an error) yields that object.
 *
 * Text outside the objects other than brackets, commas and whitespace (an HTML error page,
 * a stray `null`) is handed on as a frame of its own, so the decoder reports what it got
 * instead of the framer hiding it.
 * @example
 * decodeBody(body, decoder, { provider: "gemini", stallMs: 60_000, framer: jsonArrayFramer });
 */
export function jsonArrayFramer(onFrame: (frame: Frame) => void): Framer {
  /** The object being read, from earlier pieces. */
  let pending = "";
  /** Brace/bracket depth inside the current object; 0 between objects. */
  let depth = 0;
  let inString = false;
  let escaped = false;
  let stray = "";

  const emit = (data: string) => onFrame({ data, event: undefined });
  const emitStray = () => {
    const text = stray.trim();
    stray = "";
    if (text) emit(text);
  };

  return {
    feed(text) {
      // Where the current object starts in this piece; -1 when between objects.
      let start = depth > 0 ? 0 : -1;
      for (let i = 0; i < text.length; i++) {
        const c = text.charCodeAt(i);
        if (depth > 0) {
          if (inString) {
            if (escaped) escaped = false;
            else if (c === BACKSLASH) escaped = true;
            else if (c === QUOTE) inString = false;
          } else if (c === QUOTE) inString = true;
          else if (c === OPEN_BRACE || c === OPEN_BRACKET) depth++;
          else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
            depth--;
            if (depth === 0) {
              emit(pending + text.slice(start, i + 1));
              pending = "";
              start = -1;
            }
          }
        } else if (c === OPEN_BRACE) {
          emitStray();
          depth = 1;
          start = i;
        } else if (c === OPEN_BRACKET || c === CLOSE_BRACKET || c === COMMA) {
          emitStray();
        } else if (stray !== "" || !isSpace(c)) {
          stray += text[i];
        }
      }
      if (depth > 0) pending += text.slice(start);
    },
    flush() {
      emitStray();
      // An object cut off by the end of the body is not a frame: the decoder's end-of-body
      // check reports the truncated stream, which says more than a JSON syntax error would.
      pending = "";
      depth = 0;
      inString = false;
      escaped = false;
    },
  };
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const COMMA = 0x2c;

function isSpace(c: number): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
}
