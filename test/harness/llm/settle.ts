/**
 * Setup of every `llm` test file: the file ends only when the conversation objects'
 * background work it started has ended. A streamed or continued task leaves its index
 * window open for `limits.indexFlushMs`; when that call ran after the file, the runner
 * could close under it ("Closing rpc while "resolve" was pending").
 */
import { afterAll } from "vitest";
import { background } from "./worker";

/** Longer than any run of these tests: what is still under way then is a test's bug. */
const SETTLE_MS = 15_000;

afterAll(async () => {
  const deadline = Date.now() + SETTLE_MS;
  while (background.size > 0) {
    if (Date.now() > deadline) {
      throw new Error(`${background.size} background task(s) of the agent never ended`);
    }
    await Promise.race([
      Promise.all(background),
      new Promise((resolve) => setTimeout(resolve, 100)),
    ]);
  }
}, SETTLE_MS + 5_000);
