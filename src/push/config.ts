import * as z from "zod";
import { invalidParams } from "../protocol/errors";
import { compact, type JsonObject } from "../protocol/json";
import type { ProtocolVersion } from "../protocol/wire/requests";
import { checkWebhookUrl } from "./url-policy";

/**
 * Push notification configs as clients send them (A2A v1.0 `TaskPushNotificationConfig`,
 * v0.3 `TaskPushNotificationConfig` / `PushNotificationConfig`) and the one internal
 * `PushConfig` both map to.
 */

/** How the agent authenticates to the webhook: `Authorization: <scheme> <credentials>`. */
export interface PushAuthentication {
  /** An HTTP auth scheme (Bearer, Basic, …); case-insensitive per RFC 9110 §11.1. */
  scheme: string;
  credentials?: string;
}

/** A config as parsed from a request: the id may be absent (server-assigned) and so may
 * the task id (inline in SendMessage, where the task does not exist yet). */
export interface PushConfigInput {
  id?: string;
  taskId?: string;
  /** Normalized by the URL policy (`URL.href`); also the `aud` of delivery signatures. */
  url: string;
  token?: string;
  authentication?: PushAuthentication;
  /** The protocol version the client registered with; decides the payload shape. */
  protocolVersion: ProtocolVersion;
}

/** A stored config: id and task known. */
export interface PushConfig extends PushConfigInput {
  id: string;
  taskId: string;
}

