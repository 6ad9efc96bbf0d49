import { describe, expect, it } from "vitest";
import {
  AgentCapabilities,
  AgentCard,
  type AgentCardInput,
  AgentRole,
  AgentSkill,
  cardFromV1,
  cardToV1,
  cardToV03,
  enabledCapabilities,
  MIME_TYPES,
  PROFILE_EXTENSION,
  SecurityScheme,
  type ServedFeatures,
  TransportType,
} from "../../../src/protocol/card/agent-card";
import type { JsonObject } from "../../../src/protocol/json";
import { wire } from "../fixtures";

const BASE = "https://agent.example.com";
const served = (over: Partial<ServedFeatures> = {}): ServedFeatures => ({
  baseUrl: BASE,
  streaming: true,
  pushNotifications: false,
  extendedAgentCard: false,
  hasLlm: false,
  toolCalling: true,
  delegation: false,
  ...over,
});
const minimal = { name: "Echo", description: "Repeats what you say" };

/** A card using every field, with capabilities already equal to what `served()` serves. */
function richCard(over: Partial<AgentCardInput> = {}): AgentCard {
  return AgentCard.parse({
    ...minimal,
    url: `${BASE}/`,
    transport: "sse",
    version: "2.3.4",
    role: "orchestrator",
    tags: ["math", "routing"],
    capabilities: {
      streaming: true,
      pushNotifications: false,
      stateTransitionHistory: true,
      toolCalling: true,
      delegation: false,
    },
    skills: [
      {
        id: "add",
        name: "Add numbers",
        description: "Adds two numbers",
        inputSchema: { type: "object", properties: { a: { type: "number" } } },
        outputSchema: { type: "number" },
        tags: ["math"],
        examples: ["add 1 and 2", { a: 1, b: 2 }, [3], 4],
        inputModes: ["application/json"],
        outputModes: ["text/plain"],
      },
      { id: "noop", name: "No-op" },
    ],
    inputFormats: ["text/plain", "application/json"],
    outputFormats: ["text/markdown"],
    provider: { organization: "Example Org", url: "https://example.org" },
    documentationUrl: "https://example.org/docs",
    iconUrl: "https://example.org/icon.png",
    ...over,
  });
}

const issuePaths = (input: unknown) => {
  const r = AgentCard.safeParse(input);
  expect(r.success).toBe(false);
  return r.error?.issues.map((i) => i.path.join(".")) ?? [];
};

describe("AgentCard (A1, A8)", () => {
  it("A1 fills the defaults", () => {
    expect(AgentCard.parse(minimal)).toStrictEqual({
      name: "Echo",
      description: "Repeats what you say",
      transport: "http",
      version: "1.0.0",
      protocolVersion: "1.0",
      capabilities: AgentCapabilities.parse({}),
      skills: [],
      inputFormats: ["text/plain"],
      outputFormats: ["text/plain"],
      securitySchemes: {},
      role: "worker",
      tags: [],
      extensions: [],
    });
  });

  it("A1 url is optional (the server fills it from the request origin) and kept when given", () => {
    expect(AgentCard.parse(minimal).url).toBeUndefined();
    expect(AgentCard.parse({ ...minimal, url: "https://x/" }).url).toBe("https://x/");
  });

  it.each([
    ["a missing name", { description: "d" }],
    ["an empty name", { name: "", description: "d" }],
    ["a blank name", { name: "   ", description: "d" }],
  ])("A1 rejects %s", (_, input) => {
    expect(issuePaths(input)).toEqual(["name"]);
  });

  it("A1 an empty name is refused with a readable message", () => {
    const r = AgentCard.safeParse({ name: "", description: "d" });
    expect(r.error?.issues[0]?.message).toBe("name must not be empty");
  });

  it("A1 description is required", () => {
    expect(issuePaths({ name: "n" })).toEqual(["description"]);
  });

  it("A1 defaults are not shared between instances", () => {
    const a = AgentCard.parse(minimal);
    const b = AgentCard.parse(minimal);
    a.skills.push(AgentSkill.parse({ id: "s" }));
    a.tags.push("t");
    a.inputFormats.push("image/png");
    a.outputFormats.length = 0;
    a.capabilities.streaming = true;
    a.securitySchemes.k = { type: "mutualTLS" };
    expect(b.skills).toEqual([]);
    expect(b.tags).toEqual([]);
    expect(b.inputFormats).toEqual(["text/plain"]);
    expect(b.outputFormats).toEqual(["text/plain"]);
    expect(b.capabilities.streaming).toBe(false);
    expect(b.securitySchemes).toEqual({});
    expect(AgentCard.parse(minimal).skills).toEqual([]);
  });

  it("A1 a card round-trips through JSON", () => {
    const card = richCard({
      securitySchemes: { key: { type: "apiKey", in: "header", name: "X-Key" } },
    });
    expect(AgentCard.parse(wire(card))).toStrictEqual(card);
  });

  it("A8 transport is http, sse, websocket or runtime", () => {
    expect(TransportType.options).toEqual(["http", "sse", "websocket", "runtime"]);
    for (const transport of TransportType.options) {
      expect(AgentCard.parse({ ...minimal, transport }).transport).toBe(transport);
    }
    expect(issuePaths({ ...minimal, transport: "grpc" })).toEqual(["transport"]);
  });

  it("A6 role is one of worker, orchestrator, gateway, interface, observer", () => {
    expect(AgentRole.options).toEqual([
      "worker",
      "orchestrator",
      "gateway",
      "interface",
      "observer",
    ]);
    expect(issuePaths({ ...minimal, role: "manager" })).toEqual(["role"]);
  });
});

