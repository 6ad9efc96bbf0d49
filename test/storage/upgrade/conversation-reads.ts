/**
 * Every read a client can make of one conversation, as JSON: what an upgrade must answer
 * the same. Run against a conversation written by an earlier schema (and recorded there),
 * then against the same rows opened by this release.
 */
import { SELF } from "cloudflare:test";
import { BASE, readEvents, rest, rpc } from "../../support/helpers";

type Json = Record<string, unknown>;

/** The tasks of the recorded conversation, by what they hold. */
export interface ConversationTasks {
  contextId: string;
  /** Completed, its answer streamed into one artifact in several chunks. */
  streamed: string;
  /** Waiting for input, with a webhook config. */
  waiting: string;
  /** A second completed task of the same conversation. */
  followUp: string;
  /** More tasks, each read as the three above (recorded since version 6). */
  others?: string[];
}

/** A stream's first `count` events (the stream of a live task stays open). */
async function subscribe(taskId: string, count: number, lastEventId?: string): Promise<Json[]> {
  const response = await SELF.fetch(`${BASE}/`, {
    method: "POST",
    headers: {
      "Content-Type": "application/json",
      "A2A-Version": "1.0",
      ...(lastEventId === undefined ? {} : { "Last-Event-ID": lastEventId }),
    },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 9,
      method: "SubscribeToTask",
      params: { id: taskId },
    }),
  });
  if (!response.headers.get("Content-Type")?.includes("text/event-stream")) {
    return [{ status: response.status, body: (await response.json()) as Json }];
  }
  const { events, reader } = await readEvents(response, count);
  await reader.cancel();
  return events.map((e) => ({ id: e.id, data: e.data }));
}

/** The answers of every read of the conversation's tasks, history and webhook configs. */
export async function conversationReads(t: ConversationTasks): Promise<Json> {
  const tasks = [t.streamed, t.waiting, t.followUp, ...(t.others ?? [])];
  const got: Json = {};
  for (const [i, id] of tasks.entries()) {
    got[`getTask${i}`] = (await rpc("GetTask", { id })).body;
    got[`getTask${i}Last1`] = (await rpc("GetTask", { id, historyLength: 1 })).body;
    got[`rest${i}`] = (await rest("GET", `/tasks/${id}`)).body;
  }
  const first = (await rpc("ListTasks", { contextId: t.contextId, pageSize: 2 })).body;
  got.listFirst = first;
  const token = ((first.result as Json)?.nextPageToken as string) ?? "";
  got.listSecond = (
    await rpc("ListTasks", { contextId: t.contextId, pageSize: 2, pageToken: token })
  ).body;
  got.listAll = (await rpc("ListTasks", { contextId: t.contextId, pageSize: 50 })).body;
  got.listCompleted = (
    await rpc("ListTasks", { contextId: t.contextId, status: "TASK_STATE_COMPLETED" })
  ).body;
  got.listWithArtifacts = (
    await rpc("ListTasks", { contextId: t.contextId, includeArtifacts: true, historyLength: 5 })
  ).body;
  got.history = (await rest("GET", `/contexts/${t.contextId}/history?pageSize=200`)).body;
  got.historyPaged = (await rest("GET", `/contexts/${t.contextId}/history?pageSize=2`)).body;
  got.subscribeWaiting = await subscribe(t.waiting, 1);
  got.replayWaiting = await subscribe(t.waiting, 3, "0");
  got.replayStreamed = await subscribe(t.streamed, 50, "0");
  got.replayFollowUp = await subscribe(t.followUp, 50, "0");
  for (const [i, id] of (t.others ?? []).entries()) {
    got[`replayOther${i}`] = await subscribe(id, 200, "0");
  }
  got.pushConfigs = (await rest("GET", `/tasks/${t.waiting}/pushNotificationConfigs`)).body;
  got.pushConfigsNone = (await rest("GET", `/tasks/${t.streamed}/pushNotificationConfigs`)).body;
  return got;
}
