import { beforeAll, describe, expect, it } from "vitest";
import { sleep, userMessage } from "../support/helpers";
import {
  ALICE,
  authedAgent,
  call,
  type Key,
  ROOT,
  rpcAs,
  signingKey,
  token,
  type Worker,
} from "./auth-support";

type Json = Record<string, unknown>;

let key: Key;
let worker: Worker;
beforeAll(async () => {
  key = await signingKey();
  worker = authedAgent(key);
});

const bearer = async (claims: Parameters<typeof token>[1]) => ({
  Authorization: `Bearer ${await token(key, claims)}`,
});

describe("the multi-tenant admin role (allTenants)", () => {
  it("a principal without it cannot act in another tenant, by prefix or params.tenant", async () => {
    const plain = await bearer({ sub: "carol", tenant: "acme", scope: "a2a:read" });
    for (const headers of [ALICE, plain]) {
      const prefixed = await call(worker, "POST", "/beta/message:send", {
        headers,
        body: { message: userMessage("hi") },
      });
      expect(prefixed.status).toBe(403);
      const param = await rpcAs(worker, headers, "ListTasks", { tenant: "beta" });
      expect(param.body.error).toMatchObject({ code: -32011 });
    }
  });

  it("an admin API key acts in the tenant it names, as itself; its own tenant otherwise", async () => {
    const sent = await call(worker, "POST", "/beta/message:send", {
      headers: ROOT,
      body: { message: userMessage("hello beta") },
    });
    expect(sent.status).toBe(200);
    const task = ((await sent.json()) as { task: Json }).task;
    // The task lives in tenant beta: readable there, not in the admin's own tenant.
    expect((await call(worker, "GET", `/beta/tasks/${task.id}`, { headers: ROOT })).status).toBe(
      200,
    );
    const viaParam = await rpcAs(worker, ROOT, "GetTask", { id: task.id, tenant: "beta" });
    expect((viaParam.body.result as Json).id).toBe(task.id);
    expect((await call(worker, "GET", `/tasks/${task.id}`, { headers: ROOT })).status).toBe(404);
    expect((await call(worker, "GET", `/ops/tasks/${task.id}`, { headers: ROOT })).status).toBe(
      404,
    );
    // The tenant index hears of the task within limits.indexFlushMs: list until it shows.
    const deadline = Date.now() + 5000;
    let listed = await rpcAs(worker, ROOT, "ListTasks", { tenant: "beta" });
    while (!JSON.stringify(listed.body.result).includes(task.id as string)) {
      if (Date.now() > deadline) break;
      await sleep(50);
      listed = await rpcAs(worker, ROOT, "ListTasks", { tenant: "beta" });
    }
    expect(JSON.stringify(listed.body.result)).toContain(task.id as string);
    // Another principal of tenant beta does not see the admin's task: owners still hold.
    const betaUser = await bearer({ sub: "bea", tenant: "beta" });
    expect((await call(worker, "GET", `/tasks/${task.id}`, { headers: betaUser })).status).toBe(
      404,
    );
  });

  it("a JWT carrying the configured scope is an admin; the same token without it is not", async () => {
    const admin = await bearer({ sub: "ops-bot", tenant: "ops", scope: "openid a2a:all-tenants" });
    const ok = await rpcAs(worker, admin, "ListTasks", { tenant: "gamma" });
    expect(ok.status).toBe(200);
    expect(ok.body.result).toBeDefined();
    const sent = await call(worker, "POST", "/gamma/message:send", {
      headers: admin,
      body: { message: userMessage("hello gamma") },
    });
    expect(sent.status).toBe(200);
    const plain = await bearer({ sub: "ops-bot", tenant: "ops", scope: "openid" });
    expect((await rpcAs(worker, plain, "ListTasks", { tenant: "gamma" })).status).toBe(403);
  });
});
