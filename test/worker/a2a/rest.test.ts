import { describe, expect, it } from "vitest";
import { artifactText, rest, sleep, userMessage } from "../../support/helpers";

type Json = Record<string, unknown>;
const V1 = { "A2A-Version": "1.0" };

describe("HTTP+JSON binding", () => {
  it("POST /message:send, GET /tasks/{id}, GET /tasks", async () => {
    const sent = await rest("POST", "/message:send", { message: userMessage("rest works") }, V1);
    expect(sent.status).toBe(200);
    const task = (sent.body as { task: Json }).task;
    expect(artifactText(task)).toBe("You said: rest works");

    const got = await rest("GET", `/tasks/${task.id}?historyLength=1`, undefined, V1);
    expect(got.body.id).toBe(task.id);
    expect((got.body.history as Json[]).length).toBe(1);

    const list = await rest("GET", `/tasks?contextId=${task.contextId}&includeArtifacts=true`);
    expect((list.body.tasks as Json[]).map((t) => t.id)).toEqual([task.id]);
    expect(artifactText((list.body.tasks as Json[])[0] as Json)).toBe("You said: rest works");
  });

  it("POST /tasks/{id}:cancel cancels; again is 400 TASK_NOT_CANCELABLE", async () => {
    const sent = await rest("POST", "/message:send", {
      message: userMessage("count 20"),
      configuration: { returnImmediately: true },
    });
    const id = (sent.body.task as Json).id as string;
    const canceled = await rest("POST", `/tasks/${id}:cancel`, { metadata: { reason: "enough" } });
    expect(canceled.status).toBe(200);
    expect(canceled.body.status).toMatchObject({ state: "TASK_STATE_CANCELED" });
    expect((canceled.body.metadata as Json).cancelReason).toBe("enough");

    const again = await rest("POST", `/tasks/${id}:cancel`);
    expect(again.status).toBe(400);
    expect(again.body.error).toMatchObject({ code: 400, status: "FAILED_PRECONDITION" });
    const details = (again.body.error as { details: Json[] }).details;
    expect(details[0]).toMatchObject({ reason: "TASK_NOT_CANCELABLE", domain: "a2a-protocol.org" });
  });

  it("errors use the google.rpc.Status shape with the spec's HTTP status", async () => {
    const missing = await rest("GET", "/tasks/unknown-task");
    expect(missing.status).toBe(404);
    expect(missing.body.error).toMatchObject({ code: 404, status: "NOT_FOUND" });

    const invalid = await rest("POST", "/message:send", { message: { role: "ROLE_USER" } });
    expect(invalid.status).toBe(400);
    const bad = (invalid.body.error as { details: Json[] }).details.find((d) =>
      String(d["@type"]).endsWith("BadRequest"),
    );
    // Named as this binding sends them: the body is what JSON-RPC calls params.
    expect(JSON.stringify(bad)).toContain('"field":"message.messageId"');
    expect(JSON.stringify(invalid.body)).not.toContain("params.");

    const badQuery = await rest("GET", "/tasks?pageSize=abc");
    expect(badQuery.status).toBe(400);
    expect(JSON.stringify(badQuery.body)).toContain("pageSize");
    expect(JSON.stringify(badQuery.body)).not.toContain("params.");

    const version = await rest("GET", "/tasks", undefined, { "A2A-Version": "2.0" });
    expect(version.status).toBe(400);
    expect(JSON.stringify(version.body)).toContain("VERSION_NOT_SUPPORTED");

    const push = await rest("GET", "/tasks/abc/pushNotificationConfigs");
    expect(push.status).toBe(404);
    expect(JSON.stringify(push.body)).toContain("TASK_NOT_FOUND");

    const card = await rest("GET", "/extendedAgentCard");
    expect(card.status).toBe(400);
    expect(JSON.stringify(card.body)).toContain("UNSUPPORTED_OPERATION");
  });

  it("unknown paths are 404 and wrong methods 405 with Allow", async () => {
    expect((await rest("GET", "/nothing/here/at/all")).status).toBe(404);
    const wrong = await rest("DELETE", "/message:send");
    expect(wrong.status).toBe(405);
    expect(wrong.headers.get("Allow")).toBe("POST");
  });

  it("a /{tenant} prefix scopes tasks: another tenant cannot see them", async () => {
    const sent = await rest("POST", "/acme/message:send", { message: userMessage("tenant a") });
    const task = sent.body.task as Json;
    expect((await rest("GET", `/acme/tasks/${task.id}`)).body.id).toBe(task.id);
    expect((await rest("GET", `/globex/tasks/${task.id}`)).status).toBe(404);
    expect((await rest("GET", `/tasks/${task.id}`)).status).toBe(404);

    // The tenant index lags by up to limits.indexFlushMs: wait for the task in acme's list,
    // so that globex's not showing it below is not true merely by lag.
    const deadline = Date.now() + 5000;
    let acme = await rest("GET", "/acme/tasks?pageSize=100");
    while (!(acme.body.tasks as Json[]).some((t) => t.id === task.id) && Date.now() < deadline) {
      await sleep(50);
      acme = await rest("GET", "/acme/tasks?pageSize=100");
    }
    expect((acme.body.tasks as Json[]).map((t) => t.id)).toContain(task.id);
    const globex = await rest("GET", "/globex/tasks?pageSize=100");
    expect((globex.body.tasks as Json[]).map((t) => t.id)).not.toContain(task.id);
  });

  it("A2A-Version 0.3 on REST renders v0.3 shapes", async () => {
    const sent = await rest(
      "POST",
      "/message:send",
      {
        message: {
          kind: "message",
          messageId: "r03",
          role: "user",
          parts: [{ kind: "text", text: "x" }],
        },
      },
      { "A2A-Version": "0.3" },
    );
    expect(sent.body.kind).toBe("task");
    expect((sent.body.status as Json).state).toBe("completed");
  });
});
