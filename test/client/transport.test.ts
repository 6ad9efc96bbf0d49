/**
 * The client's handling of what a peer sends, with a scripted `fetch`: malformed answers,
 * error shapes of both bindings, the resume limit, version and binding choice.
 */
import { describe, expect, it } from "vitest";
import {
  A2AConnectionError,
  A2ARemoteError,
  connect,
  InternalError,
  InvalidAgentResponseError,
  InvalidParamsError,
  type PeerCardInput,
  type PeerInterface,
  TaskNotFoundError,
  UnauthenticatedError,
  UnavailableError,
  UnsupportedOperationError,
} from "../../src/client/index";

const card = (interfaces: PeerInterface[], extra: object = {}): PeerCardInput => ({
  name: "Peer",
  supportedInterfaces: interfaces,
  ...extra,
});
const RPC = { url: "https://peer.test/rpc", protocolBinding: "JSONRPC", protocolVersion: "1.0" };
const REST = { url: "https://peer.test/api", protocolBinding: "HTTP+JSON", protocolVersion: "1.0" };

type Handler = (request: Request) => Response | Promise<Response>;
function scripted(handler: Handler) {
  const seen: Request[] = [];
  const fetchFn = (async (input: RequestInfo | URL, init?: RequestInit) => {
    const request = new Request(input, init);
    seen.push(request.clone());
    return handler(request);
  }) as typeof fetch;
  return { fetch: fetchFn, seen };
}
const rpcResult = async (request: Request, result: unknown) => {
  const { id } = (await request.json()) as { id: number };
  return Response.json({ jsonrpc: "2.0", id, result });
};
const task = (state: string) => ({
  id: "t1",
  contextId: "c1",
  status: { state, timestamp: "2026-01-01T00:00:00.000Z" },
});

