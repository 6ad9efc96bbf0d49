import type { JsonObject } from "../protocol/json";
import { messageToV1 } from "../protocol/wire/wire-v1";
import { messageToV03 } from "../protocol/wire/wire-v03";
import { pushToV1, pushToV03, toMessage } from "./convert";
import type { Version } from "./operations";
import type { MessageLike, SendOptions } from "./types";

/** What the client sends, in the version the agent speaks: the params of each call. */

/** SendMessage's and SendStreamingMessage's params. */
export function sendParams(
  version: Version,
  input: MessageLike,
  options: SendOptions,
  returnImmediately: boolean,
): JsonObject {
  const message = toMessage(input, options);
  const configuration: JsonObject = {};
  if (options.acceptedOutputModes) configuration.acceptedOutputModes = options.acceptedOutputModes;
  if (options.historyLength !== undefined) configuration.historyLength = options.historyLength;
  if (version === "1.0") {
    if (returnImmediately) configuration.returnImmediately = true;
    if (options.pushConfig) configuration.taskPushNotificationConfig = pushToV1(options.pushConfig);
  } else {
    configuration.blocking = !returnImmediately;
    if (options.pushConfig) configuration.pushNotificationConfig = pushToV03(options.pushConfig);
  }
  const params: JsonObject = {
    message: version === "1.0" ? messageToV1(message) : messageToV03(message),
  };
  if (Object.keys(configuration).length) params.configuration = configuration;
  if (options.metadata) params.metadata = options.metadata;
  return params;
}

/** `params` with a page's size and token, each when given. */
export function paged(
  params: JsonObject,
  pageSize: number | undefined,
  pageToken: string | undefined,
): JsonObject {
  if (pageSize !== undefined) params.pageSize = pageSize;
  if (pageToken) params.pageToken = pageToken;
  return params;
}

/** Names one push config of a task (get and delete). */
export function pushConfigRef(version: Version, taskId: string, id: string): JsonObject {
  return version === "1.0" ? { taskId, id } : { id: taskId, pushNotificationConfigId: id };
}
