import { env, SELF } from "cloudflare:test";
import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import { BASE, rpc, send } from "../../support/helpers";

/**
 * Property: whatever arrives (method, path, headers, body), on either binding, the answer
 * is never a 5xx, is well-formed for its binding, and an earlier task is left unchanged.
 * FUZZ_RUNS sets the number of cases (default 2,000: what CI runs).
 */
const setting = (name: "FUZZ_RUNS" | "FUZZ_SEED") =>
  (env as unknown as Record<string, string | undefined>)[name] || undefined;
const RUNS = Number(setting("FUZZ_RUNS") ?? 2000);
/** FUZZ_SEED replays a failing run (fast-check prints its seed). */
const SEED = Number(setting("FUZZ_SEED") ?? Date.now() % 2 ** 31);

type Json = Record<string, unknown>;
let earlier: Json;
let snapshot: string;

const stateOf = async (id: string) => {
  const task = (await rpc("GetTask", { id })).body.result as Json;
  return JSON.stringify({ status: task.status, artifacts: task.artifacts, history: task.history });
};

beforeAll(async () => {
  earlier = await send("the earlier task");
  snapshot = await stateOf(earlier.id as string);
});

const junk = fc.oneof(
  fc.string({ maxLength: 12 }),
  fc.constantFrom("%ED%A0%80", "%", "%zz", "..", "__proto__", "constructor", "a:b", "%2F", ""),
);

function taskIds() {
  const id = earlier.id as string;
  // The real id altered in one place (its seal no longer opens), and the older formats.
  const altered = `${id.slice(0, 8)}${id[8] === "A" ? "B" : "A"}${id.slice(9)}`;
  return fc.oneof(
    junk,
    fc.constant(id),
    fc.constant(altered),
    fc.constant(`${id.slice(0, 20)}.${"0".repeat(32)}`),
    fc.constant(`${id.slice(0, 20)}.${"0".repeat(32)}.AAAAAAAAAAAAAAAAAAAAAA`),
    fc.constant("x".repeat(600)),
  );
}

const paths = () =>
  fc
    .tuple(
      fc.option(junk, { nil: undefined }),
      fc.constantFrom(
        "/",
        "/message:send",
        "/message:stream",
        "/tasks",
        "/tasks/{id}",
        "/tasks/{id}:cancel",
        "/tasks/{id}:subscribe",
        "/tasks/{id}/pushNotificationConfigs",
        "/tasks/{id}/pushNotificationConfigs/{x}",
        "/tasks/{id}/deadLetters",
        "/tasks/{id}/deadLetters:redeliver",
        "/contexts/{x}/history",
        "/contexts/{x}/history:compact",
        "/extendedAgentCard",
        "/.well-known/agent-card.json",
        "/{x}",
      ),
      taskIds(),
      junk,
      fc.option(fc.constantFrom("?historyLength=-1", "?pageSize=abc", "?page_size=5", "?x=%"), {
        nil: undefined,
      }),
    )
    .map(([tenant, route, id, x, query]) => {
      const path = route
        .replace("{id}", encodeURIComponent(id))
        .replace("{x}", /%/.test(x) ? x : encodeURIComponent(x));
      const prefixed = tenant !== undefined && route !== "/" ? `/${tenant}${path}` : path;
      return prefixed + (query ?? "");
    });

const METHODS = [
  "SendMessage",
  "SendStreamingMessage",
  "GetTask",
  "ListTasks",
  "CancelTask",
  "SubscribeToTask",
  "CreateTaskPushNotificationConfig",
  "GetTaskPushNotificationConfig",
  "ListTaskPushNotificationConfigs",
  "DeleteTaskPushNotificationConfig",
  "GetExtendedAgentCard",
  "GetContextHistory",
  "CompactContextHistory",
  "message/send",
  "tasks/get",
  "tasks/resubscribe",
  "__proto__",
  "toString",
];

function params() {
  const message = fc.record(
    {
      messageId: fc.oneof(fc.string({ maxLength: 8 }), fc.integer()),
      role: fc.constantFrom("ROLE_USER", "ROLE_AGENT", "user", 3, null),
      parts: fc.oneof(
        fc.constant([{ text: "hi" }]),
        fc.array(fc.jsonValue({ maxDepth: 2 }), { maxLength: 3 }),
      ),
      taskId: taskIds(),
      metadata: fc.oneof(
        fc.jsonValue({ maxDepth: 3 }),
        fc.constant({ "edgelink/role": "system" }),
        fc.constant({ "edgelink/timestamp": "not-a-date" }),
      ),
    },
    { requiredKeys: [] },
  );
  return fc.oneof(
    fc.jsonValue({ maxDepth: 3 }),
    fc.record(
      {
        id: taskIds(),
        task_id: taskIds(),
        message,
        history_length: fc.oneof(fc.integer(), fc.string({ maxLength: 3 })),
        pageSize: fc.oneof(fc.integer(), fc.string({ maxLength: 3 })),
        tenant: junk,
        contextId: junk,
        configuration: fc.jsonValue({ maxDepth: 2 }),
      },
      { requiredKeys: [] },
    ),
  );
}

const bodies = () =>
  fc.oneof(
    fc
      .record(
        {
          jsonrpc: fc.constantFrom("2.0", "1.0", 2),
          id: fc.oneof(fc.integer(), fc.string({ maxLength: 5 }), fc.constant(null), fc.object()),
          method: fc.oneof(fc.constantFrom(...METHODS), fc.string({ maxLength: 10 })),
          params: params(),
        },
        { requiredKeys: ["jsonrpc", "method"] },
      )
      .map((v) => JSON.stringify(v)),
    params().map((v) => JSON.stringify(v)),
    fc.string({ maxLength: 40 }),
    fc.integer({ min: 100, max: 3000 }).map((depth) => `${"[".repeat(depth)}${"]".repeat(depth)}`),
    fc.constant(undefined),
  );

