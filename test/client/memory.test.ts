import { SELF } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { ownerOf } from "../../src/agent/access/auth";
import { connect } from "../../src/client/connect";
import { MemoryNotFoundError, PermissionDeniedError } from "../../src/client/errors";
import { MEMORY_OPERATOR_HEADER } from "../../src/client/memory";
import { OPERATOR_HEADER } from "../../src/memory/api/memory-api";
import { BASE, newCaller } from "../harness/memory/support";

const fetchFn: typeof fetch = (input, init) => SELF.fetch(input, init);

async function as(user: string, binding?: "JSONRPC" | "HTTP+JSON") {
  return connect(BASE, {
    fetch: fetchFn,
    headers: { "X-User": user },
    ...(binding ? { binding } : {}),
  });
}

describe("edgelink/client: the memory methods", () => {
  it("K8: a user adds, lists, searches, corrects, deletes and erases their own memory, over either binding", async () => {
    for (const binding of ["JSONRPC", "HTTP+JSON"] as const) {
      const alice = newCaller("alice");
      const agent = await as(alice.user, binding);
      const added = await agent.memory.add({ claim: "The user collects stamps." });
      const id = added.results[0]?.id as string;
      expect((await agent.memory.list()).items.map((i) => i.kind === "fact" && i.claim)).toEqual([
        "The user collects stamps.",
      ]);
      expect((await agent.memory.search("stamps")).facts).toHaveLength(1);
      await agent.memory.correct(id, { claim: "The user collects coins." });
      const listed = await agent.memory.list({ kind: "fact" });
      expect(listed.items.map((i) => i.kind === "fact" && i.claim)).toEqual([
        "The user collects coins.",
      ]);
      const other = await as(newCaller("bob").user, binding);
      await expect(other.memory.get("fact", listed.items[0]?.id as string)).rejects.toBeInstanceOf(
        MemoryNotFoundError,
      );
      await agent.memory.delete("fact", listed.items[0]?.id as string);
      await agent.memory.addGoal({ title: "Complete the coin album" });
      expect(await agent.memory.erase()).toBeGreaterThanOrEqual(1);
      expect((await agent.memory.list({ kind: "goal" })).items).toEqual([]);
    }
  });

  it("K8: the operator reaches a user's memory with the operator key only", async () => {
    expect(MEMORY_OPERATOR_HEADER).toBe(OPERATOR_HEADER);
    const alice = newCaller("alice");
    await (await as(alice.user)).memory.add({ claim: "The user is a pilot." });
    const scope = ownerOf({ scheme: "custom", subject: alice.user, tenant: "" });
    const op = await as("operator");
    const theirs = op.memory.asOperator("operator-key-for-the-memory-tests", scope);
    expect((await theirs.list()).items).toHaveLength(1);
    await expect(
      op.memory.asOperator("a-wrong-key-of-some-length", scope).list(),
    ).rejects.toBeInstanceOf(PermissionDeniedError);
    expect(await theirs.erase()).toBe(1);
    expect((await (await as(alice.user)).memory.list()).items).toEqual([]);
  });
});
