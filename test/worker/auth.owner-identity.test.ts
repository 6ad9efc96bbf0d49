import { createExecutionContext, env, waitOnExecutionContext } from "cloudflare:test";
import { SignJWT } from "jose";
import { beforeAll, describe, expect, it } from "vitest";
import { ownerOf, type Principal, type PrincipalInput } from "../../src/agent/access/auth";
import { defineAgent } from "../../src/worker/app/define-agent";
import { BASE, userMessage } from "../support/helpers";
import { AUDIENCE, ISSUER, type Key, signingKey } from "./auth-support";

/**
 * One owner per principal: scheme, issuer and subject together. A bearer token cannot
 * name itself into an API key's tasks, rotating API keys moves no task to another key,
 * and a token's `sub` must be a non-empty string.
 */

type Json = Record<string, unknown>;

let key: Key;
beforeAll(async () => {
  key = await signingKey();
});

/** An agent with the three schemes: bearer, API keys (from `secret`), custom `X-User`. */
function agent() {
  return defineAgent<Record<string, unknown>>({
    card: { name: "Owners", description: "Owners across schemes" },
    auth: {
      bearer: { issuer: ISSUER, audience: AUDIENCE, algorithms: ["ES256"], keys: [key.jwk] },
      apiKeys: { secret: "KEYS" },
      authenticate: (request) => {
        const user = request.headers.get("X-User");
        const whole = request.headers.get("X-Principal");
        if (whole !== null) return JSON.parse(whole) as PrincipalInput;
        return user === null ? null : { subject: JSON.parse(user) as string };
      },
    },
  });
}

async function rpc(secret: string, headers: Record<string, string>, method: string, params: Json) {
  const ctx = createExecutionContext();
  const response = await agent().fetch(
    new Request(`${BASE}/`, {
      method: "POST",
      headers: { "Content-Type": "application/json", "A2A-Version": "1.0", ...headers },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
    }),
    { ...env, KEYS: secret },
    ctx,
  );
  await waitOnExecutionContext(ctx);
  return { response, body: (await response.json()) as Json };
}

async function create(secret: string, headers: Record<string, string>): Promise<string> {
  const { body } = await rpc(secret, headers, "SendMessage", {
    message: userMessage("hello"),
    configuration: { returnImmediately: true },
  });
  if (!body.result) throw new Error(JSON.stringify(body.error));
  return ((body.result as { task: Json }).task as { id: string }).id;
}

/** 200 when `headers` can read the task, else the JSON-RPC error code. */
async function reads(secret: string, headers: Record<string, string>, id: string) {
  const { body } = await rpc(secret, headers, "GetTask", { id });
  return body.result ? 200 : (body.error as { code: number }).code;
}

const bearer = async (sub: unknown) => ({
  Authorization: `Bearer ${await new SignJWT({ sub } as Record<string, unknown>)
    .setProtectedHeader({ alg: "ES256", kid: "k1" })
    .setIssuer(ISSUER)
    .setAudience(AUDIENCE)
    .setExpirationTime("5m")
    .sign(key.privateKey)}`,
});
const apiKey = (k: string) => ({ "X-API-Key": k });
const custom = (subject: unknown) => ({ "X-User": JSON.stringify(subject) });

