import type { AgentRole } from "../protocol/card/agent-card";
import type { DiscoverPage, RegistryEntry } from "../protocol/card/registry";
import { type Auth, applyAuth, canRefresh } from "./auth";
import { A2AConnectionError, errorFromHttp, invalidResponse } from "./errors";
import { type CredentialScope, credentialScope, redirectMode, refuseRedirect } from "./origins";
import { messageOf, readText } from "./transport";

/** What a discovery asks for: every filter given must match (see `edgelink/registry`). */
export interface DiscoverOptions {
  name?: string;
  role?: AgentRole;
  /** The entry must carry every one (any case). */
  tags?: string[];
  pageSize?: number;
  pageToken?: string;
}

export interface RegistryClientOptions {
  /** How to authenticate to the registry (a bearer token or an API key). */
  auth?: Auth;
  /** The fetch to use (a service binding's, a test's); the global one by default. */
  fetch?: typeof fetch;
  /** Headers sent with every call (a gateway's, say); like `auth`, never after a redirect. */
  headers?: HeadersInit;
}

/**
 * A client of an agent registry served by `edgelink/registry`. Runs in Node,
 * browsers and Workers. Errors are the client's typed errors (`AgentNotFoundError`,
 * `RegistryFullError`, `InvalidParamsError`, ...); a registry that cannot be reached is an
 * `A2AConnectionError`.
 * @example
 * const registry = new RegistryClient("https://registry.example.com", {
 *   auth: { apiKey: env.REGISTRY_KEY },
 * });
 * const card = await (await fetch("https://trips.example.com/.well-known/agent-card.json")).json();
 * const { id } = await registry.register(card, { ttlSeconds: 120 });
 * await registry.heartbeat(id); // from a Cron Trigger, well inside the TTL
 * for await (const agent of registry.discoverAll({ tags: ["travel"] })) console.log(agent.url);
 */
export class RegistryClient {
  private readonly base: string;
  private readonly fetcher: typeof fetch;
  private readonly scope: CredentialScope;

  constructor(
    baseUrl: string,
    private readonly options: RegistryClientOptions = {},
  ) {
    this.base = baseUrl.replace(/\/+$/, "");
    this.fetcher = options.fetch ?? ((input, init) => fetch(input, init));
    const carries =
      options.auth !== undefined || [...new Headers(options.headers).keys()].length > 0;
    // Every call goes to the registry's own origin; credentials never follow a redirect.
    this.scope = credentialScope(carries, this.base, undefined);
  }

  /**
   * Registers (or renews and replaces) an agent's card for `ttlSeconds`. The registry
   * checks it against the card the agent serves; a signed card needs `proof`, made with
   * `registrationProof` from the agent's card signing key.
   */
  register(
    card: object,
    options: { ttlSeconds?: number; proof?: string } = {},
  ): Promise<RegistryEntry> {
    return this.call("POST", "/agents", {
      card,
      ttlSeconds: options.ttlSeconds,
      proof: options.proof,
    });
  }

  /** Renews an entry this caller registered for its time-to-live again. */
  heartbeat(id: string): Promise<RegistryEntry> {
    return this.call("POST", `/agents/${encodeURIComponent(id)}/heartbeat`);
  }

  /** Removes an entry this caller registered. */
  async unregister(id: string): Promise<void> {
    await this.call("DELETE", `/agents/${encodeURIComponent(id)}`);
  }

  /** One live entry. */
  get(id: string): Promise<RegistryEntry> {
    return this.call("GET", `/agents/${encodeURIComponent(id)}`);
  }

  /** One page of live entries matching every filter given. */
  discover(query: DiscoverOptions = {}): Promise<DiscoverPage> {
    const params = new URLSearchParams();
    if (query.name !== undefined) params.set("name", query.name);
    if (query.role !== undefined) params.set("role", query.role);
    for (const tag of query.tags ?? []) params.append("tag", tag);
    if (query.pageSize !== undefined) params.set("pageSize", String(query.pageSize));
    if (query.pageToken) params.set("pageToken", query.pageToken);
    const search = params.size ? `?${params}` : "";
    return this.call("GET", `/agents${search}`);
  }

  /** Every matching entry, page after page, read as the loop asks for them. */
  async *discoverAll(
    query: Omit<DiscoverOptions, "pageToken"> = {},
  ): AsyncGenerator<RegistryEntry> {
    let pageToken = "";
    do {
      const page = await this.discover({ ...query, pageToken });
      yield* page.agents;
      pageToken = page.nextPageToken;
    } while (pageToken);
  }

  private async call<T>(method: string, path: string, body?: unknown): Promise<T> {
    let url = new URL(`${this.base}${path}`);
    let response = await this.send(method, url, body, false);
    // As the A2A client does: a token source is asked once more after a 401.
    if (response.status === 401 && canRefresh(this.options.auth)) {
      await response.body?.cancel().catch(() => {});
      url = new URL(`${this.base}${path}`);
      response = await this.send(method, url, body, true);
    }
    const text = await readText(response, url.href);
    if (!response.ok) throw errorFromHttp(response.status, text);
    if (response.status === 204) return undefined as T;
    try {
      return JSON.parse(text) as T;
    } catch {
      throw invalidResponse(`the registry's answer to ${method} ${path} is not JSON`);
    }
  }

  private async send(method: string, url: URL, body: unknown, refresh: boolean) {
    const headers = new Headers(this.options.headers);
    headers.set("Accept", "application/json");
    if (body !== undefined) headers.set("Content-Type", "application/json");
    await applyAuth(this.options.auth, headers, url, { refresh, cardApiKey: undefined });
    let response: Response;
    try {
      response = await this.fetcher(url, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
        redirect: redirectMode(this.scope),
      });
    } catch (error) {
      throw new A2AConnectionError(
        `could not reach the registry at ${url.origin}: ${messageOf(error)}`,
        url.href,
        { cause: error },
      );
    }
    await refuseRedirect(this.scope, response, url.href);
    return response;
  }
}
