import * as z from "zod";
import { invalidParams } from "../models/errors";
import type { JsonObject } from "../models/json";
import type { ProtocolVersion } from "../models/requests";
import { masked, type PushConfig, pushConfigToV1, pushConfigToV03 } from "../push/config";
import type { Operations } from "./operations";

/** The four push-config operations, shared by the JSON-RPC and HTTP+JSON bindings. */
export type PushOperation = "pushCreate" | "pushGet" | "pushList" | "pushDelete";

const id = z.string().min(1, "is required");
const V1Ref = z.object({ taskId: id, id: id });
const V1List = z.object({
  taskId: id,
  pageSize: z.number().int().min(1).max(100).optional(),
  pageToken: z.string().optional(),
});
const V03Ref = z.object({ id: id, pushNotificationConfigId: z.string().optional() });

function parse<S extends z.ZodType>(schema: S, params: unknown): z.output<S> {
  const result = schema.safeParse(params ?? {});
  if (!result.success) throw invalidParams(result.error.issues, "params");
  return result.data;
}

/**
 * Runs one push-config operation with JSON-RPC params (v1 or v0.3 shapes) or the REST
 * equivalents, and renders the answer in that version's shape.
 */
export async function runPushOperation<Env>(
  ops: Operations<Env>,
  op: PushOperation,
  params: JsonObject,
  version: ProtocolVersion,
): Promise<unknown> {
  const toWire = version === "1.0" ? pushConfigToV1 : pushConfigToV03;
  const render = (config: PushConfig) => toWire(masked(config));
  switch (op) {
    case "pushCreate": {
      const taskId =
        typeof params.taskId === "string"
          ? params.taskId
          : parse(z.object({ taskId: id }), params).taskId;
      return render(await ops.createPushConfig(taskId, params, version, "params"));
    }
    case "pushGet": {
      if (version === "1.0") {
        const p = parse(V1Ref, params);
        return render(await ops.getPushConfig(p.taskId, p.id));
      }
      const p = parse(V03Ref, params);
      if (p.pushNotificationConfigId)
        return render(await ops.getPushConfig(p.id, p.pushNotificationConfigId));
      // v0.3 allowed asking without a config id: the task's first config.
      const { configs } = await ops.listPushConfigs(p.id, { pageSize: 1 });
      const first = configs[0];
      if (!first) return render(await ops.getPushConfig(p.id, "(none)"));
      return render(first);
    }
    case "pushList": {
      if (version === "1.0") {
        const p = parse(V1List, params);
        const page = await ops.listPushConfigs(p.taskId, {
          pageSize: p.pageSize ?? 100,
          pageToken: p.pageToken || undefined,
        });
        return { configs: page.configs.map(render), nextPageToken: page.nextPageToken };
      }
      const p = parse(V03Ref, params);
      return (await ops.listPushConfigs(p.id, { pageSize: 100 })).configs.map(render);
    }
    case "pushDelete": {
      if (version === "1.0") {
        const p = parse(V1Ref, params);
        await ops.deletePushConfig(p.taskId, p.id);
        return {};
      }
      const p = parse(V03Ref.extend({ pushNotificationConfigId: id }), params);
      await ops.deletePushConfig(p.id, p.pushNotificationConfigId);
      return null;
    }
  }
}
