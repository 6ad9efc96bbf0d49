import { describe, expect, it } from "vitest";
import { A2AError } from "../../src/protocol/errors";
import {
  type ParsePushConfigOptions,
  parsePushConfig,
  pushConfigToV1,
  pushConfigToV03,
  resolvePushConfig,
} from "../../src/push/config";
import { fullConfig, HOOK } from "./fixtures";

const v1 = { version: "1.0", allowLocalhost: false } as const;
const v03 = { version: "0.3", allowLocalhost: false } as const;

/** The field violations of a refused config (fails the test if it is accepted). */
function violations(input: unknown, options: ParsePushConfigOptions) {
  try {
    parsePushConfig(input, options);
  } catch (error) {
    expect(error).toBeInstanceOf(A2AError);
    expect((error as A2AError).kind).toBe("InvalidParams");
    return (error as A2AError).fieldViolations;
  }
  throw new Error("the config was accepted");
}
const fields = (input: unknown, options: ParsePushConfigOptions) =>
  violations(input, options).map((v) => v.field);

describe("push config v1 TaskPushNotificationConfig (spec §3.1.7, issue 5)", () => {
  it("parses every field", () => {
    const parsed = parsePushConfig(
      {
        tenant: "acme",
        id: "cfg-1",
        taskId: "task-1",
        url: HOOK,
        token: "tok-123",
        authentication: { scheme: "Bearer", credentials: "s3cret" },
      },
      v1,
    );
    expect(parsed).toEqual({
      id: "cfg-1",
      taskId: "task-1",
      url: HOOK,
      token: "tok-123",
      authentication: { scheme: "Bearer", credentials: "s3cret" },
      protocolVersion: "1.0",
    });
  });

  it("parses the minimal config; empty strings are unset (ProtoJSON defaults)", () => {
    expect(parsePushConfig({ url: HOOK }, v1)).toEqual({ url: HOOK, protocolVersion: "1.0" });
    expect(
      parsePushConfig(
        {
          id: "",
          taskId: "",
          url: HOOK,
          token: "",
          authentication: { scheme: "Basic", credentials: "" },
        },
        v1,
      ),
    ).toEqual({ url: HOOK, authentication: { scheme: "Basic" }, protocolVersion: "1.0" });
  });

  it("normalizes the URL (it becomes the signature audience)", () => {
    expect(parsePushConfig({ url: "https://HOOKS.example.com" }, v1).url).toBe(
      "https://hooks.example.com/",
    );
  });

  it("takes the task from the path; a different body taskId is refused", () => {
    expect(parsePushConfig({ url: HOOK }, { ...v1, taskId: "t9" }).taskId).toBe("t9");
    expect(parsePushConfig({ url: HOOK, taskId: "t9" }, { ...v1, taskId: "t9" }).taskId).toBe("t9");
    expect(violations({ url: HOOK, taskId: "other" }, { ...v1, taskId: "t9" })).toEqual([
      { field: "taskId", description: "does not match the task addressed (t9)" },
    ]);
  });

  it("inline in SendMessage: no task yet, errors prefixed", () => {
    const options = { ...v1, inline: true, prefix: "configuration.taskPushNotificationConfig" };
    expect(parsePushConfig({ url: HOOK }, options)).toEqual({ url: HOOK, protocolVersion: "1.0" });
    expect(fields({ url: "http://hooks.example.com/" }, options)).toEqual([
      "configuration.taskPushNotificationConfig.url",
    ]);
  });

  it.each([
    ["missing url", {}, ["url"]],
    ["url not a string", { url: 5 }, ["url"]],
    ["url refused by the policy", { url: "https://169.254.169.254/" }, ["url"]],
    ["authentication without scheme", { url: HOOK, authentication: {} }, ["authentication.scheme"]],
    [
      "scheme with a space",
      { url: HOOK, authentication: { scheme: "Bearer x" } },
      ["authentication.scheme"],
    ],
    [
      "credentials with CR/LF (header injection)",
      { url: HOOK, authentication: { scheme: "Bearer", credentials: "a\r\nX-Evil: 1" } },
      ["authentication.credentials"],
    ],
    ["token with a newline", { url: HOOK, token: "a\nb" }, ["token"]],
    ["token too long", { url: HOOK, token: "t".repeat(1025) }, ["token"]],
    ["id with a slash (a path segment)", { url: HOOK, id: "a/b" }, ["id"]],
    ["id with a colon", { url: HOOK, id: "a:b" }, ["id"]],
    ["several bad fields at once", { id: 3, token: 4 }, ["id", "url", "token"]],
  ])("refuses %s, naming the field", (_label, input, expected) => {
    expect(fields(input, v1).sort()).toEqual([...expected].sort());
  });

  it("refuses a non-object", () => {
    expect(fields("https://hooks.example.com", v1)).toEqual(["(root)"]);
  });

  it("the message names the field and the reason", () => {
    try {
      parsePushConfig({ url: HOOK, token: "a\nb" }, v1);
      expect.unreachable();
    } catch (error) {
      expect((error as A2AError).message).toBe(
        "Invalid parameters: token: must not contain control characters",
      );
    }
  });
});

