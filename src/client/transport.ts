import { readBounded } from "../protocol/bounded-body";
import type { JsonObject, JsonValue } from "../protocol/json";
import { type ApiKeyPlacement, type Auth, applyAuth, canRefresh } from "./auth";
import { A2AConnectionError, errorFromHttp, errorFromJsonRpc, invalidResponse } from "./errors";
import {
  type Binding,
  METHODS,
  type Operation,
  type RestCall,
  restCall,
  type Version,
} from "./operations";
import { type CredentialScope, redirectMode, refuseRedirect, requireTrusted } from "./origins";
import { readSse } from "./sse";

export interface TransportOptions {
  url: string;
  binding: Binding;
  version: Version;
  tenant: string | undefined;
  fetch: typeof fetch;
  headers: Headers;
  auth: Auth | undefined;
  cardApiKey: ApiKeyPlacement | undefined;
  /** Where credentials may go: requests that carry them do not follow redirects. */
  scope: CredentialScope;
  extensions: readonly string[];
}

/** One SSE event's payload, already unwrapped from its JSON-RPC envelope. */
export interface StreamItem {
  id: string | undefined;
  payload: JsonValue;
}

const STREAM_STATUSES_WORTH_RETRYING = new Set([502, 503, 504]);

/**
 * Sends operations over one binding and version: builds the HTTP request (method names,
 * paths, headers, auth), and turns the answer into its result or a typed error.
 */
export class Transport {
  private nextId = 1;
  constructor(private readonly o: TransportOptions) {}

  get binding(): Binding {
    return this.o.binding;
  }
  get version(): Version {
    return this.o.version;
  }

  /** A unary call: the result (JSON-RPC `result`, or the HTTP+JSON body). */
  async call(op: Operation, params: JsonObject, signal?: AbortSignal): Promise<JsonValue> {
    const { response, rpcId } = await this.send(op, params, { signal, accept: "application/json" });
    const text = await readText(response, this.o.url);
    if (this.o.binding === "JSONRPC") {
      const json = parseJson(text, response.status);
      // A 401 from a gateway, say, is no JSON-RPC answer: its HTTP status is the error.
      if (!response.ok && !(isObject(json) && json.jsonrpc === "2.0")) {
        throw errorFromHttp(response.status, text);
      }
      return unwrapRpc(json, rpcId, response.status);
    }
    if (!response.ok) throw errorFromHttp(response.status, text);
    if (text.trim() === "") return {};
    return parseJson(text, response.status);
  }

  /**
   * A call to an Edgelink HTTP route (the memory routes), whatever the binding: the same
   * URL base, tenant, headers and auth; the body, or a typed error.
   */
  async route(call: RestCall, signal?: AbortSignal): Promise<JsonValue> {
    const { response } = await this.send(null, {}, { signal, accept: "application/json" }, call);
    const text = await readText(response, this.o.url);
    if (!response.ok) throw errorFromHttp(response.status, text);
    if (text.trim() === "") return {};
    return parseJson(text, response.status);
  }

  /**
   * Opens a stream (`stream` or `subscribe`) and yields its events. A network failure
   * (refused, reset, cut mid-body) is an `A2AConnectionError`; an error the agent
   * answered is its typed error.
   */
  async *open(
    op: "stream" | "subscribe",
    params: JsonObject,
    options: { lastEventId?: string; signal?: AbortSignal },
  ): AsyncGenerator<StreamItem> {
    const { response, rpcId } = await this.send(op, params, {
      signal: options.signal,
      accept: "text/event-stream",
      lastEventId: options.lastEventId,
    });
    const type = response.headers.get("Content-Type") ?? "";
    if (!type.includes("text/event-stream") || !response.body) {
      const text = await readText(response, this.o.url);
      if (STREAM_STATUSES_WORTH_RETRYING.has(response.status)) {
        throw new A2AConnectionError(
          `${this.o.url} is unavailable (HTTP ${response.status})`,
          this.o.url,
        );
      }
      if (this.o.binding === "JSONRPC") {
        const json = parseJson(text, response.status);
        if (isObject(json) && json.jsonrpc === "2.0") unwrapRpc(json, rpcId, response.status);
      }
      if (!response.ok) throw errorFromHttp(response.status, text);
      throw invalidResponse(`expected an SSE stream, got ${type || "no content type"}`);
    }
    const events = readSse(response.body);
    try {
      for (;;) {
        let next: IteratorResult<{ id: string | undefined; data: string }>;
        try {
          next = await events.next();
        } catch (error) {
          if (options.signal?.aborted) throw error;
          throw new A2AConnectionError(`the stream from ${this.o.url} was cut`, this.o.url, {
            cause: error,
          });
        }
        if (next.done) return;
        const json = parseJson(next.value.data, response.status);
        const payload = this.o.binding === "JSONRPC" ? unwrapRpc(json, undefined) : restEvent(json);
        yield { id: next.value.id, payload };
      }
    } finally {
      // A consumer that stops early (or a final event) closes the connection.
      await events.return(undefined);
    }
  }

