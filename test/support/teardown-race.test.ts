import { describe, expect, it, vi } from "vitest";
import { countsAsFailure } from "./teardown-race.mjs";

describe("the test run's unhandled errors", () => {
  it("a module load cut off as a file ends is printed and not counted", () => {
    const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
    try {
      const cut = {
        name: "EnvironmentTeardownError",
        message: '[vitest-worker]: Closing rpc while "resolve" was pending',
      };
      expect(countsAsFailure(cut)).toBe(false);
      expect(warn).toHaveBeenCalledWith(expect.stringContaining('"resolve" was pending'));
    } finally {
      warn.mockRestore();
    }
  });

  it("every other unhandled error still fails the run", () => {
    expect(countsAsFailure({ name: "Error", message: "boom" })).toBe(true);
    expect(
      countsAsFailure({
        name: "TypeError",
        message: '[vitest-worker]: Closing rpc while "resolve" was pending',
      }),
    ).toBe(true);
    // Vitest's other teardown error: a module asked for after the environment was torn down
    // names the module and the importer, which a test should see.
    expect(
      countsAsFailure({
        name: "EnvironmentTeardownError",
        message: "Cannot load '/src/x.ts' after the environment was torn down.",
      }),
    ).toBe(true);
    expect(
      countsAsFailure({
        name: "EnvironmentTeardownError",
        message: '[vitest-worker]: Closing rpc while "resolve" was pending; and more',
      }),
    ).toBe(true);
    expect(countsAsFailure({})).toBe(true);
  });
});
