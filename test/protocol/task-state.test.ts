import { describe, expect, it } from "vitest";
import {
  canTransition,
  INTERRUPTED_STATES,
  InvalidTransitionError,
  isInterrupted,
  isTerminal,
  planTransition,
  TASK_STATES,
  TaskState,
  TERMINAL_STATES,
} from "../../src/protocol/task-state";
import { LEGAL } from "./fixtures";

describe("TaskState values (B2, B8)", () => {
  it("B2 has exactly the seed states plus A2A's rejected and auth-required", () => {
    expect([...TASK_STATES].sort()).toEqual(
      [
        "auth-required",
        "canceled",
        "completed",
        "failed",
        "input-required",
        "rejected",
        "submitted",
        "unknown",
        "working",
      ].sort(),
    );
    for (const s of TASK_STATES) expect(TaskState.parse(s)).toBe(s);
  });

  it.each(["input_required", "cancelled", "INPUT-REQUIRED", "Working", "TASK_STATE_WORKING", ""])(
    "B2 rejects the near-miss %j",
    (s) => {
      expect(TaskState.safeParse(s).success).toBe(false);
    },
  );

  it("B8 unknown is accepted but nothing can move into or out of it", () => {
    expect(TaskState.parse("unknown")).toBe("unknown");
    for (const s of TASK_STATES) {
      expect(canTransition(s, "unknown")).toBe(false);
      expect(canTransition("unknown", s)).toBe(false);
    }
  });
});

describe("terminal and interrupted states (B4)", () => {
  it("B4 completed, canceled, failed and rejected are terminal; nothing else is", () => {
    expect([...TERMINAL_STATES].sort()).toEqual(["canceled", "completed", "failed", "rejected"]);
    for (const s of TASK_STATES) expect(isTerminal(s)).toBe(TERMINAL_STATES.has(s));
    expect(isTerminal("working")).toBe(false);
    expect(isTerminal("input-required")).toBe(false);
  });

  it("input-required and auth-required are the interrupted states", () => {
    expect([...INTERRUPTED_STATES].sort()).toEqual(["auth-required", "input-required"]);
    expect(isInterrupted("auth-required")).toBe(true);
    expect(isInterrupted("working")).toBe(false);
    expect(isInterrupted("completed")).toBe(false);
  });
});

describe("canTransition (B3, B4)", () => {
  const pairs = TASK_STATES.flatMap((from) => TASK_STATES.map((to) => [from, to] as const));

  it.each(pairs)("B3 %s → %s matches the catalogue", (from, to) => {
    expect(canTransition(from, to)).toBe(LEGAL[from].includes(to));
  });

  it("B3 pins the rows the seed and decision 2 name explicitly", () => {
    expect(canTransition("working", "canceled")).toBe(true);
    expect(canTransition("submitted", "completed")).toBe(false);
    expect(canTransition("submitted", "input-required")).toBe(false);
    expect(canTransition("input-required", "completed")).toBe(false);
    expect(canTransition("submitted", "rejected")).toBe(true);
    expect(canTransition("working", "auth-required")).toBe(true);
    expect(canTransition("auth-required", "working")).toBe(true);
  });

  it("B4 no terminal state has any way out", () => {
    for (const from of TERMINAL_STATES) {
      for (const to of TASK_STATES) expect(canTransition(from, to)).toBe(false);
    }
  });
});

describe("planTransition (B5, B6, B7)", () => {
  it("B5 a same-state move plans nothing, even for a terminal state", () => {
    for (const s of TASK_STATES) expect(planTransition(s, s)).toEqual([]);
  });

  it("B3 a legal move is a single step", () => {
    expect(planTransition("submitted", "working")).toEqual(["working"]);
    expect(planTransition("working", "completed", { viaWorking: true })).toEqual(["completed"]);
  });

  it("B7 viaWorking passes through working when the direct move is illegal", () => {
    expect(planTransition("submitted", "completed", { viaWorking: true })).toEqual([
      "working",
      "completed",
    ]);
    expect(planTransition("submitted", "input-required", { viaWorking: true })).toEqual([
      "working",
      "input-required",
    ]);
    expect(planTransition("input-required", "completed", { viaWorking: true })).toEqual([
      "working",
      "completed",
    ]);
    expect(planTransition("auth-required", "input-required", { viaWorking: true })).toEqual([
      "working",
      "input-required",
    ]);
  });

  it("B6 without viaWorking an indirect move throws InvalidTransitionError naming both states", () => {
    let caught: unknown;
    try {
      planTransition("submitted", "completed");
    } catch (e) {
      caught = e;
    }
    expect(caught).toBeInstanceOf(InvalidTransitionError);
    expect(caught).toBeInstanceOf(Error);
    const err = caught as InvalidTransitionError;
    expect(err.name).toBe("InvalidTransitionError");
    expect(err.from).toBe("submitted");
    expect(err.to).toBe("completed");
    expect(err.message).toBe("Invalid task state transition: submitted -> completed");
  });

  it("B4 viaWorking never reopens a terminal task", () => {
    for (const from of TERMINAL_STATES) {
      expect(() => planTransition(from, "working", { viaWorking: true })).toThrow(
        InvalidTransitionError,
      );
      expect(() => planTransition(from, "input-required", { viaWorking: true })).toThrow(
        InvalidTransitionError,
      );
    }
  });

  it("B8 viaWorking cannot reach unknown", () => {
    expect(() => planTransition("submitted", "unknown", { viaWorking: true })).toThrow(
      InvalidTransitionError,
    );
  });
});