describe("AgentCapabilities (A3)", () => {
  it("A3 has 12 flat flags, all false except delegation, with maxConcurrency 1", () => {
    const caps = AgentCapabilities.parse({});
    expect(caps).toStrictEqual({
      streaming: false,
      pushNotifications: false,
      stateTransitionHistory: false,
      hasLlm: false,
      maxConcurrency: 1,
      messageBatching: false,
      toolCalling: false,
      multiStepReasoning: false,
      timeoutSupport: false,
      delegation: true,
      rag: false,
      codeExecution: false,
    });
    expect(Object.keys(caps)).toHaveLength(12);
  });

  it("A3 enabledCapabilities lists true flags; maxConcurrency only when above 1", () => {
    expect(enabledCapabilities(AgentCapabilities.parse({}))).toEqual(["delegation"]);
    expect(
      enabledCapabilities(
        AgentCapabilities.parse({ rag: true, hasLlm: true, delegation: false, maxConcurrency: 1 }),
      ),
    ).toEqual(["hasLlm", "rag"]);
    expect(enabledCapabilities(AgentCapabilities.parse({ maxConcurrency: 2 }))).toEqual([
      "maxConcurrency",
      "delegation",
    ]);
  });

  it("A3 maxConcurrency is a positive integer", () => {
    expect(AgentCapabilities.safeParse({ maxConcurrency: 0 }).success).toBe(false);
    expect(AgentCapabilities.safeParse({ maxConcurrency: 1.5 }).success).toBe(false);
    expect(AgentCapabilities.safeParse({ toolCalling: "yes" }).success).toBe(false);
  });
});

describe("AgentSkill (A4)", () => {
  it("A4 defaults description, schemas, tags and examples", () => {
    expect(AgentSkill.parse({ id: "s" })).toStrictEqual({
      id: "s",
      description: "",
      inputSchema: {},
      outputSchema: {},
      tags: [],
      examples: [],
    });
  });

  it("A4 id is required", () => {
    expect(AgentSkill.safeParse({}).success).toBe(false);
    expect(AgentSkill.safeParse({ id: "" }).error?.issues[0]?.message).toBe("skill id is required");
  });

  it("A4 examples accept any JSON", () => {
    const examples = ["text", { q: "x", n: [1] }, [1, 2], 3, null, true];
    expect(AgentSkill.parse({ id: "s", examples }).examples).toEqual(examples);
  });
});

describe("vocabularies (A5)", () => {
  it("A5 names the 13 common MIME types", () => {
    expect([...MIME_TYPES]).toEqual([
      "text/plain",
      "text/markdown",
      "text/html",
      "application/json",
      "image/png",
      "image/jpeg",
      "image/webp",
      "audio/wav",
      "audio/mpeg",
      "audio/ogg",
      "video/mp4",
      "video/webm",
      "application/pdf",
    ]);
  });

  it.each([
    { type: "apiKey", in: "header", name: "X-API-Key" },
    { type: "http", scheme: "bearer", bearerFormat: "JWT", description: "JWT" },
    { type: "oauth2", flows: { clientCredentials: { tokenUrl: "https://t", scopes: {} } } },
    { type: "mutualTLS" },
    { type: "openIdConnect", openIdConnectUrl: "https://id/.well-known/openid-configuration" },
  ])("A5 the $type scheme parses as given", (scheme) => {
    expect(SecurityScheme.parse(scheme)).toStrictEqual(scheme);
  });

  it.each([
    { type: "basic" },
    { type: "apiKey", in: "body", name: "k" },
    { type: "apiKey", in: "header" },
    { type: "http" },
    { type: "openIdConnect" },
  ])("A5 rejects the malformed scheme %j", (scheme) => {
    expect(SecurityScheme.safeParse(scheme).success).toBe(false);
  });
});

