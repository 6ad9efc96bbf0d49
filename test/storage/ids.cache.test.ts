import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import {
  idKeys,
  issuedContextId,
  VERIFIED_CONTEXTS_KEPT,
  verifyContextId,
} from "../../src/storage/ids";
import { BASE } from "../support/helpers";

/** The same id with one character of its MAC changed. */
function forge(id: string): string {
  const last = id.at(-1) === "A" ? "B" : "A";
  return `${id.slice(0, -1)}${last}`;
}

describe("issued context ids: verified once per isolate (issue 10)", () => {
  it("a remembered id still verifies only for the tenant and owner it was issued to", async () => {
    const keys = await idKeys(env, BASE);
    const mine = { tenant: "t1", owner: "alice" };
    const id = await issuedContextId(keys, mine);
    // Twice: the second answer comes from what the first verification remembered.
    expect(await verifyContextId(keys, mine, id)).toBe(true);
    expect(await verifyContextId(keys, mine, id)).toBe(true);
    expect(await verifyContextId(keys, { tenant: "t1", owner: "bob" }, id)).toBe(false);
    expect(await verifyContextId(keys, { tenant: "t2", owner: "alice" }, id)).toBe(false);
    // Scopes that would run together as plain strings stay apart.
    expect(await verifyContextId(keys, { tenant: "t1a", owner: "lice" }, id)).toBe(false);
    expect(await verifyContextId(keys, mine, forge(id))).toBe(false);
  });

  it("is bounded: the oldest remembered ids are verified again, and still pass", async () => {
    const keys = await idKeys(env, BASE);
    const scope = { tenant: "bounded", owner: "" };
    const first = await issuedContextId(keys, scope);
    expect(await verifyContextId(keys, scope, first)).toBe(true);
    for (let i = 0; i < VERIFIED_CONTEXTS_KEPT; i++) {
      expect(await verifyContextId(keys, scope, await issuedContextId(keys, scope))).toBe(true);
    }
    expect(await verifyContextId(keys, scope, first)).toBe(true);
    expect(await verifyContextId(keys, scope, forge(first))).toBe(false);
  });
});
