import { SELF } from "cloudflare:test";
import { exportJWK, generateKeyPair, SignJWT } from "jose";
import { beforeEach, describe, expect, it } from "vitest";
import { loadCardSigningKeys } from "../../src/client/card-keys";
import { chooseInterface } from "../../src/client/connect";
import { REGISTRATION_PROOF_TYPE, registrationProof } from "../../src/client/registration-proof";
import { parsePeerCard } from "../../src/protocol/card/peer-card";
import type { RegistryEntry } from "../../src/protocol/card/registry";
import { signCard } from "../../src/worker/a2a/card-signing";
import { agents, resetRegistry, serveCard } from "../harness/registry/helpers";

const ORIGIN = "https://registry.example.com";
const KEYS = { alice: "key-alice", bob: "key-bob", carol: "key-carol" } as const;
type Who = keyof typeof KEYS;
type Json = Record<string, unknown>;

function post(who: Who, body: unknown) {
  return SELF.fetch(`${ORIGIN}/agents`, {
    method: "POST",
    headers: { "X-API-Key": KEYS[who], "Content-Type": "application/json" },
    body: JSON.stringify(body),
  });
}

async function outcome(response: Response) {
  const body = (await response.json()) as Json & {
    error?: {
      status: string;
      message: string;
      details: { fieldViolations?: { field: string }[] }[];
    };
  };
  const fields = (body.error?.details ?? [])
    .flatMap((d) => d.fieldViolations ?? [])
    .map((v) => v.field);
  return {
    status: response.status,
    grpc: body.error?.status,
    message: body.error?.message ?? "",
    fields,
    entry: body as unknown as RegistryEntry,
  };
}

const card = (name: string, url: string) => ({ name, description: `${name} agent`, url });

/** An agent that signs its card: its key, its signed card and its JWKS, all served. */
async function signedAgent(host: string, name = "Signed") {
  const { privateKey } = await generateKeyPair("ES256", { extractable: true });
  const secret = JSON.stringify({ ...(await exportJWK(privateKey)), kid: `${host}-key` });
  const keys = await loadCardSigningKeys(secret);
  const url = `https://${host}/`;
  const jku = `https://${host}/.well-known/jwks.json`;
  const signed = await signCard(card(name, url), keys, jku);
  await agents().serve(`https://${host}/.well-known/agent-card.json`, { body: signed });
  await agents().serve(jku, { body: { keys: keys.map((k) => k.publicJwk) } });
  const proof = (subject: string, extra: { registry?: string; url?: string } = {}) =>
    registrationProof(secret, {
      registry: extra.registry ?? ORIGIN,
      subject,
      url: extra.url ?? url,
    });
  return { secret, keys, url, signed, proof };
}

beforeEach(resetRegistry);