describe("cardToV1 (A2, A3)", () => {
  it("A2 lists JSON-RPC and HTTP+JSON interfaces at protocol 1.0 under the base URL", () => {
    expect(cardToV1(AgentCard.parse(minimal), served()).supportedInterfaces).toStrictEqual([
      { url: `${BASE}/`, protocolBinding: "JSONRPC", protocolVersion: "1.0" },
      { url: BASE, protocolBinding: "HTTP+JSON", protocolVersion: "1.0" },
    ]);
  });

  it("A2 ignores the card's own url in favour of where it is really served", () => {
    const json = cardToV1(AgentCard.parse({ ...minimal, url: "https://stale/" }), served());
    expect(JSON.stringify(json)).not.toContain("stale");
  });

  it("A3 streaming and push flags come from what is served, not from the card", () => {
    const claims = AgentCard.parse({
      ...minimal,
      capabilities: { streaming: true, pushNotifications: true },
    });
    const json = cardToV1(claims, served({ streaming: false, pushNotifications: false }));
    const caps = json.capabilities as JsonObject;
    expect(caps).toMatchObject({
      streaming: false,
      pushNotifications: false,
      extendedAgentCard: false,
    });
    const modest = AgentCard.parse(minimal);
    const caps2 = cardToV1(
      modest,
      served({ streaming: true, pushNotifications: true, extendedAgentCard: true }),
    ).capabilities as JsonObject;
    expect(caps2).toMatchObject({
      streaming: true,
      pushNotifications: true,
      extendedAgentCard: true,
    });
    expect(modest.capabilities.streaming).toBe(false);
  });

  it("A3 the profile extension carries the served capabilities, role, tags and transport", () => {
    const card = richCard();
    const caps = cardToV1(card, served({ streaming: false })).capabilities as JsonObject;
    expect(caps.extensions).toStrictEqual([
      {
        uri: PROFILE_EXTENSION,
        description: expect.any(String),
        required: false,
        params: {
          role: "orchestrator",
          tags: ["math", "routing"],
          // Not streaming, so served over plain HTTP whatever the card says (A8).
          transport: "http",
          capabilities: {
            ...Object.fromEntries(
              Object.entries(card.capabilities).filter(([k]) => k !== "maxConcurrency"),
            ),
            streaming: false,
            pushNotifications: false,
            stateTransitionHistory: true,
          },
          skills: {
            add: {
              inputSchema: { type: "object", properties: { a: { type: "number" } } },
              outputSchema: { type: "number" },
              examples: ["add 1 and 2", { a: 1, b: 2 }, [3], 4],
            },
            noop: { inputSchema: {}, outputSchema: {}, examples: [] },
          },
        },
      },
    ]);
  });

  it("A4 skills use A2A fields; non-string examples become JSON text", () => {
    const json = cardToV1(richCard(), served());
    expect(json.skills).toStrictEqual([
      {
        id: "add",
        name: "Add numbers",
        description: "Adds two numbers",
        tags: ["math"],
        examples: ["add 1 and 2", '{"a":1,"b":2}', "[3]", "4"],
        inputModes: ["application/json"],
        outputModes: ["text/plain"],
      },
      { id: "noop", name: "No-op", description: "", tags: [] },
    ]);
  });

  it("A4 a skill without a name is named after its id", () => {
    const json = cardToV1(AgentCard.parse({ ...minimal, skills: [{ id: "s1" }] }), served());
    expect((json.skills as JsonObject[])[0]?.name).toBe("s1");
  });

  it("A1 carries identity, modes and links", () => {
    const json = cardToV1(richCard(), served());
    expect(json).toMatchObject({
      name: "Echo",
      description: "Repeats what you say",
      version: "2.3.4",
      provider: { organization: "Example Org", url: "https://example.org" },
      documentationUrl: "https://example.org/docs",
      iconUrl: "https://example.org/icon.png",
      defaultInputModes: ["text/plain", "application/json"],
      defaultOutputModes: ["text/markdown"],
    });
  });

  it("A5 security schemes use the v1 wrappers and each is a requirement", () => {
    const card = AgentCard.parse({
      ...minimal,
      securitySchemes: {
        key: { type: "apiKey", in: "header", name: "X-Key" },
        bearer: { type: "http", scheme: "bearer", bearerFormat: "JWT" },
        oauth: { type: "oauth2", flows: { implicit: {} } },
        mtls: { type: "mutualTLS", description: "client cert" },
        oidc: { type: "openIdConnect", openIdConnectUrl: "https://id" },
      },
    });
    const json = cardToV1(card, served());
    expect(json.securitySchemes).toStrictEqual({
      key: { apiKeySecurityScheme: { location: "header", name: "X-Key" } },
      bearer: { httpAuthSecurityScheme: { scheme: "bearer", bearerFormat: "JWT" } },
      oauth: { oauth2SecurityScheme: { flows: { implicit: {} } } },
      mtls: { mtlsSecurityScheme: { description: "client cert" } },
      oidc: { openIdConnectSecurityScheme: { openIdConnectUrl: "https://id" } },
    });
    expect(json.securityRequirements).toStrictEqual(
      ["key", "bearer", "oauth", "mtls", "oidc"].map((k) => ({ schemes: { [k]: { list: [] } } })),
    );
  });

  it("A5 an open card has no security keys at all", () => {
    const json = cardToV1(AgentCard.parse(minimal), served());
    expect("securitySchemes" in json).toBe(false);
    expect("securityRequirements" in json).toBe(false);
    expect("provider" in json).toBe(false);
  });
});

