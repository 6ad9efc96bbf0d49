import { SELF } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { OPERATIONS, RPC_METHODS } from "../../../src/worker/a2a/operation-table";
import { BASE, rest, rpc } from "../../support/helpers";

type Json = Record<string, unknown>;
const operations = Object.entries(OPERATIONS);

/** A concrete path for a route pattern: each `:name{regex}` filled, a `:verb` kept. */
function concrete(pattern: string, tag: string): string {
  return pattern.replace(/:(\w+)\{\[\^\/:\]\+([^}]*)\}/g, (_, name: string, verb: string) => {
    const value = name === "contextId" ? `ctx-${tag}` : name === "configId" ? "cfg" : "t-none";
    return value + verb;
  });
}

describe("one operation table for both bindings", () => {
  it("every operation has a JSON-RPC name per version and an HTTP+JSON route; no name twice", () => {
    for (const [name, op] of operations) {
      expect(op.rpc["1.0"], name).toMatch(/^\S+$/);
      expect(op.rpc["0.3"], name).toMatch(/^\S+$/);
      expect(op.rest.length, name).toBeGreaterThan(0);
      expect(RPC_METHODS["1.0"].get(op.rpc["1.0"]), name).toBe(op);
      expect(RPC_METHODS["0.3"].get(op.rpc["0.3"]), name).toBe(op);
    }
    expect(RPC_METHODS["1.0"].size).toBe(operations.length);
    expect(RPC_METHODS["0.3"].size).toBe(operations.length);
    const routes = operations.flatMap(([, op]) =>
      op.rest.flatMap((r) => r.methods.map((m) => `${m} ${r.path}`)),
    );
    expect(new Set(routes).size).toBe(routes.length);
  });

  it("JSON-RPC reaches every operation under its v1 and its v0.3 name", async () => {
    for (const [name, op] of operations) {
      for (const version of ["1.0", "0.3"] as const) {
        const { body } = await rpc(op.rpc[version], {}, { version });
        // Empty params: refused by the operation itself, never as an unknown method.
        const error = body.error as Json | undefined;
        expect(error?.code, `${name} ${op.rpc[version]}`).not.toBe(-32601);
      }
    }
  });

  it("HTTP+JSON reaches every operation on each of its routes, with and without a tenant", async () => {
    for (const [name, op] of operations) {
      for (const route of op.rest) {
        for (const method of route.methods) {
          for (const prefix of ["", "/ops-table-tenant"]) {
            const path = prefix + concrete(route.path, name);
            const body = method === "POST" ? {} : undefined;
            const answer = await rest(method, path, body, { "A2A-Version": "1.0" });
            expect(answer.status, `${method} ${path}`).not.toBe(405);
            expect(JSON.stringify(answer.body), `${method} ${path}`).not.toContain(
              "No endpoint at",
            );
          }
        }
      }
    }
  });

  it("an unknown method is still -32601 in both versions, and an unknown path 404", async () => {
    for (const version of ["1.0", "0.3", null]) {
      for (const method of ["NoSuchMethod", "constructor", "__proto__", "toString"]) {
        const { body } = await rpc(method, {}, { version });
        expect((body.error as Json).code, `${method} under ${version}`).toBe(-32601);
      }
    }
    // A v0.3 name under an explicit v1 is not served as v0.3, and the error says why.
    const crossed = await rpc("tasks/get", { id: "x" }, { version: "1.0" });
    expect((crossed.body.error as Json).code).toBe(-32601);
    expect((crossed.body.error as Json).message).toContain("is an A2A 0.3 method");

    const missing = await rest("GET", "/tasks/x/nothing");
    expect(missing.status).toBe(404);
    expect(JSON.stringify(missing.body)).toContain("No endpoint at /tasks/x/nothing");
  });

  it("a path of several operations lists all their methods in Allow, in the table's order", async () => {
    const allow = async (path: string) =>
      (await SELF.fetch(`${BASE}${path}`, { method: "PUT" })).headers.get("Allow");
    expect(await allow("/tasks/t1/pushNotificationConfigs")).toBe("GET, HEAD, POST");
    expect(await allow("/tasks/t1/pushNotificationConfigs/c1")).toBe("GET, HEAD, DELETE");
    expect(await allow("/tasks/t1:subscribe")).toBe("GET, HEAD, POST");
    expect(await allow("/t/tasks/t1:cancel")).toBe("POST");
    expect(await allow("/tasks")).toBe("GET, HEAD");
  });
});
