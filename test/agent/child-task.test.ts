import { describe, expect, it } from "vitest";
import { Child } from "../../src/agent/child-task";
import type { ChildLedger, ChildRecord, DelegationHost } from "../../src/agent/delegation";

const host: DelegationHost = {
  taskId: "parent",
  signal: new AbortController().signal,
  // No binding: a child that tried to reach its target would throw naming it.
  env: {},
  status: () => {},
  artifact: () => "",
};

function childOf(change: Partial<ChildRecord>): { child: Child; updates: unknown[] } {
  const updates: unknown[] = [];
  const ledger: ChildLedger = {
    get: () => null,
    create: () => {},
    update: (_parent, key, c) => void updates.push({ key, ...c }),
  };
  const record: ChildRecord = {
    key: "1",
    target: "binding:PEER",
    childTaskId: null,
    childContextId: null,
    lastEventId: null,
    state: "sending",
    ...change,
  };
  return { child: new Child(host, ledger, record, "Hi", {}), updates };
}

describe("a delegated child followed from its ledger row", () => {
  it("has its task id once the ledger holds one", () => {
    expect(childOf({}).child.taskId).toBeUndefined();
    expect(childOf({ childTaskId: "c1" }).child.taskId).toBe("c1");
  });

  it("seen to its end before a restart, it has no events left and reaches nobody for them", async () => {
    const { child, updates } = childOf({ childTaskId: "c1", state: "completed" });
    const events = [];
    for await (const event of child.events()) events.push(event);
    expect(events).toEqual([]);
    expect(updates).toEqual([]);
  });

  it("a child still running is followed from its target (here a binding that is gone)", async () => {
    const { child } = childOf({ childTaskId: "c1", state: "working" });
    await expect(child.result()).rejects.toThrow(/env\.PEER is not a service binding/);
  });

  it("its events are read once; a reply before it has a task is refused", async () => {
    const { child } = childOf({ childTaskId: "c1", state: "completed" });
    for await (const _ of child.events());
    await expect(child.events().next()).rejects.toThrow(/can be read only once/);
    expect(() => childOf({}).child.reply("Yes")).toThrow(/answered once it has a task/);
  });
});
