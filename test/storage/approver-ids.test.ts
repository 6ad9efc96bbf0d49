import { describe, expect, it } from "vitest";
import { LIMITS } from "../../src/protocol/limits";
import {
  isApproverTaskId,
  keyedApproverTaskId,
  openApproverTaskId,
  sealApproverTaskId,
} from "../../src/storage/approver-ids";
import { idKeys, sealedTaskId, verifiedContextOf } from "../../src/storage/ids";

const keysFor = (secret: string) => idKeys({ EDGELINK_ID_KEY: secret }, "https://agent.example");
const SECRET = "approver-ids-test-secret-0123456789abcdef";
const target = { owner: '["custom","","alice"]', contextId: "c.ctx", taskId: "task-1" };

describe("the id an approver answers a task by", () => {
  it("M9: opens to the owner, context and task in its tenant only; altered, forged or another key's ids open to nothing", async () => {
    const keys = await keysFor(SECRET);
    const id = await sealApproverTaskId(keys, "acme", target);
    expect(id).not.toBeNull();
    const approverId = id as string;
    expect(isApproverTaskId(approverId)).toBe(true);
    expect(approverId).not.toContain("alice");
    expect(await openApproverTaskId(keys, "acme", approverId)).toEqual(target);
    expect(await openApproverTaskId(keys, "other", approverId)).toBeNull();
    const other = await keysFor(`${SECRET}-rotated`);
    expect(await openApproverTaskId(other, "acme", approverId)).toBeNull();
    const flipped = `${approverId.slice(0, 10)}${approverId[10] === "A" ? "B" : "A"}${approverId.slice(11)}`;
    expect(await openApproverTaskId(keys, "acme", flipped)).toBeNull();
    for (const junk of ["a.", "a.!!!", "a.AAAA", "task-1", `a.${"A".repeat(5000)}`]) {
      expect(await openApproverTaskId(keys, "acme", junk)).toBeNull();
    }
    // Each seal is fresh (a random nonce), and neither kind of id opens as the other.
    expect(await sealApproverTaskId(keys, "acme", target)).not.toBe(approverId);
    const scope = { tenant: "acme", owner: target.owner };
    const taskId = await sealedTaskId(keys, scope, "c.ctx");
    expect(isApproverTaskId(taskId)).toBe(false);
    expect(await openApproverTaskId(keys, "acme", taskId)).toBeNull();
    expect(await verifiedContextOf(keys, scope, approverId)).toBeNull();
  });

  it("M9: the approver's id carries the task's key as the task's id does; an altered, added or removed key names another id", async () => {
    const keys = await keysFor(SECRET);
    const sealed = (await sealApproverTaskId(keys, "acme", target)) as string;
    const keyed = keyedApproverTaskId(sealed, `${target.taskId}.42`);
    expect(keyed).toBe(`${sealed}.42`);
    expect(await openApproverTaskId(keys, "acme", keyed)).toEqual({
      ...target,
      taskId: `${target.taskId}.42`,
    });
    // The key is not sealed: changed, it opens to a task id the object finds no row for.
    expect((await openApproverTaskId(keys, "acme", `${sealed}.7`))?.taskId).toBe(
      `${target.taskId}.7`,
    );
    for (const junk of [`${sealed}.`, `${sealed}.x`, `${sealed}.07`, `${keyed}.1`]) {
      expect(await openApproverTaskId(keys, "acme", junk)).toBeNull();
    }
    expect(() => keyedApproverTaskId(sealed, target.taskId)).toThrow(/carries no key/);
  });

  it("M9: an id that would not fit in a task id is not made (the owner alone decides that task)", async () => {
    const keys = await keysFor(SECRET);
    const long = { ...target, taskId: "t".repeat(LIMITS.taskIdLength) };
    expect(await sealApproverTaskId(keys, "", long)).toBeNull();
  });
});