describe("client wire handling", () => {
  it("prefers a v1 interface, honours binding, and speaks v0.3 only when that is all", async () => {
    const mixed = card([{ ...RPC, protocolVersion: "0.3" }, REST]);
    expect(
      (await connect(mixed, { fetch: scripted(() => new Response()).fetch })).endpoint,
    ).toMatchObject(REST);
    const old = await connect(card([{ ...RPC, protocolVersion: "0.3" }]));
    expect(old.version).toBe("0.3");
    const grpcOnly = card([{ url: "x", protocolBinding: "GRPC", protocolVersion: "1.0" }]);
    await expect(connect(grpcOnly)).rejects.toThrow(
      /offers no interface this client speaks \(it offers GRPC 1.0/,
    );
    await expect(connect(card([RPC]), { binding: "HTTP+JSON" })).rejects.toBeInstanceOf(
      UnsupportedOperationError,
    );
  });

  it("reads a v0.3 card into supportedInterfaces", async () => {
    const agent = await connect({
      name: "Old",
      url: "https://old.test/a2a",
      protocolVersion: "0.3.0",
      preferredTransport: "JSONRPC",
      additionalInterfaces: [{ url: "https://old.test/a2a", transport: "JSONRPC" }],
    });
    expect(agent.card.supportedInterfaces).toEqual([
      { url: "https://old.test/a2a", protocolBinding: "JSONRPC", protocolVersion: "0.3" },
    ]);
    expect(agent.version).toBe("0.3");
  });

  it("a malformed task is InvalidAgentResponseError naming the field", async () => {
    const peer = scripted((r) => rpcResult(r, { task: { id: "t1", status: { state: "NOPE" } } }));
    const agent = await connect(card([RPC]), { fetch: peer.fetch });
    const error = await agent.send("hi").catch((e) => e);
    expect(error).toBeInstanceOf(InvalidAgentResponseError);
    expect(error.message).toContain("status.state");
    const notJson = scripted(() => new Response("<html>oops</html>", { status: 200 }));
    const other = await connect(card([RPC]), { fetch: notJson.fetch });
    await expect(other.getTask("t1")).rejects.toBeInstanceOf(InvalidAgentResponseError);
  });

  it("maps JSON-RPC and HTTP+JSON errors to their classes, with ErrorInfo and violations", async () => {
    const rpcPeer = scripted(async (r) => {
      const { id } = (await r.json()) as { id: number };
      return Response.json({
        jsonrpc: "2.0",
        id,
        error: {
          code: -32602,
          message: "Invalid parameters",
          data: [
            {
              "@type": "type.googleapis.com/google.rpc.BadRequest",
              fieldViolations: [{ field: "message.parts", description: "required" }],
            },
          ],
        },
      });
    });
    const rpc = await connect(card([RPC]), { fetch: rpcPeer.fetch });
    const invalid = await rpc.send("x").catch((e) => e);
    expect(invalid).toBeInstanceOf(InvalidParamsError);
    expect(invalid.fieldViolations).toEqual([{ field: "message.parts", description: "required" }]);

    const restPeer = scripted((r) =>
      r.url.endsWith("/tasks/t9")
        ? Response.json(
            {
              error: {
                code: 404,
                status: "NOT_FOUND",
                message: "gone",
                details: [
                  {
                    "@type": "type.googleapis.com/google.rpc.ErrorInfo",
                    reason: "TASK_NOT_FOUND",
                    domain: "a2a-protocol.org",
                    metadata: { taskId: "t9" },
                  },
                ],
              },
            },
            { status: 404 },
          )
        : new Response("<html>Bad gateway</html>", { status: 502 }),
    );
    const rest = await connect(card([REST]), { fetch: restPeer.fetch });
    const missing = await rest.getTask("t9").catch((e) => e);
    expect(missing).toBeInstanceOf(TaskNotFoundError);
    expect(missing.errorInfo).toEqual({
      reason: "TASK_NOT_FOUND",
      domain: "a2a-protocol.org",
      metadata: { taskId: "t9" },
    });
    expect(missing.httpStatus).toBe(404);
    const gateway = await rest.getTask("t1").catch((e) => e);
    expect(gateway).toBeInstanceOf(InternalError);
    expect(gateway.message).toContain("HTTP 502");
    expect(gateway).toBeInstanceOf(A2ARemoteError);
  });

  it("a 503 whose ErrorInfo says UNAVAILABLE is UnavailableError (retry later), not InternalError", async () => {
    const peer = scripted(() =>
      Response.json(
        {
          error: {
            code: 503,
            status: "UNAVAILABLE",
            message: "issuer keys cannot be fetched",
            details: [
              {
                "@type": "type.googleapis.com/google.rpc.ErrorInfo",
                reason: "UNAVAILABLE",
                domain: "a2a-protocol.org",
              },
            ],
          },
        },
        { status: 503 },
      ),
    );
    const rest = await connect(card([REST]), { fetch: peer.fetch });
    const error = await rest.getTask("t1").catch((e) => e);
    expect(error).toBeInstanceOf(UnavailableError);
    expect(error.httpStatus).toBe(503);
  });

  it("sends the version, tenant, extensions, headers and API key where the card says", async () => {
    const peer = scripted((r) => rpcResult(r, { task: task("TASK_STATE_COMPLETED") }));
    const agent = await connect(
      card([{ ...RPC, tenant: "acme" }], {
        securitySchemes: {
          key: { apiKeySecurityScheme: { location: "header", name: "X-Peer-Key" } },
        },
      }),
      {
        fetch: peer.fetch,
        auth: { apiKey: "k1" },
        headers: { "X-Trace": "t" },
        extensions: ["urn:x"],
      },
    );
    await agent.send("hi", { returnImmediately: true });
    const sent = peer.seen[0] as Request;
    expect(sent.headers.get("A2A-Version")).toBe("1.0");
    expect(sent.headers.get("X-Peer-Key")).toBe("k1");
    expect(sent.headers.get("X-Trace")).toBe("t");
    expect(sent.headers.get("A2A-Extensions")).toBe("urn:x");
    const body = (await sent.json()) as { method: string; params: Record<string, unknown> };
    expect(body.method).toBe("SendMessage");
    expect(body.params.tenant).toBe("acme");
    expect(body.params.configuration).toEqual({ returnImmediately: true });
  });

  it("a 401 with a static token is UnauthenticatedError, not retried", async () => {
    const peer = scripted(() => new Response("no", { status: 401 }));
    const agent = await connect(card([REST]), { fetch: peer.fetch, auth: { bearer: "x" } });
    await expect(agent.getTask("t1")).rejects.toBeInstanceOf(UnauthenticatedError);
    expect(peer.seen).toHaveLength(1);
  });

  it("resumption is bounded: after `retries` reconnections without progress it gives up", async () => {
    const sse = (body: string) =>
      new Response(body, { headers: { "Content-Type": "text/event-stream" } });
    // Every connection replays the same non-final event and ends: no progress, a drop
    // each time. The replay is not passed on twice.
    const replay = scripted(() =>
      sse(
        `id: 1\ndata: ${JSON.stringify({ statusUpdate: { taskId: "t1", contextId: "c1", status: { state: "TASK_STATE_WORKING" } } })}\n\n`,
      ),
    );
    const agent = await connect(card([REST]), { fetch: replay.fetch });
    const seen: string[] = [];
    const retried: number[] = [];
    const error = await (async () => {
      const resume = { retries: 2, delayMs: 1, onRetry: (n: number) => retried.push(n) };
      for await (const e of agent.subscribe("t1", { resume })) seen.push(e.eventId ?? "");
    })().catch((e) => e);
    expect(error).toBeInstanceOf(A2AConnectionError);
    expect(seen).toEqual(["1"]);
    expect(retried).toEqual([1, 2]);
    expect(replay.seen).toHaveLength(3);
    expect(replay.seen[1]?.headers.get("Last-Event-ID")).toBe("1");

    // Connections that deliver nothing exhaust it too: 1 try + 2 retries.
    const dead = scripted(() => sse(": keep-alive\n\n"));
    const stuck = await connect(card([REST]), { fetch: dead.fetch });
    const refused = await (async () => {
      for await (const _ of stuck.subscribe("t1", { resume: { retries: 2, delayMs: 1 } })) {
      }
    })().catch((e) => e);
    expect(refused).toBeInstanceOf(A2AConnectionError);
    expect(dead.seen).toHaveLength(3);
    expect(dead.seen[1]?.headers.get("Last-Event-ID")).toBeNull();
  });

  it("reads a peer's task beyond the limits Edgelink sets on its own clients (v1 and v0.3)", async () => {
    // Valid A2A that Edgelink's server would refuse from a client: another agent may send it.
    const big = { blob: "x".repeat(70 * 1024) };
    const parts = Array.from({ length: 300 }, (_, i) => ({
      text: `p${i}`,
      metadata: i ? {} : big,
    }));
    const message = {
      messageId: "m".repeat(300),
      contextId: "c\u0001tab\tid",
      role: "ROLE_AGENT",
      parts,
      metadata: big,
      extensions: Array.from({ length: 100 }, (_, i) => `https://ext.test/${i}`),
    };
    const v1 = {
      ...task("TASK_STATE_COMPLETED"),
      status: { state: "TASK_STATE_COMPLETED", message },
      history: [message],
    };
    const peer = scripted((request) => rpcResult(request, v1));
    const read = await (await connect(card([RPC]), { fetch: peer.fetch })).getTask("t1");
    expect(read.history[0]?.parts).toHaveLength(300);
    expect(read.history[0]?.messageId).toHaveLength(300);
    expect(read.status.message?.metadata).toEqual(big);

    const v03Message = {
      kind: "message",
      messageId: "m".repeat(300),
      role: "agent",
      parts: parts.map((p) => ({ kind: "text", text: p.text, metadata: p.metadata })),
      contextId: "c\u0001",
      extensions: Array.from({ length: 100 }, (_, i) => `https://ext.test/${i}`),
    };
    const v03 = {
      kind: "task",
      id: "t1",
      contextId: "c1",
      status: { state: "completed" },
      history: [v03Message],
    };
    const old = scripted((request) => rpcResult(request, v03));
    const oldCard = card([{ ...RPC, protocolVersion: "0.3" }]);
    const read03 = await (await connect(oldCard, { fetch: old.fetch })).getTask("t1");
    expect(read03.history[0]?.parts).toHaveLength(300);
  });
});
