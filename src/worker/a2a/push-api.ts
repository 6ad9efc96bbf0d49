import * as z from "zod";
import { invalidParams } from "../../protocol/errors";
import type { JsonObject } from "../../protocol/json";
import { ClientId, TaskIdString } from "../../protocol/limits";
import type { ProtocolVersion } from "../../protocol/wire/requests";
import { masked, type PushConfig, pushConfigToV1, pushConfigToV03 } from "../../push/config";
import type { Operations } from "./operations";

/**
 * The push-config operations' params (v1 and v0.3 shapes) and answers, for the operation
 * table. The HTTP+JSON binding builds the same params from its path, query and body.
 */

// Held to the limits of the ids they name (a config id is a client-chosen id, the page
// token the last config id of a page): one that could not exist is refused naming it.
const taskId = TaskIdString.min(1, "is required");
const configId = ClientId.min(1, "is required");
const V1Ref = z.object({ taskId, id: configId });
const V1List = z.object({
  taskId,
  pageSize: z.number().int().min(1).max(100).optional(),
  pageToken: ClientId.optional(),
});
const V03Ref = z.object({ id: taskId, pushNotificationConfigId: ClientId.optional() });
const V03Delete = V03Ref.extend({ pushNotificationConfigId: configId });
const CreateTaskId = z.object({ taskId });

function parse<S extends z.ZodType>(schema: S, params: unknown): z.output<S> {
  const result = schema.safeParse(params ?? {});
  if (!result.success) throw invalidParams(result.error.issues, "params");
  return result.data;
}

/** A config of a task; v0.3's get may leave the config out (then: the task's first). */
export interface PushRef {
  taskId: string;
  configId?: string;
}

export interface PushListParams {
  taskId: string;
  page: { pageSize: number; pageToken?: string };
}

/** Create: the whole params are the config; the task is `taskId`. */
export function parsePushCreate(params: JsonObject): { taskId: string; config: JsonObject } {
  return { taskId: parse(CreateTaskId, params).taskId, config: params };
}

/** Get and delete; only v0.3's get may leave the config out. */
export function parsePushRef(
  params: JsonObject,
  version: ProtocolVersion,
  op: "get" | "delete",
): PushRef {
  if (version === "1.0") {
    const p = parse(V1Ref, params);
    return { taskId: p.taskId, configId: p.id };
  }
  const p = parse(op === "get" ? V03Ref : V03Delete, params);
  return { taskId: p.id, configId: p.pushNotificationConfigId || undefined };
}

export function parsePushList(params: JsonObject, version: ProtocolVersion): PushListParams {
  if (version === "1.0") {
    const p = parse(V1List, params);
    return {
      taskId: p.taskId,
      page: { pageSize: p.pageSize ?? 100, pageToken: p.pageToken || undefined },
    };
  }
  return { taskId: parse(V03Ref, params).id, page: { pageSize: 100 } };
}

/** Get; v0.3 allowed asking without a config id: the task's first config. */
export async function getPushConfig<Env>(ops: Operations<Env>, ref: PushRef): Promise<PushConfig> {
  if (ref.configId) return ops.getPushConfig(ref.taskId, ref.configId);
  const { configs } = await ops.listPushConfigs(ref.taskId, { pageSize: 1 });
  return configs[0] ?? ops.getPushConfig(ref.taskId, "(none)");
}

/** A config as the version's wire shape, its secrets masked. */
export function renderPushConfig(config: PushConfig, version: ProtocolVersion): JsonObject {
  return (version === "1.0" ? pushConfigToV1 : pushConfigToV03)(masked(config));
}

/** A page of configs: v1's ListTaskPushNotificationConfigsResponse, v0.3's bare array. */
export function renderPushList(
  page: { configs: PushConfig[]; nextPageToken: string },
  version: ProtocolVersion,
): unknown {
  const configs = page.configs.map((c) => renderPushConfig(c, version));
  return version === "1.0" ? { configs, nextPageToken: page.nextPageToken } : configs;
}