  private async send(
    op: Operation | null,
    params: JsonObject,
    options: { signal: AbortSignal | undefined; accept: string; lastEventId?: string | undefined },
    route?: RestCall,
  ): Promise<{ response: Response; rpcId: number | undefined }> {
    const tenant = this.o.tenant;
    let url: URL;
    let init: RequestInit;
    let rpcId: number | undefined;
    if (op !== null && this.o.binding === "JSONRPC") {
      rpcId = this.nextId++;
      const body = { ...params, ...(tenant ? { tenant } : {}) };
      url = new URL(this.o.url);
      init = {
        method: "POST",
        body: JSON.stringify({
          jsonrpc: "2.0",
          id: rpcId,
          method: METHODS[this.o.version][op],
          params: body,
        }),
      };
    } else {
      const call = route ?? restCall(op as Operation, params);
      const prefix = tenant ? `/${encodeURIComponent(tenant)}` : "";
      url = new URL(`${this.o.url.replace(/\/+$/, "")}${prefix}${call.path}`);
      for (const [k, v] of Object.entries(call.query ?? {})) {
        if (v !== null && v !== undefined) url.searchParams.set(k, String(v));
      }
      init = { method: call.method, ...(call.body ? { body: JSON.stringify(call.body) } : {}) };
    }
    // A call that adds a credential of its own (the memory operator's key) is held to the
    // credential policy even when the connection itself carries none.
    const scope =
      route?.headers && Object.keys(route.headers).length > 0
        ? { ...this.o.scope, carries: true }
        : this.o.scope;
    requireTrusted(scope, url.href, "the agent's endpoint");
    const attempt = async (refresh: boolean) => {
      const headers = new Headers(this.o.headers);
      for (const [k, v] of Object.entries(route?.headers ?? {})) headers.set(k, v);
      if (init.body !== undefined) headers.set("Content-Type", "application/json");
      headers.set("Accept", options.accept);
      // v0.3 clients send no version (§3.6.2): that is how a v0.3-only agent expects them.
      if (this.o.version === "1.0") headers.set("A2A-Version", "1.0");
      if (this.o.extensions.length) headers.set("A2A-Extensions", this.o.extensions.join(","));
      if (options.lastEventId !== undefined) headers.set("Last-Event-ID", options.lastEventId);
      const target = new URL(url);
      await applyAuth(this.o.auth, headers, target, { refresh, cardApiKey: this.o.cardApiKey });
      let response: Response;
      try {
        response = await this.o.fetch(target.href, {
          ...init,
          headers,
          redirect: redirectMode(scope),
          signal: options.signal ?? null,
        });
      } catch (error) {
        if (options.signal?.aborted) throw error;
        throw new A2AConnectionError(
          `could not reach ${target.origin}: ${messageOf(error)}`,
          target.href,
          {
            cause: error,
          },
        );
      }
      await refuseRedirect(scope, response, target.href);
      return response;
    };
    let response = await attempt(false);
    if (response.status === 401 && canRefresh(this.o.auth)) {
      await response.body?.cancel().catch(() => {});
      response = await attempt(true);
    }
    return { response, rpcId };
  }
}

/**
 * A network error's message with what caused it (Node's fetch says only "fetch failed";
 * the cause has ECONNREFUSED, "bad port", ...).
 */
export const messageOf = (error: unknown): string => {
  const cause =
    error instanceof Error
      ? (error.cause as { code?: unknown; message?: unknown } | undefined)
      : undefined;
  const base = error instanceof Error ? error.message : String(error);
  const why = typeof cause?.code === "string" ? cause.code : cause?.message;
  return typeof why === "string" && why ? `${base} (${why})` : base;
};

/** Largest unary answer read: a peer cannot make the client buffer without bound. */
export const MAX_RESPONSE_BYTES = 32 * 1024 * 1024;

/** A whole answer as text, at most `MAX_RESPONSE_BYTES`. */
export async function readText(response: Response, url: string): Promise<string> {
  let text: string | null;
  try {
    text = await readBounded(response, MAX_RESPONSE_BYTES);
  } catch (error) {
    throw new A2AConnectionError(`the answer from ${url} was cut`, url, { cause: error });
  }
  if (text === null) {
    throw invalidResponse(`the answer from ${url} is larger than ${MAX_RESPONSE_BYTES} bytes`);
  }
  return text;
}

function parseJson(text: string, status: number): JsonValue {
  try {
    return JSON.parse(text) as JsonValue;
  } catch {
    if (status >= 400) throw errorFromHttp(status, text);
    throw invalidResponse(
      `the agent answered with something that is not JSON: ${text.slice(0, 120)}`,
    );
  }
}

const isObject = (v: JsonValue): v is JsonObject =>
  v !== null && typeof v === "object" && !Array.isArray(v);

function unwrapRpc(json: JsonValue, id: number | undefined, status = 200): JsonValue {
  if (!isObject(json)) throw invalidResponse("the JSON-RPC answer is not an object");
  if (json.error !== undefined) throw errorFromJsonRpc(json.error, status);
  if (id !== undefined && json.id !== id && json.id !== String(id)) {
    throw invalidResponse(`the JSON-RPC answer has id ${JSON.stringify(json.id)}, expected ${id}`);
  }
  if (!("result" in json))
    throw invalidResponse("the JSON-RPC answer has neither result nor error");
  return json.result ?? null;
}

/** An HTTP+JSON stream may carry an error as an event (`{"error": {...}}`). */
function restEvent(json: JsonValue): JsonValue {
  if (json && typeof json === "object" && !Array.isArray(json) && json.error !== undefined) {
    const keys = Object.keys(json);
    if (keys.length === 1) throw errorFromHttp(0, JSON.stringify(json));
  }
  return json;
}
