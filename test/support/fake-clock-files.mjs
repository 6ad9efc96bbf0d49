/**
 * The workerd test files that install Vitest's fake clock (`vi.useFakeTimers`). A project's
 * files share one workerd, and its objects live on after their file: a keep-alive or a
 * deferred write of an earlier file's object, set while a later file's fake clock is on, is
 * caught by that clock and then run by `vi.runAllTimersAsync()` inside the test, where its
 * I/O belongs to another object ("Cannot perform I/O on behalf of a different Durable
 * Object", an unhandled error that fails the run), or dropped by `vi.useRealTimers()`.
 * These files start first in their project (test/support/run-order.mjs), so every runner
 * reaches them before any file that makes objects; they make none with timers themselves.
 * Those faking `setTimeout` come before those faking only `Date`, which use the Worker.
 * `npm run lint` fails when a file calls `vi.useFakeTimers` and is not listed here.
 */
export const FAKE_CLOCK_FILES = [
  "test/providers/base/sse.test.ts",
  "test/protocol/json.test.ts",
  "test/protocol/wire/send-fast-path.test.ts",
  "test/push/delivery.test.ts",
  "test/jwks/discovery.test.ts",
  "test/jwks/remote.test.ts",
  "test/worker/auth.differential.test.ts",
];
