import { env } from "cloudflare:test";
import { generateAgentCardSignature, verifyAgentCardSignature } from "@a2a-js/sdk";
import {
  base64url,
  createLocalJWKSet,
  exportJWK,
  flattenedVerify,
  generateKeyPair,
  type JWK,
} from "jose";
import { describe, expect, it } from "vitest";
import demo from "../../../examples/demo-agent";
import { CardSignatureError, connect, verifyAgentCard } from "../../../src/client/index";
import { defineAgent } from "../../../src/worker/app/define-agent";

type Json = Record<string, unknown>;
type Signature = { protected: string; signature: string };
const ORIGIN = "https://signed.example.com";

async function privateJwk(alg: "ES256" | "EdDSA", kid?: string): Promise<JWK> {
  const { privateKey } = await generateKeyPair(alg, {
    extractable: true,
    ...(alg === "EdDSA" ? { crv: "Ed25519" } : {}),
  });
  return { ...(await exportJWK(privateKey)), ...(kid ? { kid } : {}) };
}

/** A JCS written apart from the framework's, for what the served card holds. */
function jcs(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(jcs).join(",")}]`;
  if (value && typeof value === "object") {
    const entries = Object.entries(value).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${jcs(v)}`).join(",")}}`;
  }
  return JSON.stringify(value);
}

/** The demo agent's app with card signing keys in its environment. */
function served(secret: string | undefined, origins = ORIGIN) {
  const vars =
    secret === undefined
      ? env
      : { ...env, CARD_SIGNING_KEYS: secret, CARD_SIGNING_ORIGINS: origins };
  const get = (url: string) => demo.app.request(url, {}, vars);
  // What `connect` and `verifyAgentCard` fetch with: the same app, no network.
  const fetchFn = ((input: RequestInfo | URL, init?: RequestInit) =>
    demo.app.request(
      String(input instanceof Request ? input.url : input),
      init,
      vars,
    )) as typeof fetch;
  return { get, fetchFn };
}

async function cardAndKeys(secret: string, origin = ORIGIN, origins = ORIGIN) {
  const { get } = served(secret, origins);
  const card = (await (await get(`${origin}/.well-known/agent-card.json`)).json()) as Json;
  const jwks = (await (await get(`${origin}/.well-known/jwks.json`)).json()) as { keys: JWK[] };
  return { card, jwks };
}

/** Verifies one signature with jose alone: the payload rebuilt from the served card. */
async function joseVerifies(card: Json, sig: Signature, jwks: { keys: JWK[] }) {
  const { signatures: _, ...rest } = card;
  const payload = base64url.encode(new TextEncoder().encode(jcs(rest)));
  const result = await flattenedVerify(
    { protected: sig.protected, payload, signature: sig.signature },
    createLocalJWKSet(jwks),
  );
  return result.protectedHeader;
}

describe("agent card signing (A2A §8.4)", () => {
  it("A2 is off without the secret: the card has no signatures and push alone fills the JWKS", async () => {
    const { get } = served(undefined);
    const card = (await (await get(`${ORIGIN}/.well-known/agent-card.json`)).json()) as Json;
    expect(card.signatures).toBeUndefined();
    const plain = defineAgent({ card: { name: "plain", description: "" } });
    const jwks = await plain.app.request(`${ORIGIN}/.well-known/jwks.json`, {}, env);
    expect(jwks.status).toBe(404);
  });

  it("A2 the worker signs the served card; jose alone verifies it from the served JWKS", async () => {
    const key = await privateJwk("ES256", "card-1");
    const { card, jwks } = await cardAndKeys(JSON.stringify(key));
    const signatures = card.signatures as Signature[];
    expect(signatures).toHaveLength(1);
    const header = await joseVerifies(card, signatures[0] as Signature, jwks);
    expect(header).toStrictEqual({
      alg: "ES256",
      typ: "JOSE",
      kid: "card-1",
      jku: `${ORIGIN}/.well-known/jwks.json`,
    });
    // The served JWKS has the card key's public half only, beside the push key.
    const published = jwks.keys.find((k) => k.kid === "card-1");
    expect(published).toMatchObject({ kty: "EC", crv: "P-256", alg: "ES256", use: "sig" });
    expect(published?.d).toBeUndefined();
    expect(jwks.keys.length).toBeGreaterThanOrEqual(2);
    // The served card is already in canonical presence form: no `required: false`.
    const exts = (card.capabilities as Json).extensions as Json[];
    expect(exts.every((e) => e.required === undefined)).toBe(true);
  });

  it("A2 signs only for the origins the operator names: another Host gets the card unsigned", async () => {
    const key = await privateJwk("EdDSA");
    const origins = "https://a.example, https://c.example";
    const a = await cardAndKeys(JSON.stringify(key), "https://a.example", origins);
    const c = await cardAndKeys(JSON.stringify(key), "https://c.example", origins);
    const urlOf = (card: Json) => ((card.supportedInterfaces as Json[])[0] as Json).url;
    expect(urlOf(a.card)).toBe("https://a.example/");
    expect(urlOf(c.card)).toBe("https://c.example/");
    for (const { card, jwks } of [a, c]) {
      const header = await joseVerifies(
        card,
        (card.signatures as Signature[])[0] as Signature,
        jwks,
      );
      expect(header?.alg).toBe("EdDSA");
      // No kid configured: the key's RFC 7638 thumbprint names it.
      expect(header?.kid).toMatch(/^[A-Za-z0-9_-]{43}$/);
    }
    // A Host nobody configured: the card names that origin, so it is served unsigned.
    const evil = await cardAndKeys(JSON.stringify(key), "https://attacker.example", origins);
    expect(urlOf(evil.card)).toBe("https://attacker.example/");
    expect(evil.card.signatures).toBeUndefined();
    // Keys without any origin to sign for: nothing is signed.
    const none = await cardAndKeys(JSON.stringify(key), "https://a.example", "");
    expect(none.card.signatures).toBeUndefined();
  });

  it("A2 with a configured public URL the card names it whatever the Host, and is signed", async () => {
    const key = await privateJwk("ES256", "pub");
    const agent = defineAgent({
      card: { name: "public", description: "d", url: "https://public.example" },
    });
    const vars = { ...env, CARD_SIGNING_KEYS: JSON.stringify(key) };
    const card = (await (
      await agent.app.request("https://attacker.example/.well-known/agent-card.json", {}, vars)
    ).json()) as Json;
    expect(((card.supportedInterfaces as Json[])[0] as Json).url).toBe("https://public.example/");
    expect(card.signatures).toHaveLength(1);
  });

  it("A2 rotation: two keys, two signatures, and the card verifies with either key alone", async () => {
    const oldKey = await privateJwk("ES256", "old");
    const newKey = await privateJwk("EdDSA", "new");
    const { card, jwks } = await cardAndKeys(JSON.stringify({ keys: [oldKey, newKey] }));
    const signatures = card.signatures as Signature[];
    expect(signatures).toHaveLength(2);
    for (const kid of ["old", "new"]) {
      const only = { keys: jwks.keys.filter((k) => k.kid === kid) };
      const result = await verifyAgentCard(card, { keys: only });
      expect(result.kid).toBe(kid);
    }
  });

  it("A2 edgelink/client verifies through connect (jku on the card's origin, or a JWKS URL)", async () => {
    const secret = JSON.stringify([await privateJwk("ES256", "c1")]);
    const { fetchFn } = served(secret);
    const agent = await connect(ORIGIN, { fetch: fetchFn, verifyCard: true });
    expect(agent.card.name).toBe("Edgelink demo agent");
    await connect(ORIGIN, {
      fetch: fetchFn,
      verifyCard: { jwksUrl: `${ORIGIN}/.well-known/jwks.json` },
    });
  });

  it("A2 a tampered card, an unsigned one and an unknown key are refused with CardSignatureError", async () => {
    const secret = JSON.stringify(await privateJwk("ES256", "c2"));
    const { card, jwks } = await cardAndKeys(secret);
    const tampered = { ...card, description: "I am someone else" };
    const refused = await verifyAgentCard(tampered, { keys: jwks }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(CardSignatureError);
    expect(refused).toMatchObject({ problem: "invalid" });
    // jose alone agrees.
    await expect(
      joseVerifies(tampered, (card.signatures as Signature[])[0] as Signature, jwks),
    ).rejects.toThrow();

    const { signatures: _, ...unsigned } = card;
    await expect(verifyAgentCard(unsigned, { keys: jwks })).rejects.toMatchObject({
      name: "CardSignatureError",
      problem: "unsigned",
    });
    const stranger = await exportJWK((await generateKeyPair("ES256")).publicKey);
    await expect(
      verifyAgentCard(card, { keys: [{ ...stranger, kid: "c2", alg: "ES256" }] }),
    ).rejects.toMatchObject({ problem: "invalid" });
    await expect(
      verifyAgentCard({ ...card, signatures: "x" }, { keys: jwks }),
    ).rejects.toMatchObject({
      problem: "malformed",
    });

    // connect refuses before sending anything; unsigned agents too when asked.
    const { fetchFn } = served(undefined);
    await expect(connect(ORIGIN, { fetch: fetchFn, verifyCard: true })).rejects.toBeInstanceOf(
      CardSignatureError,
    );
  });

  it("A2 a signed card given a __proto__ member no longer verifies (the member is part of what was signed)", async () => {
    const secret = JSON.stringify(await privateJwk("ES256", "c9"));
    const { card, jwks } = await cardAndKeys(secret);
    await verifyAgentCard(card, { keys: jwks });
    const text = JSON.stringify(card).replace(
      /^\{/,
      '{"__proto__":{"supportedInterfaces":[{"url":"https://attacker.example/"}]},',
    );
    const grown = JSON.parse(text) as Json;
    expect(Object.keys(grown)).toContain("__proto__");
    await expect(verifyAgentCard(grown, { keys: jwks })).rejects.toMatchObject({
      name: "CardSignatureError",
      problem: "invalid",
    });
  });

  it("A2 a jku off the card's origin is never fetched; a JWKS that cannot be had is keys-unavailable", async () => {
    const secret = JSON.stringify(await privateJwk("ES256", "c3"));
    const { card } = await cardAndKeys(secret);
    const fetched: string[] = [];
    const fetchFn = (async (input: RequestInfo | URL) => {
      fetched.push(String(input));
      return new Response("down", { status: 503 });
    }) as typeof fetch;
    // Read from elsewhere (a registry's copy): the jku's origin is not the card's.
    await expect(
      verifyAgentCard(card, { fetch: fetchFn }, "https://mirror.example/card.json"),
    ).rejects.toMatchObject({ problem: "keys-unavailable" });
    expect(fetched).toStrictEqual([]);
    await expect(
      verifyAgentCard(card, { fetch: fetchFn, jwksUrl: "https://keys.example/jwks.json" }),
    ).rejects.toMatchObject({ problem: "keys-unavailable" });
    expect(fetched).toStrictEqual(["https://keys.example/jwks.json"]);
  });

  it("A2 a hostile card buys at most 8 verifications and 2 key-set fetches", async () => {
    const secret = JSON.stringify(await privateJwk("ES256", "c4"));
    const { card } = await cardAndKeys(secret);
    const real = (card.signatures as Signature[])[0] as Signature;
    const forged = Array.from({ length: 50 }, (_, i) => ({
      protected: base64url.encode(
        JSON.stringify({ alg: "ES256", kid: `k${i}`, jku: `${ORIGIN}/keys/${i}.json` }),
      ),
      signature: real.signature,
    }));
    const fetched: string[] = [];
    const fetchFn = (async (input: RequestInfo | URL) => {
      fetched.push(String(input));
      return Response.json({ keys: [] });
    }) as typeof fetch;
    const refused = await verifyAgentCard(
      { ...card, signatures: [...forged, real] },
      { fetch: fetchFn },
      `${ORIGIN}/.well-known/agent-card.json`,
    ).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(CardSignatureError);
    expect((refused as CardSignatureError).details[0]).toContain("only the first 8 of 51");
    expect((refused as CardSignatureError).details).toHaveLength(9);
    expect(fetched).toStrictEqual([`${ORIGIN}/keys/0.json`, `${ORIGIN}/keys/1.json`]);
  });

  it("A2 interoperates with the official JavaScript SDK's signer and verifier, both ways", async () => {
    const key = await privateJwk("ES256", "interop");
    const { card, jwks } = await cardAndKeys(JSON.stringify(key));
    const byKid = async (kid: string) => {
      const jwk = jwks.keys.find((k) => k.kid === kid);
      if (!jwk) throw new Error(`no key ${kid}`);
      return jwk;
    };
    // Our signed card, verified by the SDK (which drops empty values before JCS).
    await verifyAgentCardSignature(byKid)(card as never);
    await expect(
      verifyAgentCardSignature(byKid)({ ...card, description: "changed" } as never),
    ).rejects.toThrow();

    // A card the SDK signed, with empty values the specification's form would keep.
    const { privateKey, publicKey } = await generateKeyPair("ES256");
    const theirs = {
      name: "SDK agent",
      description: "",
      version: "1.0.0",
      supportedInterfaces: [
        { url: "https://sdk.example/", protocolBinding: "JSONRPC", protocolVersion: "1.0" },
      ],
      capabilities: { streaming: true, extensions: [{ uri: "urn:x", params: { list: [] } }] },
      defaultInputModes: ["text/plain"],
      defaultOutputModes: ["text/plain"],
      skills: [],
    };
    const signed = await generateAgentCardSignature(privateKey, {
      alg: "ES256",
      kid: "sdk",
      typ: "JOSE",
    })(theirs as never);
    const keys = [{ ...(await exportJWK(publicKey)), kid: "sdk", alg: "ES256" }];
    expect(await verifyAgentCard(signed, { keys })).toMatchObject({ kid: "sdk" });
    await expect(
      verifyAgentCard({ ...(signed as object), name: "Other" }, { keys }),
    ).rejects.toMatchObject({ problem: "invalid" });
  });

  it("A2 a kid both secrets use for different keys is refused; one key in both is published once", async () => {
    const key = await privateJwk("ES256", "shared");
    const other = await privateJwk("ES256", "shared");
    const vars = (card: JWK, push: JWK) => ({
      ...env,
      CARD_SIGNING_KEYS: JSON.stringify(card),
      PUSH_SIGNING_KEYS: JSON.stringify(push),
    });
    const same = await demo.app.request(`${ORIGIN}/.well-known/jwks.json`, {}, vars(key, key));
    expect(((await same.json()) as { keys: JWK[] }).keys).toHaveLength(1);
    const clash = await demo.app.request(`${ORIGIN}/.well-known/jwks.json`, {}, vars(key, other));
    expect(clash.status).toBe(500);
  });

  it("A2 a bad secret does not serve a card that claims to be signed", async () => {
    const { get } = served('{"kty":"EC"');
    const response = await get(`${ORIGIN}/.well-known/agent-card.json`);
    expect(response.status).toBe(500);
    const publicOnly = await exportJWK((await generateKeyPair("ES256")).publicKey);
    const again = await served(JSON.stringify(publicOnly)).get(
      `${ORIGIN}/.well-known/agent-card.json`,
    );
    expect(again.status).toBe(500);
  });
});
