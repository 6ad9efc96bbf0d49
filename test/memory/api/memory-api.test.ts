import { SELF } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { ownerOf } from "../../../src/agent/access/auth";
import { OPERATOR_HEADER } from "../../../src/memory/api/memory-api";
import { BASE, claims, memoryApi, newCaller } from "../../harness/memory/support";

type Json = Record<string, unknown>;

const OPERATOR_KEY = "operator-key-for-the-memory-tests";
const operator = (key = OPERATOR_KEY) => ({ [OPERATOR_HEADER]: key });
/** The scope key of a test caller (custom scheme, no issuer): its owner. */
const scopeOf = (user: string) =>
  encodeURIComponent(ownerOf({ scheme: "custom", subject: user, tenant: "" }));

const addFact = async (caller: ReturnType<typeof newCaller>, claim: string) => {
  const { status, body } = await memoryApi(caller, "POST", "/memory/facts", { claim });
  expect(status, JSON.stringify(body)).toBe(200);
  return ((body.results as Json[])[0] as Json).id as string;
};

describe("the memory API: a user's own memory", () => {
  it("K3: add, list, search, read, correct and delete one item", async () => {
    const alice = newCaller("alice");
    const id = await addFact(alice, "The user speaks Portuguese.");
    expect(await claims(alice)).toEqual(["The user speaks Portuguese."]);
    const one = await memoryApi(alice, "GET", `/memory/fact/${id}`);
    expect(one.body).toMatchObject({
      kind: "fact",
      claim: "The user speaks Portuguese.",
      source: "user_stated",
    });
    const search = await memoryApi(alice, "POST", "/memory/search", { text: "Which language?" });
    expect(search.status).toBe(200);
    expect((search.body.facts as Json[]).map((f) => f.claim)).toEqual([
      "The user speaks Portuguese.",
    ]);
    const corrected = await memoryApi(alice, "PUT", `/memory/facts/${id}`, {
      claim: "The user speaks Spanish.",
    });
    expect(corrected.status).toBe(200);
    expect(await claims(alice)).toEqual(["The user speaks Spanish."]);
    const newId = ((corrected.body.results as Json[])[0] as Json).id as string;
    expect((await memoryApi(alice, "DELETE", `/memory/fact/${newId}`)).status).toBe(200);
    expect(await claims(alice)).toEqual([]);
    expect((await memoryApi(alice, "DELETE", `/memory/fact/${newId}`)).status).toBe(404);
  });

  it("K8: a user sees, changes and deletes only their own memory", async () => {
    const alice = newCaller("alice");
    const mallory = newCaller("mallory");
    const id = await addFact(alice, "The user's PIN hint is blue.");
    expect(await claims(mallory)).toEqual([]);
    expect((await memoryApi(mallory, "GET", `/memory/fact/${id}`)).status).toBe(404);
    expect((await memoryApi(mallory, "DELETE", `/memory/fact/${id}`)).status).toBe(404);
    expect((await memoryApi(mallory, "PUT", `/memory/facts/${id}`, { claim: "x" })).status).toBe(
      404,
    );
    expect((await memoryApi(mallory, "DELETE", "/memory")).status).toBe(200);
    // Another tenant of the same user is another memory.
    expect(await claims({ user: alice.user, tenant: "t2" })).toEqual([]);
    // A user naming another tenant than their own is refused.
    expect((await memoryApi(alice, "GET", "/t2/memory?kind=fact")).status).toBe(403);
    expect(await claims(alice)).toEqual(["The user's PIN hint is blue."]);
  });

  it("K8: without a credential the routes answer 401 and touch nothing", async () => {
    const response = await memoryApi(null, "GET", "/memory?kind=fact");
    expect(response.status).toBe(401);
    expect((await memoryApi(null, "DELETE", "/memory")).status).toBe(401);
  });

  it("K8: bad input is a 400 naming the field, never a 500", async () => {
    const alice = newCaller("alice");
    const cases: [string, string, unknown, string][] = [
      ["POST", "/memory/facts", { claim: 5 }, "body.claim"],
      ["POST", "/memory/facts", { claim: "x", confidence: 7 }, "body.confidence"],
      ["POST", "/memory/facts", { claim: "x", extra: 1 }, "body"],
      ["GET", "/memory?kind=bogus", undefined, "query.kind"],
      ["GET", "/memory?kind=fact&pageSize=100000", undefined, "query.pageSize"],
      ["GET", "/memory/bogus/x", undefined, "path.kind"],
      ["POST", "/memory/search", { text: 1 }, "body.text"],
      ["POST", "/memory/goals", { title: "" }, "body.title"],
    ];
    for (const [method, path, body, field] of cases) {
      const response = await memoryApi(alice, method, path, body);
      expect(response.status, `${method} ${path}`).toBe(400);
      expect(JSON.stringify(response.body), `${method} ${path}`).toContain(field);
    }
    // A body that is not JSON.
    const notJson = await SELF.fetch(`${BASE}/memory/facts`, {
      method: "POST",
      headers: { "X-User": alice.user, "Content-Type": "application/json" },
      body: "{claim",
    });
    expect(notJson.status).toBe(400);
  });

  it("K8: erasure deletes everything about the user: nothing is listed or recalled afterwards", async () => {
    const alice = newCaller("alice");
    await addFact(alice, "The user is training for a marathon.");
    await memoryApi(alice, "POST", "/memory/goals", { title: "Run a marathon", priority: 1 });
    const erased = await memoryApi(alice, "DELETE", "/memory");
    expect(erased.status).toBe(200);
    expect(erased.body.erased).toBeGreaterThanOrEqual(2);
    expect(await claims(alice)).toEqual([]);
    const goals = await memoryApi(alice, "GET", "/memory?kind=goal");
    expect(goals.body.items).toEqual([]);
    const search = await memoryApi(alice, "POST", "/memory/search", { text: "marathon" });
    expect(search.body).toMatchObject({ facts: [], goals: [] });
  });
});

describe("the memory API: the operator", () => {
  it("K8: the operator key reaches a named scope; a wrong key is refused, never read as the user", async () => {
    const alice = newCaller("alice");
    await addFact(alice, "The user works at Acme.");
    const seen = await memoryApi(
      newCaller("op"),
      "GET",
      `/memory?kind=fact&scope=${scopeOf(alice.user)}`,
      undefined,
      operator(),
    );
    expect(seen.status).toBe(200);
    expect((seen.body.items as Json[]).map((f) => f.claim)).toEqual(["The user works at Acme."]);
    const wrong = await memoryApi(
      alice,
      "GET",
      `/memory?kind=fact&scope=${scopeOf(alice.user)}`,
      undefined,
      operator("operator-key-wrong-but-long"),
    );
    expect(wrong.status).toBe(403);
    const unnamed = await memoryApi(
      newCaller("op"),
      "GET",
      "/memory?kind=fact",
      undefined,
      operator(),
    );
    expect(unnamed.status).toBe(400);
  });
});

describe("the inspector's memory panel", () => {
  it("K8: with the memory API served, the inspector page loads a memory panel script that parses", async () => {
    const page = await (await SELF.fetch(`${BASE}/inspector`)).text();
    expect(page).toContain('<script src="inspector/memory.js"></script>');
    const response = await SELF.fetch(`${BASE}/inspector/memory.js`);
    expect(response.status).toBe(200);
    expect(response.headers.get("Content-Type")).toContain("text/javascript");
    const script = await response.text();
    expect(script).toContain('"/memory?kind="');
    // Syntax only: the browser runs it (new Function parses without running).
    expect(() => new Function(script)).not.toThrow();
  });
});