describe("registry ownership (A9): only the agent's own card, and its key outranks a squatter", () => {
  it("A9 refuses a URL whose agent serves no card, or serves it badly, naming card.url", async () => {
    const none = await outcome(
      await post("alice", { card: card("Ghost", "https://ghost.example/") }),
    );
    expect(none).toMatchObject({ status: 400, grpc: "INVALID_ARGUMENT", fields: ["card.url"] });
    expect(none.message).toContain(
      "https://ghost.example/.well-known/agent-card.json answered HTTP 404",
    );

    const moved = "https://moved.example/.well-known/agent-card.json";
    await agents().serve(moved, {
      status: 302,
      body: "",
      headers: { Location: "https://evil.example/" },
    });
    const redirect = await outcome(
      await post("alice", { card: card("Moved", "https://moved.example/") }),
    );
    expect(redirect).toMatchObject({ status: 400, fields: ["card.url"] });
    expect(redirect.message).toContain("follows none");

    await agents().serve("https://big.example/.well-known/agent-card.json", {
      body: { ...card("Big", "https://big.example/"), pad: "x".repeat(20_000) },
    });
    const big = await outcome(await post("alice", { card: card("Big", "https://big.example/") }));
    expect(big.message).toContain("larger than");

    await agents().serve("https://text.example/.well-known/agent-card.json", { body: "<html>" });
    const text = await outcome(
      await post("alice", { card: card("Text", "https://text.example/") }),
    );
    expect(text.message).toContain("is not JSON");
    expect(
      (
        (await (
          await SELF.fetch(`${ORIGIN}/agents`, { headers: { "X-API-Key": "key-alice" } })
        ).json()) as Json
      ).agents,
    ).toStrictEqual([]);
  });

  it.each([
    ["http://plain.example/", "https only"],
    ["https://10.0.0.1/", "private"],
    ["https://localhost/", "loopback"],
    ["https://metadata.google.internal/", "internal name"],
    ["https://user:pw@creds.example/", "credentials"],
  ])("A9 never fetches a card from %s (%s): 400 naming card.url", async (url, why) => {
    const before = await agents().fetched();
    const refused = await outcome(await post("alice", { card: card("X", url) }));
    expect(refused).toMatchObject({ status: 400, fields: ["card.url"] });
    expect(refused.message).toContain(why);
    expect(await agents().fetched()).toStrictEqual(before);
  });

  it("A9 a card that is not the one its URL serves is refused, naming the field", async () => {
    await serveCard(card("Real", "https://real.example/"));
    const renamed = await outcome(
      await post("alice", { card: card("Impostor", "https://real.example/") }),
    );
    expect(renamed).toMatchObject({ status: 400, fields: ["card.name"] });
    expect(renamed.message).toContain('it is named "Real"');
    // An agent serving a card that names somebody else's URL lists nothing for either.
    await agents().serve("https://mirror.example/.well-known/agent-card.json", {
      body: card("Real", "https://real.example/"),
    });
    const elsewhere = await outcome(
      await post("alice", { card: card("Real", "https://mirror.example/") }),
    );
    expect(elsewhere).toMatchObject({ status: 400, fields: ["card.url"] });
  });

  it("A9 the registry lists the card its URL serves, not the registrant's: an extra interface on another origin is never listed", async () => {
    const victim = {
      name: "Travel",
      description: "Travel agent",
      supportedInterfaces: [
        { url: "https://victim.example/", protocolBinding: "JSONRPC", protocolVersion: "1.0" },
      ],
      skills: [{ id: "trips", name: "Trips", description: "Plans trips", tags: ["travel"] }],
    };
    await agents().serve("https://victim.example/.well-known/agent-card.json", { body: victim });
    // The victim's URL first (as v0.3), then a v1.0 JSON-RPC interface on the squatter's origin.
    const squat = {
      ...victim,
      supportedInterfaces: [
        { url: "https://victim.example/", protocolBinding: "JSONRPC", protocolVersion: "0.3" },
        { url: "https://attacker.example/rpc", protocolBinding: "JSONRPC", protocolVersion: "1.0" },
      ],
    };
    const registered = await outcome(await post("alice", { card: squat }));
    expect(registered.status).toBe(201);
    expect(registered.entry.card).toStrictEqual(victim);
    const found = (await (
      await SELF.fetch(`${ORIGIN}/agents?tag=travel`, { headers: { "X-API-Key": KEYS.bob } })
    ).json()) as { agents: RegistryEntry[] };
    expect(found.agents).toHaveLength(1);
    expect(JSON.stringify(found.agents[0]?.card)).not.toContain("attacker.example");
    // A client connecting to the listed card talks to the victim's own origin.
    const chosen = chooseInterface(parsePeerCard(found.agents[0]?.card));
    expect(new URL(chosen.url).origin).toBe("https://victim.example");
  });

  it("A9 a signed card is listed only with a proof of its key; a squatter without one cannot register it", async () => {
    const agent = await signedAgent("signed.example");
    const bare = await outcome(await post("alice", { card: agent.signed }));
    expect(bare).toMatchObject({ status: 403, grpc: "PERMISSION_DENIED" });
    expect(bare.message).toContain("needs a proof");

    const listed = await outcome(
      await post("bob", { card: agent.signed, proof: await agent.proof("bob") }),
    );
    expect(listed.status).toBe(201);
    expect(listed.entry).toMatchObject({ url: agent.url, name: "Signed" });
    // Registered by bob, with bob's proof: alice replaying it is refused.
    const replay = await outcome(
      await post("alice", { card: agent.signed, proof: await agent.proof("bob") }),
    );
    expect(replay).toMatchObject({ status: 403 });
    expect(replay.message).toContain("sub");
  });

  it("A9 the agent's key takes its URL back from whoever registered it first", async () => {
    // Alice lists bob's unsigned card (it matches what the URL serves)...
    const unsigned = await serveCard(card("Signed", "https://taken.example/"));
    const squat = await outcome(await post("alice", { card: unsigned }));
    expect(squat.status).toBe(201);
    // ...bob cannot register his own URL without proving it...
    expect((await outcome(await post("bob", { card: unsigned }))).status).toBe(403);
    // ...so he signs his card and proves his key: the entry is his, alice's is gone.
    const agent = await signedAgent("taken.example");
    const back = await outcome(
      await post("bob", { card: agent.signed, proof: await agent.proof("bob") }),
    );
    expect(back.status).toBe(201);
    expect(back.entry.id).toBe(squat.entry.id);
    const heartbeat = await SELF.fetch(`${ORIGIN}/agents/${squat.entry.id}/heartbeat`, {
      method: "POST",
      headers: { "X-API-Key": "key-alice" },
    });
    expect(heartbeat.status).toBe(404);
    expect((await outcome(await post("alice", { card: agent.signed }))).status).toBe(403);
  });

  it("A9 refuses proofs that are not for this registry, principal, URL or key, or not fresh", async () => {
    const agent = await signedAgent("strict.example");
    const refusedWith = async (proof: string, who: Who = "bob") =>
      outcome(await post(who, { card: agent.signed, proof }));

    expect(
      await refusedWith(await agent.proof("bob", { registry: "https://other-registry.example" })),
    ).toMatchObject({ status: 403 });
    expect(
      await refusedWith(await agent.proof("bob", { url: "https://elsewhere.example/" })),
    ).toMatchObject({ status: 403 });
    // Carol's tenant is t2: a proof without it is for the default tenant.
    expect(await refusedWith(await agent.proof("carol"), "carol")).toMatchObject({ status: 403 });
    const forT2 = await registrationProof(agent.secret, {
      registry: ORIGIN,
      subject: "carol",
      tenant: "t2",
      url: agent.url,
    });
    expect((await refusedWith(forT2, "carol")).status).toBe(201);

    const stranger = await signedAgent("stranger.example");
    const foreign = await registrationProof(stranger.secret, {
      registry: ORIGIN,
      subject: "bob",
      url: agent.url,
    });
    expect((await refusedWith(foreign)).message).toContain("refused");

    const key = agent.keys[0];
    if (!key) throw new Error("no key");
    const now = Math.floor(Date.now() / 1000);
    const jwt = (typ: string | undefined, iat: number, exp: number) =>
      new SignJWT({ url: agent.url })
        .setProtectedHeader({ alg: key.alg, kid: key.kid, ...(typ ? { typ } : {}) })
        .setAudience(ORIGIN)
        .setSubject("bob")
        .setIssuedAt(iat)
        .setExpirationTime(exp)
        .sign(key.privateKey);
    expect(await refusedWith(await jwt(undefined, now, now + 60))).toMatchObject({ status: 403 });
    expect(await refusedWith(await jwt("JWT", now, now + 60))).toMatchObject({ status: 403 });
    expect(
      await refusedWith(await jwt(REGISTRATION_PROOF_TYPE, now - 3600, now - 3000)),
    ).toMatchObject({ status: 403 });
    expect(await refusedWith(await jwt(REGISTRATION_PROOF_TYPE, now, now + 86_400))).toMatchObject({
      status: 403,
    });
    expect(await refusedWith("not.a.jwt")).toMatchObject({ status: 403 });
    // The control: a well-made proof passes.
    expect((await refusedWith(await jwt(REGISTRATION_PROOF_TYPE, now, now + 60))).status).toBe(201);
  });

  it("A9 the registered card must be the signed one: an altered copy, or a proof for an unsigned card, is refused", async () => {
    const agent = await signedAgent("exact.example");
    const altered = { ...agent.signed, description: "something else" };
    const result = await outcome(
      await post("bob", { card: altered, proof: await agent.proof("bob") }),
    );
    expect(result).toMatchObject({ status: 400, fields: ["card.signatures"] });

    const plain = await serveCard(card("Plain", "https://plain-proof.example/"));
    const proof = await registrationProof(agent.secret, {
      registry: ORIGIN,
      subject: "bob",
      url: plain.url,
    });
    expect(await outcome(await post("bob", { card: plain, proof }))).toMatchObject({
      status: 400,
      fields: ["proof"],
    });
  });

  it("A9 a signed card whose keys are not on its own origin cannot be verified", async () => {
    const { privateKey } = await generateKeyPair("ES256", { extractable: true });
    const keys = await loadCardSigningKeys(JSON.stringify(await exportJWK(privateKey)));
    const url = "https://offsite.example/";
    const signed = await signCard(
      card("Offsite", url),
      keys,
      "https://keys.attacker.example/jwks.json",
    );
    await agents().serve("https://offsite.example/.well-known/agent-card.json", { body: signed });
    const before = await agents().fetched();
    const result = await outcome(await post("bob", { card: signed, proof: "x.y.z" }));
    expect(result).toMatchObject({ status: 400, fields: ["card.signatures"] });
    expect(result.message).toContain("names no jku on https://offsite.example");
    expect((await agents().fetched()).slice(before.length)).toStrictEqual([
      "https://offsite.example/.well-known/agent-card.json",
    ]);
  });
});