// Scheme, token and credentials end up in request headers: refuse what a header cannot
// carry (CR/LF would be header injection; Headers would throw at delivery time anyway).
const HEADER_SAFE = /^[\t\x20-\x7e\x80-\xff]*$/;
// RFC 9110 token: what an auth-scheme may be made of.
const HTTP_TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
// A config id travels as a path segment (/tasks/{id}/pushNotificationConfigs/{configId}).
const PATH_SEGMENT_SAFE = /^[^/:?#\s\\]+$/;

const ConfigId = z
  .string()
  .min(1, "must not be empty")
  .max(256, "must be at most 256 characters")
  .regex(PATH_SEGMENT_SAFE, "must not contain /, :, ?, #, \\ or whitespace");
// ProtoJSON writers may send "" for an unset string; "" means "let the server choose".
const OptionalId = z.union([z.literal(""), ConfigId]).optional();
const TaskId = z.string().max(1024);
const Url = z.string().min(1, "url is required").max(2048, "must be at most 2048 characters");
const Token = z
  .string()
  .max(1024, "must be at most 1024 characters")
  .regex(HEADER_SAFE, "must not contain control characters");
const Scheme = z
  .string()
  .min(1, "scheme is required")
  .max(64, "must be at most 64 characters")
  .regex(HTTP_TOKEN, "must be an HTTP authentication scheme such as Bearer or Basic");
const Credentials = z
  .string()
  .max(4096, "must be at most 4096 characters")
  .regex(HEADER_SAFE, "must not contain control characters");

/** v1 `AuthenticationInfo`. */
export const V1AuthenticationInfo = z.object({
  scheme: Scheme,
  credentials: Credentials.optional(),
});

/** v1 `TaskPushNotificationConfig` (also the inline `configuration.taskPushNotificationConfig`). */
export const V1TaskPushNotificationConfig = z.object({
  tenant: z.string().optional(),
  id: OptionalId,
  taskId: TaskId.optional(),
  url: Url,
  token: Token.optional(),
  authentication: V1AuthenticationInfo.optional(),
});

/** v0.3 `PushNotificationAuthenticationInfo`: a list of schemes; the first one is used. */
export const V03AuthenticationInfo = z.object({
  schemes: z.array(Scheme).min(1, "at least one scheme is required").max(16, "at most 16 schemes"),
  credentials: Credentials.optional(),
});

/** v0.3 `PushNotificationConfig` (also the inline `configuration.pushNotificationConfig`). */
export const V03PushNotificationConfig = z.object({
  id: OptionalId,
  url: Url,
  token: Token.optional(),
  authentication: V03AuthenticationInfo.optional(),
});

/** v0.3 `TaskPushNotificationConfig` (`tasks/pushNotificationConfig/set` params). */
export const V03TaskPushNotificationConfig = z.object({
  taskId: TaskId.optional(),
  pushNotificationConfig: V03PushNotificationConfig,
});

export interface ParsePushConfigOptions {
  version: ProtocolVersion;
  /** Webhook URL policy: the dev/test setting (see `checkWebhookUrl`). */
  allowLocalhost: boolean;
  /**
   * The task the request addresses (the REST path's `{id}`); the body's taskId, when
   * present, must match. Omit for an inline config, whose task does not exist yet.
   */
  taskId?: string;
  /**
   * Inline in SendMessage: v1 `configuration.taskPushNotificationConfig`, v0.3
   * `configuration.pushNotificationConfig` (a bare PushNotificationConfig).
   */
  inline?: boolean;
  /** Prefix for the field names in errors, e.g. `configuration.taskPushNotificationConfig`. */
  prefix?: string;
}

/**
 * Parses a push config in the client's version and checks its webhook URL.
 * @throws A2AError `InvalidParams` naming every bad field (prefixed by `options.prefix`).
 * @example
 * parsePushConfig(
 *   { taskId: "t1", url: "https://hooks.example.com/a2a", authentication: { scheme: "Bearer", credentials: "s3cret" } },
 *   { version: "1.0", allowLocalhost: false },
 * ); // { taskId: "t1", url: "https://hooks.example.com/a2a", authentication: {...}, protocolVersion: "1.0" }
 */
export function parsePushConfig(input: unknown, options: ParsePushConfigOptions): PushConfigInput {
  const prefix = options.prefix ?? "";
  const fieldOf = (name: string) => [prefix, name].filter(Boolean).join(".");
  let parsed: PushConfigInput;
  let urlField: string;
  const taskIdField = fieldOf("taskId");

  if (options.version === "1.0") {
    const result = V1TaskPushNotificationConfig.safeParse(input);
    if (!result.success) throw invalidParams(result.error.issues, prefix);
    const c = result.data;
    parsed = compact({
      id: c.id || undefined,
      taskId: c.taskId || undefined,
      url: c.url,
      token: c.token || undefined,
      authentication:
        c.authentication &&
        compact({
          scheme: c.authentication.scheme,
          credentials: c.authentication.credentials || undefined,
        }),
      protocolVersion: "1.0" as const,
    });
    urlField = fieldOf("url");
  } else if (options.inline) {
    const result = V03PushNotificationConfig.safeParse(input);
    if (!result.success) throw invalidParams(result.error.issues, prefix);
    parsed = fromV03(result.data, undefined);
    urlField = fieldOf("url");
  } else {
    const result = V03TaskPushNotificationConfig.safeParse(input);
    if (!result.success) throw invalidParams(result.error.issues, prefix);
    parsed = fromV03(result.data.pushNotificationConfig, result.data.taskId || undefined);
    urlField = fieldOf("pushNotificationConfig.url");
  }

  if (options.taskId !== undefined) {
    if (parsed.taskId !== undefined && parsed.taskId !== options.taskId) {
      throw invalidParams([
        { path: [taskIdField], message: `does not match the task addressed (${options.taskId})` },
      ]);
    }
    parsed.taskId = options.taskId;
  }
  parsed.url = checkWebhookUrl(parsed.url, {
    allowLocalhost: options.allowLocalhost,
    field: urlField,
  }).href;
  return parsed;
}

function fromV03(
  c: z.output<typeof V03PushNotificationConfig>,
  taskId: string | undefined,
): PushConfigInput {
  const auth = c.authentication;
  return compact({
    id: c.id || undefined,
    taskId,
    url: c.url,
    token: c.token || undefined,
    // v0.3 lists the schemes the webhook accepts; one Authorization header uses the first.
    authentication:
      auth &&
      compact({ scheme: auth.schemes[0] ?? "", credentials: auth.credentials || undefined }),
    protocolVersion: "0.3" as const,
  });
}

/**
 * A stored config as v1 `TaskPushNotificationConfig` JSON (Create/Get/List answers).
 * @example
 * pushConfigToV1(config); // { id, taskId, url, token?, authentication?: { scheme, credentials? } }
 */
export function pushConfigToV1(config: PushConfig): JsonObject {
  return compact({
    id: config.id,
    taskId: config.taskId,
    url: config.url,
    token: config.token,
    authentication: config.authentication && compact({ ...config.authentication }),
  });
}

/**
 * A stored config as v0.3 `TaskPushNotificationConfig` JSON.
 * @example
 * pushConfigToV03(config); // { taskId, pushNotificationConfig: { id, url, token?, authentication?: { schemes: [scheme], credentials? } } }
 */
export function pushConfigToV03(config: PushConfig): JsonObject {
  const auth = config.authentication;
  return {
    taskId: config.taskId,
    pushNotificationConfig: compact({
      id: config.id,
      url: config.url,
      token: config.token,
      authentication: auth && compact({ schemes: [auth.scheme], credentials: auth.credentials }),
    }),
  };
}

/** What a read shows instead of a stored token or credential. */
export const MASK = "********";

/**
 * A config as clients may read it back: its token and credentials masked (they are
 * secrets shared with the webhook, and anyone who can read the task must not learn them).
 * @example
 * pushConfigToV1(masked(config)); // { ..., token: "********" }
 */
export function masked(config: PushConfig): PushConfig {
  return compact({
    ...config,
    token: config.token === undefined ? undefined : MASK,
    authentication:
      config.authentication &&
      compact({
        ...config.authentication,
        credentials: config.authentication.credentials === undefined ? undefined : MASK,
      }),
  });
}

/**
 * Gives a parsed config its task and id (a new UUID unless the client chose one).
 * @example
 * const config = resolvePushConfig(parsed, { taskId: task.id });
 */
export function resolvePushConfig(
  input: PushConfigInput,
  ids: { taskId: string; id?: string },
): PushConfig {
  return { ...input, taskId: ids.taskId, id: input.id ?? ids.id ?? crypto.randomUUID() };
}
