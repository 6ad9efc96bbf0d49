import type { Agent } from "../../agent/definition";
import type { ServedFeatures } from "../../protocol/card/agent-card";
import { A2AError } from "../../protocol/errors";
import type { JsonObject, JsonValue } from "../../protocol/json";
import { SSE_HEADERS } from "../../protocol/sse";
import { protoJsonNames } from "../../protocol/wire/protojson";
import type { ProtocolVersion } from "../../protocol/wire/requests";
import { readJson } from "../body";
import { restError, toA2AError } from "../errors";
import { nameOperation } from "../tracing";
import { requireExtensions } from "./negotiation";
import type { Answer, Call, Operation, RestRoute } from "./operation-table";
import type { Operations } from "./operations";
import { requestedVersion } from "./version";

/**
 * A 400 naming the segment when a path's percent-encoding is broken (Hono would match
 * the route with the segment left undecoded).
 */
export function checkPathEncoding(pathname: string): void {
  for (const segment of pathname.split("/")) {
    try {
      decodeURIComponent(segment);
    } catch {
      throw new A2AError(
        "InvalidRequest",
        `Path segment ${JSON.stringify(segment)} is not valid percent-encoded UTF-8`,
        {},
        [{ field: "path", description: `bad percent-encoding in ${JSON.stringify(segment)}` }],
      );
    }
  }
}

/** An optional JSON object body (`{}` without one), proto field names mapped. */
async function optionalBody(request: Request): Promise<JsonObject> {
  const length = request.headers.get("Content-Length");
  if (request.method === "GET" || length === "0" || !request.body) return {};
  const body = await readJson(request);
  if (body === null || typeof body !== "object" || Array.isArray(body)) {
    throw new A2AError("InvalidParams", "The request body must be a JSON object");
  }
  return protoJsonNames(body as JsonObject);
}

/** A JSON body with proto field names mapped to JSON names. */
async function jsonBody(request: Request): Promise<unknown> {
  return protoJsonNames((await readJson(request)) as JsonValue);
}

/** Made once: a Response copies the Headers it is given (see jsonrpc.ts). */
const RESULT_INIT: ResponseInit = { headers: new Headers({ "Content-Type": "application/json" }) };

/** An operation's answer as an HTTP+JSON response. */
function restResponse(answer: Answer): Response {
  if ("stream" in answer) return new Response(answer.stream, { headers: SSE_HEADERS });
  if ("text" in answer) return new Response(answer.text, RESULT_INIT);
  return Response.json(answer.json, RESULT_INIT);
}

/**
 * Serves one HTTP+JSON route (§11) of an operation of the table. Without an
 * `A2A-Version` the REST binding speaks v1 (v0.3's REST paths differed; v0.3 clients use
 * JSON-RPC). Never throws.
 */
export async function handleRest<Env>(
  request: Request,
  route: RestRoute & { operation: Operation },
  path: Record<string, string>,
  agent: Agent<Env>,
  ops: Operations<Env>,
  features: () => ServedFeatures,
): Promise<Response> {
  try {
    const url = new URL(request.url);
    const version: ProtocolVersion = requestedVersion(request, url) ?? "1.0";
    requireExtensions(request, agent as Agent<unknown>);
    const call: Call = {
      ops: ops as Operations<unknown>,
      version,
      request,
      format: { version, binding: "rest" },
      features,
    };
    const body =
      route.body === "json"
        ? await jsonBody(request)
        : route.body === "object"
          ? await optionalBody(request)
          : undefined;
    const { operation } = route;
    nameOperation(ops.trace, operation.rpc["1.0"], { version });
    const params = operation.fromRest({ url, path, body }, call);
    return restResponse(operation.render(await operation.run(params, call), params, call));
  } catch (error) {
    return restError(toA2AError(error));
  }
}
