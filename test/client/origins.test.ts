/**
 * Where the client sends credentials (`auth` and `headers`): only to the origin it was
 * pointed at (or one the operator trusts), never after a redirect, and an API key in a
 * query string only when the operator asked for it. The peer is a scripted `fetch` that
 * follows redirects as fetch does unless told `redirect: "manual"`.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { connectTarget } from "../../src/agent/delegation-target";
import {
  type Auth,
  answerOf,
  CredentialPolicyError,
  connect,
  RegistryClient,
} from "../../src/client/index";

type Json = Record<string, unknown>;
const PEER = "https://peer.test";
const KEY = "k-secret-0123456789";

const task = {
  id: "t1",
  contextId: "c1",
  status: { state: "TASK_STATE_COMPLETED", timestamp: "2026-01-01T00:00:00.000Z" },
  artifacts: [{ artifactId: "a1", parts: [{ text: "done" }] }],
};

const cardOf = (endpoint: string, extra: Json = {}) => ({
  name: "Peer",
  supportedInterfaces: [{ url: endpoint, protocolBinding: "JSONRPC", protocolVersion: "1.0" }],
  ...extra,
});

type Route = (request: Request) => Response | Promise<Response> | undefined;

/**
 * A network of scripted hosts. Like fetch, it follows a redirect (resending the same
 * headers, as fetch does with custom ones) unless the request says `manual`.
 */
function network(route: Route) {
  const seen: Request[] = [];
  const answer = async (request: Request): Promise<Response> => {
    seen.push(request.clone());
    const url = new URL(request.url);
    if (url.pathname.startsWith("/.well-known/") || ["GET", "DELETE"].includes(request.method)) {
      const routed = await route(request);
      if (routed) return routed;
    }
    if (request.method === "POST") {
      const routed = await route(request);
      if (routed) return routed;
      const { id } = (await request.json()) as { id: number };
      return Response.json({ jsonrpc: "2.0", id, result: { task } });
    }
    return new Response("not found", { status: 404 });
  };
  const fetchFn = (async (input: RequestInfo | URL, init?: RequestInit) => {
    let request = new Request(input, init);
    for (let hops = 0; ; hops++) {
      const response = await answer(request);
      const location = response.headers.get("Location");
      if (request.redirect === "manual" || !location || hops > 3) return response;
      request = new Request(new URL(location, request.url), request);
    }
  }) as typeof fetch;
  return {
    fetch: fetchFn,
    seen,
    to: (origin: string) => seen.filter((r) => r.url.startsWith(origin)),
  };
}

const servesCard =
  (card: Json, at = PEER): Route =>
  (request) =>
    request.url.startsWith(`${at}/.well-known/agent-card.json`) ? Response.json(card) : undefined;

const credentialsOf = (request: Request) => ({
  authorization: request.headers.get("Authorization"),
  apiKey: request.headers.get("X-API-Key"),
  token: request.headers.get("X-Token"),
  query: new URL(request.url).search,
});
const NONE = { authorization: null, apiKey: null, token: null, query: "" };

describe("credentials go only to the origin the operator configured", () => {
  it("a fetched card whose endpoint is on another origin gets no credentials: CredentialPolicyError before any call", async () => {
    for (const auth of [{ bearer: "tok" }, { apiKey: KEY }] satisfies Auth[]) {
      const net = network(servesCard(cardOf("https://evil.test/rpc")));
      const error = await connect(PEER, { fetch: net.fetch, auth }).catch((e) => e);
      expect(error).toBeInstanceOf(CredentialPolicyError);
      expect(error.message).toMatch(/https:\/\/evil\.test\/rpc.*trustedOrigins/);
      expect(net.to("https://evil.test")).toEqual([]);
    }
  });

  it("operator headers count as credentials too", async () => {
    const net = network(servesCard(cardOf("https://evil.test/rpc")));
    const error = await connect(PEER, { fetch: net.fetch, headers: { "X-Token": "t" } }).catch(
      (e) => e,
    );
    expect(error).toBeInstanceOf(CredentialPolicyError);
    expect(net.to("https://evil.test")).toEqual([]);
  });

  it("trustedOrigins lets the operator send them to the card's other origin", async () => {
    const net = network(servesCard(cardOf("https://api.peer.test/rpc")));
    const client = await connect(PEER, {
      fetch: net.fetch,
      auth: { bearer: "tok" },
      trustedOrigins: ["https://api.peer.test/"],
    });
    expect(answerOf(await client.send("hi"))).toBe("done");
    const call = net.to("https://api.peer.test")[0] as Request;
    expect(credentialsOf(call).authorization).toBe("Bearer tok");
    expect(call.redirect).toBe("manual");
  });

  it("without credentials a card may point anywhere (nothing to leak), and redirects are followed", async () => {
    const net = network(servesCard(cardOf("https://elsewhere.test/rpc")));
    const client = await connect(PEER, { fetch: net.fetch });
    expect(answerOf(await client.send("hi"))).toBe("done");
    expect(net.to("https://elsewhere.test").map(credentialsOf)).toEqual([NONE]);
    expect(net.seen.every((r) => r.redirect === "follow")).toBe(true);
  });

  it("a bad trustedOrigins entry is a TypeError naming the option", async () => {
    await expect(connect(PEER, { trustedOrigins: ["not a url"] })).rejects.toThrow(
      /^trustedOrigins: "not a url" is not a URL/,
    );
  });
});