describe("push config v0.3 (tasks/pushNotificationConfig/set)", () => {
  it("parses TaskPushNotificationConfig; the first scheme is used", () => {
    expect(
      parsePushConfig(
        {
          taskId: "task-1",
          pushNotificationConfig: {
            id: "cfg-1",
            url: HOOK,
            token: "tok-123",
            authentication: { schemes: ["Bearer", "Basic"], credentials: "s3cret" },
          },
        },
        v03,
      ),
    ).toEqual({
      id: "cfg-1",
      taskId: "task-1",
      url: HOOK,
      token: "tok-123",
      authentication: { scheme: "Bearer", credentials: "s3cret" },
      protocolVersion: "0.3",
    });
  });

  it("parses the bare PushNotificationConfig inline in message/send", () => {
    expect(parsePushConfig({ url: HOOK, token: "t" }, { ...v03, inline: true })).toEqual({
      url: HOOK,
      token: "t",
      protocolVersion: "0.3",
    });
  });

  it.each([
    ["missing pushNotificationConfig", { taskId: "t" }, ["pushNotificationConfig"]],
    ["missing url", { pushNotificationConfig: {} }, ["pushNotificationConfig.url"]],
    [
      "empty schemes",
      { pushNotificationConfig: { url: HOOK, authentication: { schemes: [] } } },
      ["pushNotificationConfig.authentication.schemes"],
    ],
    [
      "schemes not a list",
      { pushNotificationConfig: { url: HOOK, authentication: { schemes: "Bearer" } } },
      ["pushNotificationConfig.authentication.schemes"],
    ],
    [
      "a refused URL",
      { pushNotificationConfig: { url: "https://localhost/" } },
      ["pushNotificationConfig.url"],
    ],
  ])("refuses %s, naming the field", (_label, input, expected) => {
    expect(fields(input, v03)).toEqual(expected);
  });

  it("a different taskId than the one addressed is refused", () => {
    expect(
      fields({ taskId: "x", pushNotificationConfig: { url: HOOK } }, { ...v03, taskId: "y" }),
    ).toEqual(["taskId"]);
  });

  it("allowLocalhost lets a v0.3 dev webhook through", () => {
    const parsed = parsePushConfig(
      { taskId: "t", pushNotificationConfig: { url: "http://127.0.0.1:9000/hook" } },
      { ...v03, allowLocalhost: true },
    );
    expect(parsed.url).toBe("http://127.0.0.1:9000/hook");
  });
});

describe("push config rendering", () => {
  it("v1: TaskPushNotificationConfig", () => {
    expect(pushConfigToV1(fullConfig())).toEqual({
      id: "cfg-1",
      taskId: "task-1",
      url: HOOK,
      token: "tok-123",
      authentication: { scheme: "Bearer", credentials: "s3cret" },
    });
    expect(
      pushConfigToV1(fullConfig({ token: undefined, authentication: { scheme: "Basic" } })),
    ).toEqual({ id: "cfg-1", taskId: "task-1", url: HOOK, authentication: { scheme: "Basic" } });
  });

  it("v0.3: TaskPushNotificationConfig with schemes", () => {
    expect(pushConfigToV03(fullConfig())).toEqual({
      taskId: "task-1",
      pushNotificationConfig: {
        id: "cfg-1",
        url: HOOK,
        token: "tok-123",
        authentication: { schemes: ["Bearer"], credentials: "s3cret" },
      },
    });
    expect(pushConfigToV03(fullConfig({ token: undefined, authentication: undefined }))).toEqual({
      taskId: "task-1",
      pushNotificationConfig: { id: "cfg-1", url: HOOK },
    });
  });

  it("round-trips through both versions", () => {
    const config = fullConfig();
    const fromV1 = parsePushConfig(pushConfigToV1(config), v1);
    expect(resolvePushConfig(fromV1, { taskId: config.taskId })).toEqual(config);
    const fromV03 = parsePushConfig(pushConfigToV03(config), v03);
    expect(resolvePushConfig(fromV03, { taskId: config.taskId })).toEqual({
      ...config,
      protocolVersion: "0.3",
    });
  });

  it("resolvePushConfig keeps a client id, else assigns a fresh one", () => {
    expect(
      resolvePushConfig({ url: HOOK, protocolVersion: "1.0", id: "mine" }, { taskId: "t" }).id,
    ).toBe("mine");
    const a = resolvePushConfig({ url: HOOK, protocolVersion: "1.0" }, { taskId: "t" });
    const b = resolvePushConfig({ url: HOOK, protocolVersion: "1.0" }, { taskId: "t" });
    expect(a.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(a.id).not.toBe(b.id);
    expect(
      resolvePushConfig({ url: HOOK, protocolVersion: "1.0" }, { taskId: "t", id: "x" }).id,
    ).toBe("x");
  });
});
