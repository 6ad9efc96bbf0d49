import { env, SELF } from "cloudflare:test";
import { DEFAULT_LIMITS } from "../../src/agent/limits";
import { A2AError } from "../../src/protocol/errors";
import { indexObjectName, indexShardOf } from "../../src/storage/ids";

export const BASE = "http://agent.test";

type Json = Record<string, unknown>;

/** A JSON-RPC call; `version` null sends no A2A-Version header (a v0.3 client). */
export async function rpc(
  method: string,
  params: unknown = {},
  options: { version?: string | null; headers?: Record<string, string>; id?: unknown } = {},
): Promise<{ status: number; body: Json }> {
  const headers: Record<string, string> = {
    "Content-Type": "application/json",
    ...options.headers,
  };
  const version = options.version === undefined ? "1.0" : options.version;
  if (version !== null) headers["A2A-Version"] = version;
  const response = await SELF.fetch(`${BASE}/`, {
    method: "POST",
    headers,
    body: JSON.stringify({ jsonrpc: "2.0", id: options.id ?? 1, method, params }),
  });
  return { status: response.status, body: (await response.json()) as Json };
}

export async function rest(
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: Json; headers: Headers }> {
  const response = await SELF.fetch(`${BASE}${path}`, {
    method,
    headers: { "Content-Type": "application/json", ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  return {
    status: response.status,
    body: text ? (JSON.parse(text) as Json) : {},
    headers: response.headers,
  };
}

let counter = 0;
/** A v1 user message with one text part. */
export function userMessage(text: string, extra: Json = {}): Json {
  counter += 1;
  return {
    messageId: `m-${Date.now()}-${counter}`,
    role: "ROLE_USER",
    parts: [{ text }],
    ...extra,
  };
}

export interface SseEvent {
  id: number | undefined;
  data: Json;
}

/** Parses a complete SSE body into events; comments (keep-alives) are skipped. */
export function parseSse(text: string): SseEvent[] {
  return text
    .split("\n\n")
    .filter((frame) => frame.trim() !== "")
    .flatMap((frame) => {
      let id: number | undefined;
      let data = "";
      for (const line of frame.split("\n")) {
        if (line.startsWith("id: ")) id = Number(line.slice(4));
        else if (line.startsWith("data: ")) data += line.slice(6);
      }
      return data ? [{ id, data: JSON.parse(data) as Json }] : [];
    });
}

/** Reads SSE events from a live response until `count` events arrived or it ends. */
export async function readEvents(response: Response, count = Number.POSITIVE_INFINITY) {
  const reader = (response.body as ReadableStream<Uint8Array>).getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  const events: SseEvent[] = [];
  while (events.length < count) {
    const { done, value } = await reader.read();
    if (done) break;
    buffer += decoder.decode(value, { stream: true });
    const end = buffer.lastIndexOf("\n\n");
    if (end >= 0) {
      events.push(...parseSse(buffer.slice(0, end + 2)));
      buffer = buffer.slice(end + 2);
    }
  }
  return { events, reader };
}

/** Sends a blocking v1 SendMessage and returns the task JSON. */
export async function send(text: string, extra: Json = {}, configuration?: Json): Promise<Json> {
  const { body } = await rpc("SendMessage", { message: userMessage(text, extra), configuration });
  if (!body.result) throw new Error(`SendMessage failed: ${JSON.stringify(body.error)}`);
  return (body.result as { task: Json }).task;
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls GetTask until the task reaches `state` (or times out). */
export async function waitForState(taskId: string, state: string, timeoutMs = 5000): Promise<Json> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const { body } = await rpc("GetTask", { id: taskId });
    const task = body.result as Json;
    if ((task.status as Json).state === state) return task;
    if (Date.now() > deadline) throw new Error(`task ${taskId} never reached ${state}`);
    await sleep(50);
  }
}

/**
 * ListTasks until `done` accepts the result (or times out). Across conversations the tenant
 * index lags a change by up to `limits.indexFlushMs` (README, "Listing tasks"), so a test
 * listing what it just wrote waits for it, as a client would.
 */
export async function listUntil(
  params: Json,
  done: (result: { tasks: Json[]; totalSize: number }) => boolean,
  timeoutMs = 5000,
): Promise<{ tasks: Json[]; totalSize: number; nextPageToken: string }> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const { body } = await rpc("ListTasks", params);
    const result = body.result as { tasks: Json[]; totalSize: number; nextPageToken: string };
    if (!result) throw new Error(`ListTasks failed: ${JSON.stringify(body.error)}`);
    if (done(result)) return result;
    if (Date.now() > deadline) throw new Error(`ListTasks never showed what was expected`);
    await sleep(50);
  }
}

/** Text of all parts of an artifact JSON (v1). */
export function artifactText(task: Json, name?: string): string {
  const artifacts = (task.artifacts ?? []) as { name?: string; parts: { text?: string }[] }[];
  return artifacts
    .filter((a) => name === undefined || a.name === name)
    .flatMap((a) => a.parts.map((p) => p.text ?? ""))
    .join("");
}

/** The index shard holding a conversation's rows, at the demo agent's `limits.indexShards`. */
export function indexShardStub(contextId: string, tenant = "", owner = ""): DurableObjectStub {
  const shards = DEFAULT_LIMITS.indexShards;
  const name = indexObjectName(tenant, owner, indexShardOf(contextId, shards), shards);
  return env.EDGELINK_INDEX.get(env.EDGELINK_INDEX.idFromName(name));
}

/** The A2AError `run` throws; fails the test when it throws none (or something else). */
export function refusalOf(run: () => unknown): A2AError {
  try {
    run();
  } catch (error) {
    if (error instanceof A2AError) return error;
    throw error;
  }
  throw new Error("expected a refusal (an A2AError), got none");
}
