import type { ProviderError } from "./base/errors";
import type { StreamEvent } from "./base/types";

/**
 * The one rule retry, fallback and router share: a call may be tried again, or
 * sent elsewhere, only while nothing has reached the consumer. Batches holding nothing but
 * `message_start` (and errors an inner wrapper recovered from) are held back; the first
 * batch with anything else "opens" the stream, and from then on a failure is final.
 */

/** How one attempt ended: it opened (and ran to its end), or it failed before opening. */
export type AttemptResult = { opened: true } | { opened: false; error: unknown };

/** Whether an event commits the stream: anything a consumer would act on or show. */
export function isContent(event: StreamEvent): boolean {
  return event.type !== "message_start" && event.type !== "error";
}

/**
 * Plays one attempt. Until the stream opens nothing is yielded; the held events come out
 * with the first content batch, with `recovered` (the failures of earlier attempts) right
 * after the `message_start`, so a log sees them in order. A failure before opening is
 * returned, not thrown, so the caller decides what to try next; a failure after opening
 * is thrown as it came.
 */
export async function* attempt(
  open: () => AsyncIterable<StreamEvent[]>,
  recovered: readonly StreamEvent[],
): AsyncGenerator<StreamEvent[], AttemptResult> {
  const held: StreamEvent[] = [];
  let opened = false;
  try {
    for await (const batch of open()) {
      if (opened) {
        yield batch;
        continue;
      }
      held.push(...batch);
      if (batch.some(isContent)) {
        opened = true;
        yield release(held, recovered);
      }
    }
  } catch (error) {
    if (opened) throw error;
    return { opened: false, error };
  }
  // A stream may end without content (an empty answer): it still succeeded.
  if (!opened) {
    const rest = release(held, recovered);
    if (rest.length) yield rest;
  }
  return { opened: true };
}

/** The held events with `recovered` placed right after the `message_start`. */
export function release(held: StreamEvent[], recovered: readonly StreamEvent[]): StreamEvent[] {
  const starts = held.filter((e) => e.type === "message_start");
  const others = held.filter((e) => e.type !== "message_start");
  return [...starts, ...recovered, ...others];
}

/** The `error` event logged for a failure a wrapper recovered from. */
export function recoveredEvent(error: ProviderError, model: string): StreamEvent {
  return { type: "error", error, provider: error.provider, model, recovered: true };
}
