import { env, runInDurableObject } from "cloudflare:test";
import { afterEach, describe, expect, it } from "vitest";
import {
  forgetLocalIdKeys,
  idKeys,
  LOCAL_ID_SECRET_OBJECT,
  type LocalSecretHolder,
  type LocalSecretSource,
  sealedTaskId,
  verifiedContextOf,
} from "../../src/storage/ids";
import { CONTEXT_SCHEMA } from "../../src/storage/schema";
import { inspectSchema } from "../../src/storage/schema-version";

/** wrangler dev's environment without EDGELINK_ID_KEY: only the index binding. */
const LOCAL_ENV = { EDGELINK_INDEX: env.EDGELINK_INDEX };
const LOCAL_ORIGIN = "http://localhost:8787";

/** The routing's part idKeys asks: the index namespace's object named for the local secret. */
function holder(name = LOCAL_ID_SECRET_OBJECT): LocalSecretHolder & { asked: number } {
  const found = {
    asked: 0,
    localSecretSource(): LocalSecretSource {
      found.asked += 1;
      const ns = env.EDGELINK_INDEX;
      return ns.get(ns.idFromName(name)) as unknown as LocalSecretSource;
    },
  };
  return found;
}

describe("ids under wrangler dev without EDGELINK_ID_KEY", () => {
  afterEach(() => forgetLocalIdKeys());

  it("B1: one generated secret kept with the local state, so an id made before a restart still opens after it", async () => {
    const scope = { tenant: "", owner: "" };
    const name = `${LOCAL_ID_SECRET_OBJECT}/${crypto.randomUUID()}`;
    const before = holder(name);
    const taskId = await sealedTaskId(await idKeys(LOCAL_ENV, LOCAL_ORIGIN, before), scope, "c1");
    // A second request of the same isolate asks the object no more.
    await idKeys(LOCAL_ENV, LOCAL_ORIGIN, before);
    expect(before.asked).toBe(1);

    forgetLocalIdKeys(); // a restarted wrangler dev: a new isolate, the same .wrangler/state
    const after = holder(name);
    const keys = await idKeys(LOCAL_ENV, LOCAL_ORIGIN, after);
    expect(after.asked).toBe(1);
    expect(await verifiedContextOf(keys, scope, taskId)).toBe("c1");

    // Another local state (another object) has another secret: the id does not open there.
    forgetLocalIdKeys();
    const other = await idKeys(LOCAL_ENV, LOCAL_ORIGIN, holder(`${name}/other`));
    expect(await verifiedContextOf(other, scope, taskId)).toBeNull();
  });

  it("B1: the secret lives in the key-value API, so the index object's SQL schema stays vacant", async () => {
    const name = `${LOCAL_ID_SECRET_OBJECT}/${crypto.randomUUID()}`;
    await idKeys(LOCAL_ENV, LOCAL_ORIGIN, holder(name));
    const stub = env.EDGELINK_INDEX.get(env.EDGELINK_INDEX.idFromName(name));
    const state = await runInDurableObject(stub, (_i, st) => ({
      schema: inspectSchema(st.storage.sql, CONTEXT_SCHEMA),
    }));
    expect(state.schema).toEqual({ state: "none" });
  });

  it("B1: deployed (not localhost), a missing key is an error and nothing is generated", async () => {
    const asked = holder(`${LOCAL_ID_SECRET_OBJECT}/${crypto.randomUUID()}`);
    expect(() => idKeys(LOCAL_ENV, "https://agent.example.com", asked)).toThrow(
      /EDGELINK_ID_KEY is not set/,
    );
    expect(asked.asked).toBe(0);
  });

  it("B1: with EDGELINK_ID_KEY set, the secret is used and no object is asked", async () => {
    const asked = holder(`${LOCAL_ID_SECRET_OBJECT}/${crypto.randomUUID()}`);
    await idKeys(env, LOCAL_ORIGIN, asked);
    expect(asked.asked).toBe(0);
  });
});
