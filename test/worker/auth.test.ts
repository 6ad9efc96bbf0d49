import { beforeAll, describe, expect, it } from "vitest";
import { userMessage } from "../support/helpers";
import {
  ALICE,
  authedAgent,
  call,
  type Key,
  rpcAs,
  signingKey,
  token,
  type Worker,
} from "./auth-support";

type Json = Record<string, unknown>;

let key: Key;
let worker: Worker;
beforeAll(async () => {
  key = await signingKey();
  worker = authedAgent(key, {
    extendedCard: { name: "Guarded (extended)", description: "For signed-in callers" },
    cors: { origin: "https://app.example.com" },
  });
});

const b64 = (value: unknown) =>
  btoa(JSON.stringify(value)).replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");

async function listWith(headers: Record<string, string>) {
  return rpcAs(worker, headers, "ListTasks", {});
}

describe("bearer JWTs (auth.bearer)", () => {
  it("a valid token is accepted", async () => {
    const { status, body } = await listWith({ Authorization: `Bearer ${await token(key)}` });
    expect(status).toBe(200);
    expect(body.result).toBeDefined();
  });

  it("expired, wrong audience, unknown kid, wrong algorithm and alg none are 401 with a challenge", async () => {
    const other = await signingKey();
    const hs = await new (await import("jose")).SignJWT({})
      .setProtectedHeader({ alg: "HS256", kid: "k1" })
      .setIssuer("https://issuer.test/")
      .setAudience("https://agent.test")
      .setSubject("alice")
      .setExpirationTime("5m")
      .sign(new TextEncoder().encode("a-shared-secret-of-32-bytes-long!"));
    const now = Math.floor(Date.now() / 1000);
    const none = `${b64({ alg: "none", typ: "JWT" })}.${b64({
      iss: "https://issuer.test/",
      aud: "https://agent.test",
      sub: "alice",
      exp: now + 600,
      org: "acme",
    })}.`;
    const bad = {
      expired: await token(key, { exp: now - 3600 }),
      wrongAudience: await token(key, { aud: "https://elsewhere.test" }),
      unknownKid: await token(key, { kid: "k2" }),
      otherKey: await token(other),
      wrongAlgorithm: hs,
      algNone: none,
      garbage: "not.a.jwt",
    };
    for (const [why, jwt] of Object.entries(bad)) {
      const response = await call(worker, "POST", "/", {
        headers: { Authorization: `Bearer ${jwt}` },
        body: { jsonrpc: "2.0", id: 1, method: "ListTasks", params: {} },
      });
      expect(response.status, why).toBe(401);
      expect(response.headers.get("WWW-Authenticate"), why).toMatch(
        /^Bearer realm="Guarded", error="invalid_token"/,
      );
      const body = (await response.json()) as Json;
      expect(body.error, why).toMatchObject({ code: -32010 });
    }
  });
});

describe("API keys (auth.apiKeys)", () => {
  it("present and right: accepted; absent: 401; wrong: 401; on both bindings", async () => {
    expect((await call(worker, "GET", "/tasks", { headers: ALICE })).status).toBe(200);
    const absent = await call(worker, "GET", "/tasks");
    expect(absent.status).toBe(401);
    expect(absent.headers.get("WWW-Authenticate")).toContain(
      'ApiKey realm="Guarded", header="X-API-Key"',
    );
    expect(((await absent.json()) as Json).error).toMatchObject({ status: "UNAUTHENTICATED" });
    const wrong = await call(worker, "GET", "/tasks", {
      headers: { "X-API-Key": "alice-key-012345678X" },
    });
    expect(wrong.status).toBe(401);
    const rpcAbsent = await listWith({});
    expect(rpcAbsent.status).toBe(401);
    expect(rpcAbsent.body).toMatchObject({ jsonrpc: "2.0", id: null, error: { code: -32010 } });
    const rpcWrong = await listWith({ "X-API-Key": "nope" });
    expect(rpcWrong.status).toBe(401);
  });

  it("every route but the card and JWKS is guarded", async () => {
    const guarded: [string, string][] = [
      ["POST", "/message:send"],
      ["POST", "/message:stream"],
      ["GET", "/tasks/x"],
      ["POST", "/tasks/x:cancel"],
      ["GET", "/tasks/x:subscribe"],
      ["GET", "/tasks/x/pushNotificationConfigs"],
      ["GET", "/tasks/x/deadLetters"],
      ["GET", "/contexts/c/history"],
      ["POST", "/contexts/c/history:compact"],
      ["GET", "/extendedAgentCard"],
      ["GET", "/no/such/route"],
    ];
    for (const [method, path] of guarded) {
      const body = method === "POST" ? { message: userMessage("x") } : undefined;
      expect((await call(worker, method, path, { body })).status, `${method} ${path}`).toBe(401);
    }
    expect((await call(worker, "GET", "/.well-known/agent-card.json")).status).toBe(200);
    expect((await call(worker, "GET", "/.well-known/jwks.json")).status).toBe(200);
  });
});