describe("owners do not collide across schemes", () => {
  it('a bearer token with sub "apiKey:0" cannot read the tasks of API key #0', async () => {
    const secret = "key-a-0123456789,key-b-0123456789";
    const id = await create(secret, apiKey("key-a-0123456789"));
    expect(await reads(secret, apiKey("key-a-0123456789"), id)).toBe(200);
    expect(await reads(secret, await bearer("apiKey:0"), id)).toBe(-32001);
    // Nor with the derived subject the key is known by.
    const hash = new Uint8Array(
      await crypto.subtle.digest("SHA-256", new TextEncoder().encode("key-a-0123456789")),
    );
    const derived = `sha256:${btoa(String.fromCharCode(...hash.subarray(0, 16)))
      .replaceAll("+", "-")
      .replaceAll("/", "_")
      .replace(/=+$/, "")}`;
    expect(await reads(secret, await bearer(derived), id)).toBe(-32001);
    expect(await reads(secret, custom(derived), id)).toBe(-32001);
  });

  it("the same subject through bearer, API key and custom is three owners", async () => {
    const secret = JSON.stringify({ "alice-key-0123456789": { subject: "alice" } });
    const byKey = await create(secret, apiKey("alice-key-0123456789"));
    const byToken = await create(secret, await bearer("alice"));
    const byCustom = await create(secret, custom("alice"));
    const who = [apiKey("alice-key-0123456789"), await bearer("alice"), custom("alice")];
    const ids = [byKey, byToken, byCustom];
    for (const [i, headers] of who.entries()) {
      for (const [j, id] of ids.entries()) {
        expect(await reads(secret, headers, id), `${i} reads ${j}`).toBe(i === j ? 200 : -32001);
      }
    }
  });

  it("a custom principal cannot claim the bearer scheme or an issuer", async () => {
    const secret = "k-0123456789abcdef";
    const byToken = await create(secret, await bearer("mallory"));
    const posing = {
      "X-Principal": JSON.stringify({ subject: "mallory", scheme: "bearer", issuer: ISSUER }),
    };
    expect(await reads(secret, posing, byToken)).toBe(-32001);
    expect(await reads(secret, await bearer("mallory"), byToken)).toBe(200);
  });

  it("rotating kA,kB to kB,kC: kB keeps its tasks and never gets kA's; kC gets none", async () => {
    const before = "kA-0123456789abcdef,kB-0123456789abcdef";
    const after = "kB-0123456789abcdef,kC-0123456789abcdef";
    const ofA = await create(before, apiKey("kA-0123456789abcdef"));
    const ofB = await create(before, apiKey("kB-0123456789abcdef"));
    expect(await reads(after, apiKey("kB-0123456789abcdef"), ofB)).toBe(200);
    expect(await reads(after, apiKey("kB-0123456789abcdef"), ofA)).toBe(-32001);
    expect(await reads(after, apiKey("kC-0123456789abcdef"), ofA)).toBe(-32001);
    expect(await reads(after, apiKey("kC-0123456789abcdef"), ofB)).toBe(-32001);
  });

  it("an API key's explicit subject survives rotation of the key itself", async () => {
    const old = JSON.stringify({ "old-key-0123456789": { subject: "svc" } });
    const rotated = JSON.stringify({ "new-key-0123456789": { subject: "svc" } });
    const id = await create(old, apiKey("old-key-0123456789"));
    expect(await reads(rotated, apiKey("new-key-0123456789"), id)).toBe(200);
  });

  it("ownerOf: no two schemes, issuers or subjects spell the same owner", () => {
    const p = (scheme: Principal["scheme"], subject: string, issuer?: string): Principal =>
      issuer === undefined
        ? { scheme, subject, tenant: "" }
        : { scheme, subject, tenant: "", issuer };
    const owners = [
      p("apiKey", "apiKey:0"),
      p("bearer", "apiKey:0", "https://a.test/"),
      p("bearer", "apiKey:0", "https://b.test/"),
      p("custom", "apiKey:0"),
      // Delimiters in the parts cannot shift a boundary.
      p("bearer", 'x","y', "https://a.test/"),
      p("bearer", "y", 'https://a.test/","x'),
      p("bearer", "a/b", "https://a.test"),
      p("bearer", "b", "https://a.test/a/"),
      p("anonymous", ""),
    ].map(ownerOf);
    expect(new Set(owners).size).toBe(owners.length);
    expect(owners.at(-1)).toBe("");
    expect(owners.slice(0, -1).every((o) => o !== "")).toBe(true);
  });
});

describe("a token's sub and a custom subject must be non-empty strings", () => {
  it.each([
    ["a number", 123],
    ["the empty string", ""],
    ["an object", {}],
    ["a list", ["alice"]],
  ])("sub as %s is 401 invalid_token", async (_what, sub) => {
    const { response, body } = await rpc("k-0123456789abcdef", await bearer(sub), "ListTasks", {});
    expect(response.status).toBe(401);
    expect((body.error as { code: number }).code).toBe(-32010);
    expect(response.headers.get("WWW-Authenticate")).toMatch(/sub must be a non-empty string/);
    expect(response.headers.get("WWW-Authenticate")).toMatch(/error="invalid_token"/);
  });

  it("a token without sub is 401 invalid_token", async () => {
    const { response } = await rpc("k-0123456789abcdef", await bearer(undefined), "ListTasks", {});
    expect(response.status).toBe(401);
    expect(response.headers.get("WWW-Authenticate")).toMatch(/error="invalid_token"/);
  });

  it.each([
    ["an empty subject", { "k-0123456789abcdef": { subject: "" } }, /the subject of key #0/],
    ["a number subject", { "k-0123456789abcdef": { subject: 1 } }, /the subject of key #0/],
    ["a number tenant", { "k-0123456789abcdef": { tenant: 1 } }, /the tenant of key #0/],
    ["a string entry", { "k-0123456789abcdef": "alice" }, /the entry of key #0 must be an object/],
    ["broken JSON", '{"k-0123456789abcdef": ', /neither comma-separated keys nor valid JSON/],
  ])("an API key secret with %s is refused, naming it", async (_what, table, message) => {
    const secret = typeof table === "string" ? table : JSON.stringify(table);
    const { response, body } = await rpc(secret, apiKey("k-0123456789abcdef"), "ListTasks", {});
    expect(response.status).toBe(500);
    expect(JSON.stringify(body)).toMatch(/KEYS is invalid/);
    expect(JSON.stringify(body)).toMatch(message);
    expect(JSON.stringify(body)).not.toContain("k-0123456789abcdef");
  });

  it.each([
    ["empty", ""],
    ["a number", 7],
  ])(
    "a custom authenticate answering a subject %s is the operator's bug: 500",
    async (_what, subject) => {
      const { response } = await rpc("k-0123456789abcdef", custom(subject), "ListTasks", {});
      expect(response.status).toBe(500);
    },
  );

  it("a custom authenticate answering a tenant that is not a string is the operator's bug: 500", async () => {
    const posing = { "X-Principal": JSON.stringify({ subject: "ok", tenant: 5 }) };
    const { response } = await rpc("k-0123456789abcdef", posing, "ListTasks", {});
    expect(response.status).toBe(500);
  });
});
