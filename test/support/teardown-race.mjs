/**
 * Vitest rejects a runner's pending calls when a file ends. With `isolate: false`
 * (vitest.config.ts) objects outlive their file, timers running: one woken just then (an
 * alarm, a late stream) can be loading a module through Vitest, and that load is cut off
 * and reported as an unhandled error of whichever file was running. No assertion of that
 * file failed, so it is printed and not counted; every other unhandled error still fails
 * the run.
 *
 * @param {{ name?: string, message?: string }} error
 * @returns {boolean} false for the cut-off load alone (Vitest then ignores it)
 */
export function countsAsFailure(error) {
  const cutOff =
    error?.name === "EnvironmentTeardownError" &&
    /^\[vitest-worker\]: Closing rpc while "[\w.:-]+" was pending$/.test(error.message ?? "");
  if (cutOff) {
    console.warn(`not counted: ${error.message} (an object was loading a module as a file ended)`);
  }
  return !cutOff;
}
