import type { Agent } from "../../agent/definition";
import type { ServedFeatures } from "../../protocol/card/agent-card";
import { A2AError, type ErrorKind } from "../../protocol/errors";
import type { JsonObject } from "../../protocol/json";
import { SSE_HEADERS } from "../../protocol/sse";
import { protoJsonNames } from "../../protocol/wire/protojson";
import type { ProtocolVersion } from "../../protocol/wire/requests";
import { rpcResultJson } from "../../protocol/wire/stream";
import { readJsonBody } from "../body";
import { errorHeaders, jsonRpcError, type RpcId, toA2AError } from "../errors";
import { requestedTenant } from "../tenant";
import { nameOperation } from "../tracing";
import { requireExtensions } from "./negotiation";
import { type Answer, type Call, type Operation, RPC_METHODS } from "./operation-table";
import type { Operations } from "./operations";
import { requestedVersion } from "./version";

const JSON_HEADERS = { "Content-Type": "application/json" };
/**
 * A result's headers, made once: a Response copies the Headers it is given, which costs
 * workerd less than reading a plain object's for every answer.
 */
const RESULT_INIT: ResponseInit = { headers: new Headers(JSON_HEADERS) };

/** Errors about the HTTP request itself keep their HTTP status under JSON-RPC too. */
const HTTP_LEVEL: ReadonlySet<ErrorKind> = new Set<ErrorKind>([
  "PayloadTooLarge",
  "UnsupportedMediaType",
  "Unauthenticated",
  "PermissionDenied",
  "RateLimited",
]);

/**
 * An id is echoed as parsed, so one a double cannot hold is refused rather than answered
 * under another id: `1e400` (Infinity, echoed as null), or an integer past 2^53
 * (12345678901234567890 comes back as 12345678901234567000).
 */
function isRpcId(v: unknown): v is RpcId {
  if (typeof v === "number")
    return Number.isInteger(v) ? Number.isSafeInteger(v) : Number.isFinite(v);
  return typeof v === "string" || v === null;
}

/**
 * Which version's method table a request uses. An explicit `A2A-Version` decides; with
 * none, a v1 method name is served as v1 and anything else as v0.3 (§3.6.2 says an
 * absent header means 0.3; accepting v1 names too makes plain curl work).
 */
function resolveMethod(
  method: string,
  asked: ProtocolVersion | null,
): { operation: Operation; version: ProtocolVersion } {
  const candidates: ProtocolVersion[] = asked ? [asked] : ["1.0", "0.3"];
  for (const version of candidates) {
    const operation = RPC_METHODS[version].get(method);
    if (operation) return { operation, version };
  }
  const other = asked === "1.0" ? "0.3" : asked === "0.3" ? "1.0" : null;
  const hint =
    other && RPC_METHODS[other].has(method)
      ? ` (${method} is an A2A ${other} method; this request declared A2A-Version ${asked})`
      : "";
  throw new A2AError("MethodNotFound", `Method not found: ${method}${hint}`, { method });
}

/**
 * Serves one JSON-RPC POST. Never throws: every failure is a JSON-RPC error response.
 * A notification (a request without `id`) is served and answered 204 with no body, as
 * JSON-RPC 2.0 §4.1 says the server must not reply to one.
 */
export async function handleJsonRpc<Env>(
  request: Request,
  agent: Agent<Env>,
  opsFor: (tenant: string) => Operations<Env> | Promise<Operations<Env>>,
  features: () => ServedFeatures,
  /** The request's URL, parsed only if the request needs it (its query asks a version). */
  url: URL | string = request.url,
): Promise<Response> {
  let id: RpcId = null;
  let notification = false;
  // One function for the whole request: a notification's answer is dropped on the way out.
  const answer = (response: Response): Response | Promise<Response> =>
    notification ? unanswered(response) : response;
  try {
    // Its media type and size were checked by the route's guards (route-table.ts).
    const body = await readJsonBody(request);
    if (Array.isArray(body)) {
      throw new A2AError("InvalidRequest", "Batch requests are not supported by A2A");
    }
    if (body === null || typeof body !== "object") {
      throw new A2AError("InvalidRequest", "The request must be a JSON-RPC 2.0 object");
    }
    const rpc = body as JsonObject;
    if (isRpcId(rpc.id)) id = rpc.id;
    else if (rpc.id !== undefined) {
      throw new A2AError(
        "InvalidRequest",
        "id must be a string, null, or a number that survives a round trip (integers up to 2^53)",
      );
    }
    if (rpc.jsonrpc !== "2.0") throw new A2AError("InvalidRequest", 'jsonrpc must be "2.0"');
    if (typeof rpc.method !== "string" || rpc.method === "") {
      throw new A2AError("InvalidRequest", "method must be a non-empty string");
    }
    // Only a valid Request object without an id is a notification: anything else is an
    // Invalid Request, answered with id null (JSON-RPC 2.0 §5, `{"foo": "boo"}`).
    notification = !Object.hasOwn(rpc, "id");
    if (rpc.params !== undefined && (rpc.params === null || typeof rpc.params !== "object")) {
      throw new A2AError("InvalidParams", "params must be an object", {}, [
        { field: "params", description: "must be an object" },
      ]);
    }
    // The version is checked once the id is known, so its error echoes the id.
    const asked = requestedVersion(request, url);
    const { operation, version } = resolveMethod(rpc.method, asked);
    requireExtensions(request, agent as Agent<unknown>);
    const params = protoJsonNames((rpc.params ?? {}) as JsonObject);
    // May be refused by the tenant's rate limit, before any storage is touched.
    const made = opsFor(requestedTenant(params.tenant, "params.tenant"));
    const ops = made instanceof Promise ? await made : made;
    nameOperation(ops.trace, operation.rpc["1.0"], { method: rpc.method, version });
    const call: Call = {
      ops: ops as Operations<unknown>,
      version,
      request,
      format: { version, binding: "jsonrpc", rpcId: id },
      features,
    };
    const p = operation.fromRpc(params, call);
    return answer(rpcResponse(id, operation.render(await operation.run(p, call), p, call)));
  } catch (error) {
    const a2a = toA2AError(error);
    const status = HTTP_LEVEL.has(a2a.kind) ? a2a.httpStatus : 200;
    const headers = { ...JSON_HEADERS, ...errorHeaders(a2a) };
    return answer(Response.json(jsonRpcError(id, a2a), { status, headers }));
  }
}

/** A notification's answer: none (its body dropped), 204. */
async function unanswered(response: Response): Promise<Response> {
  await response.body?.cancel();
  return new Response(null, { status: 204 });
}

/** An operation's answer as a JSON-RPC response (a stream's events carry the id). */
function rpcResponse(id: RpcId, answer: Answer): Response {
  if ("stream" in answer) return new Response(answer.stream, { headers: SSE_HEADERS });
  if ("text" in answer) {
    return new Response(rpcResultJson(id, answer.text), RESULT_INIT);
  }
  return Response.json({ jsonrpc: "2.0", id, result: answer.json }, RESULT_INIT);
}
