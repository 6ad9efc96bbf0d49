/**
 * Scenario (e): the on-platform alternative. The official A2A JavaScript SDK
 * (@a2a-js/sdk) serving the same instant echo agent (bench/sdk-echo.mjs) inside a Durable
 * Object per conversation, its tasks kept in that object's SQLite: the SDK's
 * `DefaultRequestHandler` and `JsonRpcTransportHandler` as its Express binding uses them,
 * over a `TaskStore` that writes each task as one JSON row (an upsert per save, as the
 * SDK's own database store does). What it keeps durable is the task alone: no separate
 * conversation history, no event log, no index across conversations.
 *
 * The Worker in front is the floor's (bench/floor-worker.ts): a Hono route that reads the
 * JSON-RPC body, picks the object by the message's context id, makes one RPC, and
 * answers what the object returns. A plain `DurableObject`, not the `agents` package's
 * `Agent` (which adds its own routing and state tables): a lower bound of what such an
 * alternative costs.
 */

import { DurableObject } from "cloudflare:workers";
import type { Task } from "@a2a-js/sdk";
import {
  DefaultRequestHandler,
  defaultServerCallContextBuilder,
  JsonRpcTransportHandler,
  type ServerCallContext,
  type TaskStore,
  UnauthenticatedUser,
} from "@a2a-js/sdk/server";
import { Hono } from "hono";
import { agentCard, echoExecutor } from "./sdk-echo.mjs";
import { createTaskRows, loadTaskRow, saveTaskRow } from "./sdk-task-rows";

interface Env {
  SDK_CONTEXT: DurableObjectNamespace<SdkContext>;
}

/** One conversation's tasks, each a JSON row (bench/sdk-task-rows.ts). */
class SqlTaskStore implements TaskStore {
  constructor(private readonly sql: SqlStorage) {
    createTaskRows(sql);
  }

  async save(task: Task, _context: ServerCallContext): Promise<void> {
    saveTaskRow(this.sql, task.id, task.contextId, JSON.stringify(task));
  }

  async load(taskId: string, _context: ServerCallContext): Promise<Task | undefined> {
    return loadTaskRow(this.sql, taskId) as Task | undefined;
  }

  async list(): Promise<never> {
    throw new Error("ListTasks is not part of this benchmark");
  }
}

export class SdkContext extends DurableObject<Env> {
  private readonly transport: JsonRpcTransportHandler;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    const store = new SqlTaskStore(ctx.storage.sql);
    const handler = new DefaultRequestHandler(agentCard, store, echoExecutor);
    this.transport = new JsonRpcTransportHandler(handler);
  }

  /** One JSON-RPC call (its parsed body), answered as the JSON-RPC response's text. */
  async call(body: Record<string, unknown>, requestedVersion: string | undefined): Promise<string> {
    const context = defaultServerCallContextBuilder({
      extensions: undefined,
      user: new UnauthenticatedUser(),
      headers: {},
      requestedVersion,
    });
    const answer = await this.transport.handle(body, context);
    if (answer && typeof answer === "object" && Symbol.asyncIterator in answer) {
      throw new Error("a streaming method goes to stream()");
    }
    return JSON.stringify(answer);
  }

  /**
   * One streaming JSON-RPC call (SendStreamingMessage): its events as SSE frames, one
   * `data:` line of each JSON-RPC response, as the SDK's Express binding writes them.
   */
  async stream(
    body: Record<string, unknown>,
    requestedVersion: string | undefined,
  ): Promise<ReadableStream<Uint8Array>> {
    const context = defaultServerCallContextBuilder({
      extensions: undefined,
      user: new UnauthenticatedUser(),
      headers: {},
      requestedVersion,
    });
    const answer = await this.transport.handle(body, context);
    const encoder = new TextEncoder();
    if (!(answer && typeof answer === "object" && Symbol.asyncIterator in answer)) {
      // An error answered before the stream: one frame.
      const frame = encoder.encode(`data: ${JSON.stringify(answer)}\n\n`);
      return new ReadableStream({
        start(controller) {
          controller.enqueue(frame);
          controller.close();
        },
      });
    }
    const events = (answer as AsyncIterable<unknown>)[Symbol.asyncIterator]();
    return new ReadableStream({
      async pull(controller) {
        const next = await events.next();
        if (next.done) controller.close();
        else controller.enqueue(encoder.encode(`data: ${JSON.stringify(next.value)}\n\n`));
      },
      async cancel() {
        await events.return?.();
      },
    });
  }
}

type Rpc = Record<string, unknown> & {
  method?: string;
  params?: { message?: { contextId?: string } };
};

const app = new Hono<{ Bindings: Env }>();

app.post("/", async (c) => {
  const body = await c.req.json<Rpc>();
  const contextId = body.params?.message?.contextId ?? crypto.randomUUID();
  const ns = c.env.SDK_CONTEXT;
  const stub = ns.get(ns.idFromName(`/${contextId}`));
  const version = c.req.header("A2A-Version") ?? undefined;
  if (body.method === "SendStreamingMessage") {
    const events = await stub.stream(body, version);
    return new Response(events, {
      headers: { "Content-Type": "text/event-stream", "Cache-Control": "no-cache" },
    });
  }
  const answer = await stub.call(body, version);
  return c.body(answer, 200, { "Content-Type": "application/json" });
});

export default app;