describe("declared flags match what is served (A3, A8)", () => {
  const params = (json: JsonObject) =>
    ((json.capabilities as JsonObject).extensions as JsonObject[]).find(
      (e) => e.uri === PROFILE_EXTENSION,
    )?.params as JsonObject;

  it("A3 hasLlm, toolCalling and delegation come from the agent, not from the card's claims", () => {
    const claims = AgentCard.parse({
      ...minimal,
      capabilities: { hasLlm: true, toolCalling: true, delegation: true, maxConcurrency: 4 },
    });
    const caps = params(
      cardToV1(claims, served({ hasLlm: false, toolCalling: false, delegation: false })),
    ).capabilities as JsonObject;
    expect(caps).toMatchObject({ hasLlm: false, toolCalling: false, delegation: false });
    // Nothing limits concurrent tasks, so no limit is published.
    expect(caps).not.toHaveProperty("maxConcurrency");
    const modest = AgentCard.parse(minimal);
    const v03 = params(cardToV03(modest, served({ hasLlm: true, toolCalling: true })));
    expect(v03.capabilities).toMatchObject({ hasLlm: true, toolCalling: true, delegation: false });
  });

  it("A8 a card claiming websocket or runtime is served as sse (streaming) or http", () => {
    for (const transport of ["websocket", "runtime", "http"] as const) {
      const card = AgentCard.parse({ ...minimal, transport });
      expect(params(cardToV1(card, served({ streaming: true }))).transport).toBe("sse");
      expect(params(cardToV03(card, served({ streaming: false }))).transport).toBe("http");
    }
  });
});

