import type { Context } from "hono";
import type { Agent } from "../../agent/definition";
import { A2AError } from "../../protocol/errors";
import { newId } from "../../protocol/json";
import { clientIdProblem } from "../../protocol/limits";
import { SSE_HEADERS } from "../../protocol/sse";
import { parseSend, parseTaskId } from "../../protocol/wire/requests";
import type { StreamFormat } from "../../protocol/wire/stream";
import type { AuthVariables } from "../auth";
import { readJson } from "../body";
import { restError, toA2AError } from "../errors";
import type { ScopeVariables } from "../route-scope";
import { nameOperation, requestTrace } from "../tracing";
import { asChatDecisionError, chatDecisionMessage, isChatDecision } from "./chat-decision";
import { Operations } from "./operations";
import { lastEventId } from "./request-parts";
import { checkPathEncoding } from "./rest";

/**
 * The chat endpoint, a streaming view for browser and app front ends beside A2A:
 *
 * - `POST /chat` (or `/{tenant}/chat`) with `{"message": "text" | <A2A v1 message>,
 *   "sessionId"?: <context id>}` starts a task exactly as `SendStreamingMessage` would
 *   and streams it as `event: start | chunk | tool_call | tool_result | done | error`
 *   frames, each with an `id:`; a task that waits for decisions on held calls also sends
 *   `approval {taskId, calls, waiting}` before its `done`.
 * - `POST /chat` with `{"taskId", "decisions": [...]}` answers those calls (see
 *   `chatDecisionMessage`): the A2A decision message, streamed as the task goes on.
 * - `GET /chat/{taskId}` (or `/{tenant}/chat/{taskId}`) with `Last-Event-ID` resumes after
 *   that event (an `EventSource` reconnects this way); without it, replays the task's
 *   events from its start.
 *
 * It is a view of the same task and event log, not a second execution path: the task is
 * visible over A2A too (`GetTask`, `SubscribeToTask`), and the chat `sessionId` is its
 * `contextId`. These are its two routes' handlers (mounted from the route table).
 */
export function chatHandlers<Env extends object>(
  agent: Agent<Env>,
): {
  start: (c: ChatContext<Env>) => Promise<Response>;
  resume: (c: ChatContext<Env>) => Promise<Response>;
} {
  type C = ChatContext<Env>;
  const format: StreamFormat = {
    version: "1.0",
    binding: "chat",
    model: agent.model?.model ?? null,
  };
  const ops = (c: C, operation: "stream" | "subscribe") => {
    checkPathEncoding(new URL(c.req.url).pathname);
    const trace = requestTrace(c.req.raw);
    nameOperation(trace, operation === "stream" ? "SendStreamingMessage" : "SubscribeToTask", {
      spanName: `chat ${operation}`,
    });
    const origin = new URL(c.req.url).origin;
    return new Operations(agent, c.env, c.get("scope"), origin, trace);
  };

  const start = (c: C) =>
    serve(async () => {
      // The tenant was checked by the route's scoping guard (403 whatever the body holds).
      const operations = ops(c, "stream");
      const body = await readJson(c.req.raw);
      if (!isChatDecision(body)) {
        const { params, contextField } = parseChatRequest(body);
        return operations.streamMessage(params, format, contextField);
      }
      // A decision on the calls a task holds: the A2A decision message, checked as one.
      const { sessionId, ...decision } = body as Record<string, unknown>;
      const { params, contextField } = parseChatRequest({
        message: chatDecisionMessage(decision),
        ...(sessionId === undefined ? {} : { sessionId }),
      });
      return operations
        .streamMessage(params, format, contextField)
        .catch((error: unknown) => Promise.reject(asChatDecisionError(toA2AError(error))));
    });
  const resume = (c: C) =>
    serve(() =>
      ops(c, "subscribe").subscribe(
        parseTaskId({ id: c.req.param("taskId") }),
        format,
        lastEventId(c.req.raw) ?? 0,
      ),
    );
  return { start, resume };
}

type ChatContext<Env extends object> = Context<{
  Bindings: Env;
  Variables: AuthVariables & ScopeVariables;
}>;

async function serve(open: () => Promise<ReadableStream>): Promise<Response> {
  try {
    return new Response(await open(), { headers: SSE_HEADERS });
  } catch (error) {
    return restError(toA2AError(error));
  }
}

/**
 * `{message, sessionId?}` as SendStreamingMessage params; a bad field is a 400 naming it.
 * `contextField` is the field that named the context id, so a refused one (not issued
 * here, or client-chosen with `clientContextIds: false`) is reported as the client sent it.
 */
export function parseChatRequest(body: unknown): {
  params: ReturnType<typeof parseSend>;
  contextField: string;
} {
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    throw invalid("body", "must be a JSON object with a message");
  }
  const { message, sessionId } = body as { message?: unknown; sessionId?: unknown };
  if (sessionId !== undefined && (typeof sessionId !== "string" || sessionId === "")) {
    throw invalid("sessionId", "must be a non-empty string (a context id)");
  }
  const problem = typeof sessionId === "string" ? clientIdProblem(sessionId) : null;
  if (problem !== null) throw invalid("sessionId", problem);
  let wire: Record<string, unknown>;
  if (typeof message === "string") {
    if (message === "") throw invalid("message", "must not be empty");
    wire = { messageId: newId(), role: "ROLE_USER", parts: [{ text: message }] };
  } else if (typeof message === "object" && message !== null && !Array.isArray(message)) {
    wire = { ...(message as Record<string, unknown>) };
    const own = wire.contextId;
    if (sessionId !== undefined && own !== undefined && own !== sessionId) {
      throw invalid("sessionId", "differs from message.contextId");
    }
  } else {
    throw invalid("message", "must be a string or an A2A message");
  }
  if (sessionId !== undefined) wire.contextId = sessionId;
  return {
    params: parseSend({ message: wire }, "1.0"),
    contextField: sessionId !== undefined ? "sessionId" : "message.contextId",
  };
}

function invalid(field: string, description: string): A2AError {
  return new A2AError("InvalidParams", `${field} ${description}`, {}, [{ field, description }]);
}