describe("no credentials after a redirect", () => {
  it("a call the peer redirects elsewhere is refused; the credentials never reach the other host", async () => {
    const net = network((request) => {
      if (request.method === "POST" && request.url.startsWith(PEER)) {
        return new Response(null, { status: 307, headers: { Location: "https://evil.test/rpc" } });
      }
      return servesCard(cardOf(`${PEER}/rpc`))(request);
    });
    const client = await connect(PEER, { fetch: net.fetch, auth: { apiKey: KEY } });
    const error = await client.send("hi").catch((e) => e);
    expect(error).toBeInstanceOf(CredentialPolicyError);
    expect(error.message).toMatch(/redirected to https:\/\/evil\.test\/rpc/);
    expect(net.to("https://evil.test")).toEqual([]);
    expect(net.to(`${PEER}/rpc`).map((r) => r.redirect)).toEqual(["manual"]);
  });

  it("a redirected card is read again without credentials, and its endpoint must be trusted to get them", async () => {
    const WWW = "https://www.peer.test";
    const route: Route = (request) => {
      if (request.url.startsWith(`${PEER}/.well-known/`)) {
        return new Response(null, {
          status: 301,
          headers: { Location: `${WWW}/.well-known/agent-card.json` },
        });
      }
      return servesCard(cardOf("/rpc"), WWW)(request);
    };
    const refused = network(route);
    const error = await connect(PEER, { fetch: refused.fetch, auth: { bearer: "tok" } }).catch(
      (e) => e,
    );
    expect(error).toBeInstanceOf(CredentialPolicyError);
    expect(error.message).toMatch(/https:\/\/www\.peer\.test\/rpc/);
    // The card was read from www without the token; nothing else went there.
    expect(refused.to(WWW).map(credentialsOf)).toEqual([NONE]);

    const trusted = network(route);
    const client = await connect(PEER, {
      fetch: trusted.fetch,
      auth: { bearer: "tok" },
      trustedOrigins: [WWW],
    });
    expect(client.endpoint.url).toBe(`${WWW}/rpc`);
    expect(answerOf(await client.send("hi"))).toBe("done");
    expect(trusted.to(WWW).map((r) => credentialsOf(r).authorization)).toEqual([
      null,
      "Bearer tok",
    ]);
  });

  it("the registry client does not follow a redirect with its key either", async () => {
    const net = network(() =>
      Response.json({}, { status: 302, headers: { Location: "https://evil.test/agents" } }),
    );
    const registry = new RegistryClient("https://registry.test", {
      fetch: net.fetch,
      auth: { apiKey: KEY },
    });
    await expect(registry.discover()).rejects.toBeInstanceOf(CredentialPolicyError);
    expect(net.to("https://evil.test")).toEqual([]);
  });
});

describe("an API key in a query string only when the operator says so", () => {
  const queryCard = cardOf(`${PEER}/rpc`, {
    securitySchemes: { key: { apiKeySecurityScheme: { name: "api_key", location: "query" } } },
  });

  it("a card asking for the key in the query string is refused", async () => {
    const net = network(servesCard(queryCard));
    const error = await connect(PEER, { fetch: net.fetch, auth: { apiKey: KEY } }).catch((e) => e);
    expect(error).toBeInstanceOf(CredentialPolicyError);
    expect(error.message).toMatch(/query string \(api_key\).*in: "query"/);
    expect(net.seen.filter((r) => r.url.includes(KEY))).toEqual([]);
  });

  it('in: "query" from the operator allows it', async () => {
    const net = network(servesCard(queryCard));
    const client = await connect(PEER, {
      fetch: net.fetch,
      auth: { apiKey: KEY, in: "query" },
    });
    await client.send("hi");
    const call = net.to(`${PEER}/rpc`)[0] as Request;
    expect(new URL(call.url).searchParams.get("api_key")).toBe(KEY);
  });
});