const headers = fc.record(
  {
    "Content-Type": fc.constantFrom(
      "application/json",
      "application/a2a+json",
      "text/plain",
      "application/json; charset=utf-8",
      "",
    ),
    "A2A-Version": fc.constantFrom("1.0", "0.3", "2.0", "x", "1.0.7"),
    "Last-Event-ID": fc.constantFrom("1", "-1", "abc", "99999999999999999999"),
    "A2A-Extensions": fc.string({ maxLength: 10 }),
  },
  { requiredKeys: [] },
);

const rpcBodies = () =>
  fc
    .record(
      {
        jsonrpc: fc.constantFrom("2.0", "2.0", "2.0", "1.0", 2),
        id: fc.oneof(fc.integer(), fc.string({ maxLength: 5 }), fc.constant(null), fc.object()),
        method: fc.oneof(fc.constantFrom(...METHODS), fc.string({ maxLength: 10 })),
        params: params(),
      },
      { requiredKeys: ["jsonrpc", "method"] },
    )
    .map((v) => JSON.stringify(v));

/** Half the cases are JSON-RPC calls (POST /, mostly well-typed), half anything at all. */
const requests = () =>
  fc.oneof(
    fc.record({
      method: fc.constant("POST"),
      path: fc.constantFrom("/", "/?A2A-Version=1.0"),
      headers: fc.record(
        {
          "Content-Type": fc.constantFrom("application/json", "application/a2a+json", "text/plain"),
          "A2A-Version": fc.constantFrom("1.0", "0.3", "9.9"),
          "Last-Event-ID": fc.constantFrom("1", "-1", "abc"),
        },
        { requiredKeys: ["Content-Type"] },
      ),
      body: fc.oneof(rpcBodies(), bodies()),
    }),
    fc.record({
      method: fc.constantFrom("GET", "POST", "PUT", "DELETE", "PATCH", "OPTIONS", "HEAD"),
      path: paths(),
      headers,
      body: bodies(),
    }),
  );

function isJsonRpcEnvelope(value: unknown): boolean {
  if (value === null || typeof value !== "object") return false;
  const v = value as Json;
  if (v.jsonrpc !== "2.0" || !("id" in v)) return false;
  if ("error" in v) {
    const error = v.error as Json;
    return typeof error.code === "number" && typeof error.message === "string";
  }
  return "result" in v;
}

describe("fuzz: hostile requests on both bindings (fast-check)", () => {
  it(`${RUNS} random requests: no 5xx, well-formed answers, an earlier task unchanged`, async () => {
    await fc.assert(
      fc.asyncProperty(requests(), async (req) => {
        const hasBody = req.body !== undefined && !["GET", "HEAD"].includes(req.method);
        const response = await SELF.fetch(`${BASE}${req.path}`, {
          method: req.method,
          headers: req.headers,
          body: hasBody ? req.body : undefined,
        });
        const label = `${req.method} ${req.path} -> ${response.status}`;
        expect(response.status, label).toBeLessThan(500);
        const type = response.headers.get("Content-Type") ?? "";
        if (type.startsWith("text/event-stream")) {
          await response.body?.cancel();
          return;
        }
        const text = await response.text();
        if (response.status === 204 || req.method === "HEAD" || req.method === "OPTIONS") return;
        const body = JSON.parse(text) as Json;
        const url = new URL(`${BASE}${req.path}`);
        if (url.pathname === "/" && req.method === "POST") {
          expect(isJsonRpcEnvelope(body), `${label} ${text.slice(0, 200)}`).toBe(true);
        } else if (response.status >= 400) {
          const error = body.error as Json;
          expect(error.code, label).toBe(response.status);
          expect(typeof error.message, label).toBe("string");
        }
      }),
      { numRuns: RUNS, seed: SEED },
    );
    expect(await stateOf(earlier.id as string)).toBe(snapshot);
  }, 600_000);
});

/** Any part a client could send: plain, or marked as one of Edgelink's own types. */
const anyPart = fc.oneof(
  fc.record({ text: fc.string({ maxLength: 8 }) }),
  fc.record({ url: fc.oneof(fc.webUrl(), fc.string({ maxLength: 8 })) }),
  fc.record({ raw: fc.oneof(fc.base64String({ maxLength: 8 }), fc.string({ maxLength: 8 })) }),
  fc.record({
    data: fc.jsonValue({ maxDepth: 3 }),
    metadata: fc.record(
      { "edgelink/part": fc.constantFrom("tool_call", "infer", "tool_output", "error", "x") },
      { requiredKeys: [] },
    ),
  }),
);

describe("fuzz: well-formed sends with any parts (fast-check)", () => {
  it(`${Math.ceil(RUNS / 20)} SendMessage calls with arbitrary parts: never a 5xx, never an internal error`, async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(anyPart, { minLength: 1, maxLength: 3 }), async (parts) => {
        const { status, body } = await rpc("SendMessage", {
          message: { messageId: "fuzz", role: "ROLE_USER", parts },
          configuration: { returnImmediately: true },
        });
        const text = JSON.stringify(body).slice(0, 300);
        expect(status, text).toBe(200);
        expect("result" in body || (body.error as Json).code !== -32603, text).toBe(true);
      }),
      {
        numRuns: Math.ceil(RUNS / 20),
        seed: SEED,
      },
    );
  }, 600_000);
});
