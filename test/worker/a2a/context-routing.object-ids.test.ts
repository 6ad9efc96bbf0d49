import { describe, expect, it } from "vitest";
import { OBJECT_IDS_KEPT, objectId } from "../../../src/worker/a2a/context-routing";

/** A namespace that counts the names it hashes. */
function countingNamespace() {
  const hashed: string[] = [];
  const ns = {
    idFromName: (name: string) => {
      hashed.push(name);
      return { name } as unknown as DurableObjectId;
    },
  } as unknown as DurableObjectNamespace;
  return { ns, hashed };
}

describe("conversation object ids kept per isolate (a count, not a time)", () => {
  it("a conversation's next message reuses its object's id; another namespace hashes its own", () => {
    const { ns, hashed } = countingNamespace();
    const first = objectId(ns, "/c1");
    expect(objectId(ns, "/c1")).toBe(first);
    expect(hashed).toEqual(["/c1"]);
    const other = countingNamespace();
    objectId(other.ns, "/c1");
    expect(other.hashed).toEqual(["/c1"]);
  });

  it("at most OBJECT_IDS_KEPT ids per namespace, the oldest dropped first", () => {
    const { ns, hashed } = countingNamespace();
    for (let i = 0; i <= OBJECT_IDS_KEPT; i++) objectId(ns, `/c${i}`);
    expect(hashed).toHaveLength(OBJECT_IDS_KEPT + 1);
    // The newest are kept; the first went when the last came.
    objectId(ns, `/c${OBJECT_IDS_KEPT}`);
    objectId(ns, "/c1");
    expect(hashed).toHaveLength(OBJECT_IDS_KEPT + 1);
    objectId(ns, "/c0");
    expect(hashed).toHaveLength(OBJECT_IDS_KEPT + 2);
  });
});