describe("the card says what is enforced", () => {
  it("securitySchemes and security requirements are derived from auth", async () => {
    const card = (await (await call(worker, "GET", "/.well-known/agent-card.json")).json()) as Json;
    expect(card.securitySchemes).toEqual({
      bearer: { httpAuthSecurityScheme: { scheme: "bearer", bearerFormat: "JWT" } },
      apiKey: { apiKeySecurityScheme: { location: "header", name: "X-API-Key" } },
    });
    expect(card.securityRequirements).toEqual([
      { schemes: { bearer: { list: [] } } },
      { schemes: { apiKey: { list: [] } } },
    ]);
  });

  it("GetExtendedAgentCard answers authenticated callers only", async () => {
    const anonymous = await call(worker, "GET", "/extendedAgentCard");
    expect(anonymous.status).toBe(401);
    const signedIn = await call(worker, "GET", "/extendedAgentCard", { headers: ALICE });
    expect(((await signedIn.json()) as Json).name).toBe("Guarded (extended)");
    const viaRpc = await rpcAs(worker, ALICE, "GetExtendedAgentCard", {});
    expect((viaRpc.body.result as Json).name).toBe("Guarded (extended)");
  });

  it("declaring securitySchemes by hand, or an extended card without auth, fails at definition", async () => {
    const { defineAgent } = await import("../../src/worker/app/define-agent");
    expect(() =>
      defineAgent({
        card: {
          name: "x",
          description: "x",
          securitySchemes: { k: { type: "apiKey", in: "header", name: "K" } },
        },
      }),
    ).toThrow(/derived from the auth option/);
    expect(() =>
      defineAgent({
        card: { name: "x", description: "x" },
        extendedCard: { name: "y", description: "y" },
      }),
    ).toThrow(/authenticated callers/);
    expect(() =>
      defineAgent({
        card: { name: "x", description: "x" },
        auth: { bearer: { issuer: "i", audience: "a", algorithms: ["none"], keys: [] } },
      }),
    ).toThrow(/none/);
  });
});

describe("CORS (cors option)", () => {
  it("answers a preflight on every route before authentication", async () => {
    for (const path of ["/", "/tasks/x", "/message:send"]) {
      const response = await call(worker, "OPTIONS", path, {
        headers: {
          Origin: "https://app.example.com",
          "Access-Control-Request-Method": "POST",
          "Access-Control-Request-Headers": "authorization, content-type",
        },
      });
      expect(response.status, path).toBe(204);
      expect(response.headers.get("Access-Control-Allow-Origin")).toBe("https://app.example.com");
    }
  });

  it("without the option only the card is cross-origin", async () => {
    const plain = authedAgent(key);
    const card = await call(plain, "GET", "/.well-known/agent-card.json", {
      headers: { Origin: "https://x.example" },
    });
    expect(card.headers.get("Access-Control-Allow-Origin")).toBe("*");
    const tasks = await call(plain, "GET", "/tasks", {
      headers: { ...ALICE, Origin: "https://x.example" },
    });
    expect(tasks.headers.get("Access-Control-Allow-Origin")).toBeNull();
    // The card's preflight too, and no other route's.
    const preflight = { Origin: "https://x.example", "Access-Control-Request-Method": "GET" };
    for (const path of ["/.well-known/agent-card.json", "/.well-known/agent.json"]) {
      const answer = await call(plain, "OPTIONS", path, { headers: preflight });
      expect(answer.status, path).toBe(204);
      expect(answer.headers.get("Access-Control-Allow-Origin"), path).toBe("*");
    }
    const other = await call(plain, "OPTIONS", "/tasks", { headers: preflight });
    expect(other.headers.get("Access-Control-Allow-Origin")).toBeNull();
  });
});
