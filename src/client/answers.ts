import * as z from "zod";
import { Item } from "../history/items";
import type { TaskEvent } from "../protocol/events";
import type { JsonValue } from "../protocol/json";
import type { Task } from "../protocol/task";
import { taskFromV1, V1Task } from "../protocol/wire/wire-v1";
import { taskFromV03, V03Task } from "../protocol/wire/wire-v03";
import { eventFromV03, V03StreamEvent } from "../protocol/wire/wire-v03-events";
import { streamResponseToEvent, V1StreamResponse } from "../push/stream-response";
import { compactConfig, isObj, read } from "./convert";
import { invalidResponse } from "./errors";
import type { Version } from "./operations";
import type { PushNotificationConfig, SendResult } from "./types";

/**
 * What an agent answers, read in the version it speaks into the client's shapes. A
 * malformed answer is an `InvalidAgentResponseError` naming the field (see `read`).
 */

const V1PushConfig = z.object({
  id: z.string().default(""),
  taskId: z.string().default(""),
  url: z.string(),
  token: z.string().optional(),
  authentication: z.object({ scheme: z.string(), credentials: z.string().optional() }).optional(),
});
const V03PushConfig = z.object({
  taskId: z.string(),
  pushNotificationConfig: z.object({
    id: z.string().default(""),
    url: z.string(),
    token: z.string().optional(),
    authentication: z
      .object({ schemes: z.array(z.string()), credentials: z.string().optional() })
      .optional(),
  }),
});

/** A page of ListTasks; its tasks are read by `taskOf`. */
export const TaskListPage = z.object({
  tasks: z.array(z.unknown()).default([]),
  nextPageToken: z.string().default(""),
  pageSize: z.number().optional(),
  totalSize: z.number().optional(),
});

const PushConfigPage = z.object({
  configs: z.array(z.unknown()).default([]),
  nextPageToken: z.string().default(""),
});

/** A page of a conversation's history (an Edgelink call). */
export const HistoryPageAnswer = z.object({
  items: z.array(Item),
  nextPageToken: z.string().default(""),
  totalSize: z.number().optional(),
});

/** A task's dead-lettered webhook deliveries (an Edgelink call). */
export const DeadLettersAnswer = z.object({
  deliveries: z.array(z.record(z.string(), z.unknown())),
});

/** What a compaction did (an Edgelink call). */
export const CompactionAnswer = z.object({
  strategy: z.enum(["recent", "tokens", "summary"]),
  beforeMessages: z.number(),
  afterMessages: z.number(),
  removed: z.number(),
  beforeTokens: z.number(),
  afterTokens: z.number(),
  summaryCreated: z.boolean(),
});

export function taskOf(version: Version, raw: JsonValue | undefined): Task {
  return version === "1.0"
    ? taskFromV1(read(V1Task, raw, "task"))
    : taskFromV03(read(V03Task, raw, "task"));
}

export function eventOf(version: Version, raw: JsonValue): TaskEvent {
  return version === "1.0"
    ? streamResponseToEvent(read(V1StreamResponse, raw, "stream event"))
    : eventFromV03(read(V03StreamEvent, raw, "stream event"));
}

/** SendMessage's answer: a task, or a message from an agent that answers directly. */
export function sendResultOf(version: Version, raw: JsonValue): SendResult {
  if (version === "1.0") {
    if (isObj(raw) && raw.message !== undefined && raw.task === undefined) {
      const event = eventOf(version, raw);
      if (event.kind === "message") return { kind: "message", message: event.message };
    }
    const body = isObj(raw) && raw.task !== undefined ? raw.task : raw;
    return { kind: "task", task: taskOf(version, body) };
  }
  const event = eventOf(version, raw);
  if (event.kind === "message") return event;
  if (event.kind === "task") return event;
  throw invalidResponse(`SendMessage answered a ${event.kind} event instead of a task or message`);
}

export function pushConfigOf(version: Version, raw: JsonValue | undefined): PushNotificationConfig {
  if (version === "1.0") {
    const c = read(V1PushConfig, raw, "push config");
    return compactConfig({ ...c });
  }
  const c = read(V03PushConfig, raw, "push config");
  const p = c.pushNotificationConfig;
  return compactConfig({
    id: p.id,
    taskId: c.taskId,
    url: p.url,
    token: p.token,
    authentication: p.authentication && {
      scheme: p.authentication.schemes[0] ?? "",
      ...(p.authentication.credentials ? { credentials: p.authentication.credentials } : {}),
    },
  });
}

/** A page of a task's push configs; a v0.3 agent answers all of them as one list. */
export function pushConfigPageOf(
  version: Version,
  raw: JsonValue,
): { configs: PushNotificationConfig[]; nextPageToken: string } {
  const page =
    version === "1.0"
      ? read(PushConfigPage, raw, "push config list")
      : { configs: read(z.array(z.unknown()), raw, "push config list"), nextPageToken: "" };
  return {
    configs: page.configs.map((c) => pushConfigOf(version, c as JsonValue)),
    nextPageToken: page.nextPageToken,
  };
}
