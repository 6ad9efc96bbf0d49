import { A2AError } from "../../protocol/errors";
import type { JsonObject } from "../../protocol/json";
import { protoJsonName } from "../../protocol/wire/protojson";

/**
 * What operations read from a request besides its params: the HTTP+JSON binding's path
 * ids and query strings, and the `Last-Event-ID` of a reconnecting stream.
 */

/**
 * An id in an HTTP+JSON path pattern. Hono cannot put a literal after a parameter in one
 * segment (`/tasks/{id}:cancel`), so those segments are a regular expression over the
 * whole segment and `idBefore` strips the literal off the matched value. Ids never
 * contain `:` or `/`.
 */
export const ROUTE_ID = "[^/:]+";

export function idBefore(value: string | undefined, verb: string): string {
  return (value ?? "").slice(0, -verb.length);
}

/** An integer query value as a number, anything else as sent, so zod names bad ones. */
const integer = (value: string): string | number => (/^-?\d+$/.test(value) ? Number(value) : value);

/** Query string to params (ListTasks and the other lists): numbers and booleans typed. */
export function listQuery(url: URL): JsonObject {
  const out: JsonObject = {};
  for (const [name, value] of url.searchParams) {
    const key = name === "A2A-Version" ? name : protoJsonName(name);
    if (key === "A2A-Version") continue;
    if (key === "pageSize" || key === "historyLength") {
      out[key] = integer(value);
    } else if (key === "includeArtifacts") {
      out[key] = value === "true" ? true : value === "false" ? false : value;
    } else {
      out[key] = value;
    }
  }
  return out;
}

/** GetTask's query: only `historyLength` (or `history_length`) is read. */
export function taskQuery(url: URL): { historyLength: string | number | undefined } {
  const value = url.searchParams.get("historyLength") ?? url.searchParams.get("history_length");
  return { historyLength: value === null ? undefined : integer(value) };
}

/** The SSE `Last-Event-ID` a reconnecting client sends, if it is one of our ids. */
export function lastEventId(request: Request): number | undefined {
  const raw = request.headers.get("Last-Event-ID")?.trim();
  if (raw === undefined || raw === "") return undefined;
  // Decimal digits only: Number() would also read "0x10", "1e3" and "1.0".
  const n = /^\d+$/.test(raw) ? Number(raw) : Number.NaN;
  if (!Number.isSafeInteger(n)) {
    throw new A2AError("InvalidRequest", "Last-Event-ID must be an event id this server sent");
  }
  return n;
}