describe("cardFromV1 (A6 **better**)", () => {
  it.each(AgentRole.options)("A6 role %s survives cardToV1 → cardFromV1", (role) => {
    const card = AgentCard.parse({ ...minimal, role, tags: ["x"] });
    const back = cardFromV1(wire(cardToV1(card, served())) as JsonObject);
    expect(back.role).toBe(role);
    expect(back.tags).toEqual(["x"]);
  });

  it("A1 a card whose capabilities match what is served comes back equal", () => {
    const card = richCard();
    // toEqual: absent skill modes come back as explicit undefined keys, which JSON drops.
    expect(cardFromV1(wire(cardToV1(card, served())) as JsonObject)).toEqual(card);
  });

  it("A4 skill schemas and JSON examples come back as JSON, not text", () => {
    const back = cardFromV1(wire(cardToV1(richCard(), served())) as JsonObject);
    expect(back.skills[0]?.examples).toEqual(["add 1 and 2", { a: 1, b: 2 }, [3], 4]);
    expect(back.skills[0]?.inputSchema).toEqual({
      type: "object",
      properties: { a: { type: "number" } },
    });
  });

  it("reads a foreign v1 card without the profile extension using the defaults", () => {
    const back = cardFromV1({
      name: "Foreign",
      description: "d",
      version: "0.1.0",
      supportedInterfaces: [
        { url: "https://f/", protocolBinding: "JSONRPC", protocolVersion: "1.0" },
      ],
      capabilities: { streaming: true },
      defaultInputModes: ["text/plain"],
      defaultOutputModes: ["text/plain"],
      skills: [{ id: "s", name: "S", description: "", tags: [], examples: ["hi"] }],
    });
    expect(back).toMatchObject({
      name: "Foreign",
      url: "https://f/",
      version: "0.1.0",
      role: "worker",
      tags: [],
      transport: "http",
    });
    expect(back.skills[0]).toMatchObject({ id: "s", examples: [], inputSchema: {} });
  });

  // Regression: cardFromV1 used to ignore securitySchemes, so a secured card came back open.
  it("A1 security schemes survive cardToV1 → cardFromV1", () => {
    const card = richCard({
      securitySchemes: { bearer: { type: "http", scheme: "bearer", bearerFormat: "JWT" } },
    });
    expect(cardFromV1(wire(cardToV1(card, served())) as JsonObject).securitySchemes).toEqual(
      card.securitySchemes,
    );
  });
});

describe("cardToV03 (A2)", () => {
  it("A2 is a protocol 0.3.0 card with one JSON-RPC url", () => {
    const json = cardToV03(richCard(), served({ extendedAgentCard: true }));
    expect(json).toMatchObject({
      protocolVersion: "0.3.0",
      name: "Echo",
      url: `${BASE}/`,
      preferredTransport: "JSONRPC",
      additionalInterfaces: [{ url: `${BASE}/`, transport: "JSONRPC" }],
      version: "2.3.4",
      defaultInputModes: ["text/plain", "application/json"],
      defaultOutputModes: ["text/markdown"],
      supportsAuthenticatedExtendedCard: true,
    });
    expect("supportedInterfaces" in json).toBe(false);
  });

  it("A3 capabilities come from what is served and always include state history", () => {
    const card = AgentCard.parse({ ...minimal, capabilities: { streaming: true } });
    const caps = cardToV03(card, served({ streaming: false, pushNotifications: true }))
      .capabilities as JsonObject;
    expect(caps).toMatchObject({
      streaming: false,
      pushNotifications: true,
      stateTransitionHistory: true,
    });
    expect((caps.extensions as JsonObject[])[0]?.uri).toBe(PROFILE_EXTENSION);
  });

  it("A5 security schemes stay in OpenAPI form with one requirement each", () => {
    const securitySchemes = {
      key: { type: "apiKey" as const, in: "query" as const, name: "k" },
      oidc: { type: "openIdConnect" as const, openIdConnectUrl: "https://id" },
    };
    const json = cardToV03(AgentCard.parse({ ...minimal, securitySchemes }), served());
    expect(json.securitySchemes).toStrictEqual(securitySchemes);
    expect(json.security).toStrictEqual([{ key: [] }, { oidc: [] }]);
    const open = cardToV03(AgentCard.parse(minimal), served());
    expect("securitySchemes" in open).toBe(false);
    expect("security" in open).toBe(false);
  });

  it("A4 skills are rendered as in v1", () => {
    expect(cardToV03(richCard(), served()).skills).toStrictEqual(
      cardToV1(richCard(), served()).skills,
    );
  });
});

describe("declared A2A extensions", () => {
  it("are rendered on both cards next to the profile and read back", () => {
    const card = AgentCard.parse({
      name: "X",
      description: "d",
      extensions: [{ uri: "https://ext.example/a", required: true, params: { k: 1 } }],
    });
    const v1 = cardToV1(card, served());
    const uris = ((v1.capabilities as JsonObject).extensions as JsonObject[]).map((e) => e.uri);
    expect(uris).toEqual(["https://ext.example/a", PROFILE_EXTENSION]);
    expect(cardFromV1(wire(v1) as JsonObject).extensions).toEqual(card.extensions);
    const v03 = cardToV03(card, served());
    expect(((v03.capabilities as JsonObject).extensions as JsonObject[])[0]).toMatchObject({
      uri: "https://ext.example/a",
      required: true,
    });
  });
});
