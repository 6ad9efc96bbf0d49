import { env, listDurableObjectIds, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { contextObjectName, newTaskId } from "../../src/durable/ids";
import { rest, rpc, send } from "../helpers";

/** Objects of the context namespace that hold storage. */
async function storedObjects(): Promise<string[]> {
  return (await listDurableObjectIds(env.EDGELINK_CONTEXT)).map((id) => id.toString()).sort();
}

/** Tables in one context object's SQLite (0 for an object that was never written). */
async function tablesOf(contextId: string): Promise<number> {
  const stub = env.EDGELINK_CONTEXT.get(
    env.EDGELINK_CONTEXT.idFromName(contextObjectName("", contextId)),
  );
  return runInDurableObject(stub, (_instance, state) =>
    Number(state.storage.sql.exec("SELECT count(*) AS n FROM sqlite_master").one().n),
  );
}

describe("a read never creates storage", () => {
  it("forged task ids are refused in the Worker (no object created); unknown contexts answer not found with no schema", async () => {
    const real = await send("before");
    const before = await storedObjects();
    const unknown = `never-written-${crypto.randomUUID()}`;
    const forgedSigned = `${newTaskId(unknown)}.AAAAAAAAAAAAAAAAAAAAAA`;
    const forgedUnsigned = newTaskId(unknown);
    // Another object's id with a valid shape but a signature for the wrong context.
    const [, random, mac] = (real.id as string).split(".");
    const spliced = `${newTaskId(unknown).split(".")[0]}.${random}.${mac}`;
    for (const id of [forgedSigned, forgedUnsigned, spliced, "not-a-task"]) {
      expect((await rest("GET", `/tasks/${id}`)).status, id).toBe(404);
      expect((await rest("POST", `/tasks/${id}:cancel`, {})).status, id).toBe(404);
      expect((await rest("GET", `/tasks/${id}/pushNotificationConfigs`)).status, id).toBe(404);
      expect((await rpc("GetTask", { id })).body.error).toMatchObject({ code: -32001 });
      const continued = await rpc("SendMessage", {
        message: { messageId: "m", role: "ROLE_USER", parts: [{ text: "x" }], taskId: id },
      });
      expect(continued.body.error, id).toMatchObject({ code: -32001 });
    }
    // Forged task ids never reached an object: not one was created.
    expect(await storedObjects()).toEqual(before);
    // Context reads reach the object (a client may name its own contexts), which answers
    // "not found" without creating its schema: no table, no row.
    expect((await rest("GET", `/contexts/${unknown}/history`)).status).toBe(404);
    const compact = await rest("POST", `/contexts/${unknown}/history:compact`, {});
    expect(compact.status).toBe(404);
    const listed = await rpc("ListTasks", { contextId: unknown });
    expect((listed.body.result as { tasks: unknown[] }).tasks).toEqual([]);
    expect(await tablesOf(unknown)).toBe(0);
    // The real task is still there, and still its owner's.
    expect(((await rpc("GetTask", { id: real.id })).body.result as { id: string }).id).toBe(
      real.id,
    );
  });

  it("the first write creates the schema", async () => {
    const contextId = `first-write-${crypto.randomUUID()}`;
    await send("hello there", { contextId });
    expect(await tablesOf(contextId)).toBeGreaterThan(3);
  });
});