describe("delegation targets", () => {
  afterEach(() => vi.unstubAllGlobals());

  it("a URL target's headers go only to its origin", async () => {
    const net = network(servesCard(cardOf("https://evil.test/rpc")));
    vi.stubGlobal("fetch", net.fetch);
    const error = await connectTarget(`url:${PEER}/`, {}, { headers: { "X-Token": "t" } }).catch(
      (e) => e,
    );
    expect(error).toBeInstanceOf(CredentialPolicyError);
    expect(net.to("https://evil.test")).toEqual([]);

    const client = await connectTarget(
      `url:${PEER}/`,
      {},
      { headers: { "X-Token": "t" }, trustedOrigins: ["https://evil.test"] },
    );
    expect(client.endpoint.url).toBe("https://evil.test/rpc");
  });

  it("a service binding gets its headers whatever origin its card names (it reaches one Worker)", async () => {
    const net = network(
      (request) =>
        (request.url.includes("/.well-known/agent-card.json") &&
          Response.json(cardOf("https://peer.example.com/a2a"))) ||
        undefined,
    );
    const PEER_BINDING = { fetch: net.fetch };
    const client = await connectTarget(
      "binding:PEER_BINDING",
      { PEER_BINDING },
      { headers: { "X-Token": "t" } },
    );
    expect(answerOf(await client.send("hi"))).toBe("done");
    expect(credentialsOf(net.to("https://peer.example.com")[0] as Request).token).toBe("t");
  });
});

describe("the memory operator's key is a credential like any other", () => {
  const OPERATOR_KEY = "op-key-0123456789abcdef";
  const memoryRoute: Route = (request) =>
    new URL(request.url).pathname.endsWith("/memory") ? Response.json({ erased: 3 }) : undefined;

  it("K7 connected without auth, the operator key never goes to the other origin a card names", async () => {
    const net = network(
      (request) => servesCard(cardOf("https://evil.test/rpc"))(request) ?? memoryRoute(request),
    );
    const client = await connect(PEER, { fetch: net.fetch });
    const error = await client.memory
      .asOperator(OPERATOR_KEY, "user-1")
      .erase()
      .catch((e) => e);
    expect(error).toBeInstanceOf(CredentialPolicyError);
    expect(error.message).toMatch(/https:\/\/evil\.test.*trustedOrigins/);
    expect(net.to("https://evil.test")).toEqual([]);
    // A trusted other origin gets it, and the request does not follow redirects.
    const trusted = await connect(PEER, {
      fetch: net.fetch,
      trustedOrigins: ["https://evil.test"],
    });
    expect(await trusted.memory.asOperator(OPERATOR_KEY, "user-1").erase()).toBe(3);
    const sent = net.to("https://evil.test").at(-1) as Request;
    expect(sent.headers.get("X-Edgelink-Memory-Operator")).toBe(OPERATOR_KEY);
    expect(sent.redirect).toBe("manual");
  });

  it("K7 connected without auth, a redirect of an operator call is refused and the key never reaches its target", async () => {
    const net = network((request) => {
      const url = new URL(request.url);
      if (url.origin === PEER && url.pathname.endsWith("/memory")) {
        return new Response(null, {
          status: 302,
          headers: { Location: "https://evil.test/memory" },
        });
      }
      return servesCard(cardOf(`${PEER}/rpc`))(request) ?? memoryRoute(request);
    });
    const client = await connect(PEER, { fetch: net.fetch });
    const error = await client.memory
      .asOperator(OPERATOR_KEY, "user-1")
      .erase()
      .catch((e) => e);
    expect(error).toBeInstanceOf(CredentialPolicyError);
    expect(error.message).toMatch(/redirected to https:\/\/evil\.test\/memory/);
    expect(net.to("https://evil.test")).toEqual([]);
    // The user's own memory (no operator key) carries nothing and follows as before.
    expect(await client.memory.erase()).toBe(3);
  });
});
