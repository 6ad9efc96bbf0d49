/**
 * Scenario (p): the on-platform peer a user would pick instead of Edgelink, built as
 * cloudflare/agents' A2A example builds it. An `Agent` Durable Object from the `agents`
 * package serves the official A2A JavaScript SDK (@a2a-js/sdk): the SDK's
 * `DefaultRequestHandler` and `JsonRpcTransportHandler` over a `TaskStore` keeping each
 * task as one JSON row in the object's SQLite (`INSERT OR REPLACE` of the whole task at
 * every save, as the example's store does), behind the Agent's own `fetch` and its
 * `onRequest` hook. The Worker in front reaches the object with the package's
 * `getAgentByName` (which first makes the object start its lifecycle, an RPC) and then
 * `stub.fetch(request)`.
 *
 * Two departures from the example, both so that it gets the same traffic and the same
 * agent as scenario (e) and Edgelink:
 * - the executor is the instant echo of bench/sdk-echo.mjs, not a Workers AI call;
 * - the object is named by the message's context id (one object per conversation, as
 *   (e) and Edgelink do), where the example sends every request to one object named
 *   "default". The Worker therefore reads the body once to find the context id.
 *
 * The SDK is the project's @a2a-js/sdk 1.x (the example pins 0.3), which serves the v1
 * JSON-RPC `SendMessage` every scenario receives.
 */

import {
  DefaultRequestHandler,
  defaultServerCallContextBuilder,
  JsonRpcTransportHandler,
  type TaskStore,
  UnauthenticatedUser,
} from "@a2a-js/sdk/server";
import { Agent, getAgentByName } from "agents";
import { agentCard, echoExecutor } from "./sdk-echo.mjs";

interface Env {
  PEER_AGENT: DurableObjectNamespace<PeerAgent>;
}

type StoredTask = Parameters<TaskStore["save"]>[0];

/** The example's store shape: one table, the task's JSON replaced whole at each save. */
class JsonRowTaskStore implements TaskStore {
  constructor(private readonly sql: SqlStorage) {
    sql.exec("CREATE TABLE IF NOT EXISTS a2a_tasks (id TEXT PRIMARY KEY, data TEXT NOT NULL)");
  }

  async save(task: StoredTask): Promise<void> {
    this.sql.exec(
      "INSERT OR REPLACE INTO a2a_tasks (id, data) VALUES (?, ?)",
      task.id,
      JSON.stringify(task),
    );
  }

  async load(taskId: string): Promise<StoredTask | undefined> {
    const row = this.sql
      .exec<{ data: string }>("SELECT data FROM a2a_tasks WHERE id = ?", taskId)
      .toArray()[0];
    return row ? (JSON.parse(row.data) as StoredTask) : undefined;
  }

  async list(): Promise<never> {
    throw new Error("ListTasks is not part of this benchmark");
  }
}

/** One conversation's agent: the SDK's JSON-RPC handler behind the Agent's `onRequest`. */
export class PeerAgent extends Agent<Env> {
  private readonly transport: JsonRpcTransportHandler;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    const handler = new DefaultRequestHandler(
      agentCard,
      new JsonRowTaskStore(ctx.storage.sql),
      echoExecutor,
    );
    this.transport = new JsonRpcTransportHandler(handler);
  }

  override async onRequest(request: Request): Promise<Response> {
    if (request.method !== "POST") return new Response("Not Found", { status: 404 });
    const body = await request.json<Record<string, unknown>>();
    const context = defaultServerCallContextBuilder({
      extensions: undefined,
      user: new UnauthenticatedUser(),
      headers: {},
      requestedVersion: request.headers.get("A2A-Version") ?? undefined,
    });
    const answer = await this.transport.handle(body, context);
    if (answer && typeof answer === "object" && Symbol.asyncIterator in answer) {
      // Only blocking SendMessage is measured here.
      return new Response("streaming is not part of this scenario", { status: 400 });
    }
    return Response.json(answer);
  }
}

export default {
  async fetch(request: Request, env: Env): Promise<Response> {
    if (request.method !== "POST") return new Response("Not Found", { status: 404 });
    const text = await request.text();
    const body = JSON.parse(text) as { params?: { message?: { contextId?: string } } };
    const name = body.params?.message?.contextId ?? crypto.randomUUID();
    const agent = await getAgentByName(env.PEER_AGENT, name);
    return agent.fetch(
      new Request(request.url, { method: "POST", headers: request.headers, body: text }),
    );
  },
} satisfies ExportedHandler<Env>;
