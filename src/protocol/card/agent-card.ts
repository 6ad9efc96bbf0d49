import * as z from "zod";
import { compact, JsonObject, JsonValue } from "../json";

/** The MIME types the seed names; others are allowed, these are the common ones. */
export const MIME_TYPES = [
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
] as const;

export const AgentRole = z.enum(["worker", "orchestrator", "gateway", "interface", "observer"]);
export type AgentRole = z.infer<typeof AgentRole>;

/** http, sse, websocket or runtime; Edgelink serves http with SSE streaming. */
export const TransportType = z.enum(["http", "sse", "websocket", "runtime"]);

/**
 * What an agent can do. The A2A flags (`streaming`, `pushNotifications`,
 * `extendedAgentCard`) are set by the server from what it really serves.
 */
export const AgentCapabilities = z.object({
  streaming: z.boolean().default(false),
  pushNotifications: z.boolean().default(false),
  stateTransitionHistory: z.boolean().default(false),
  hasLlm: z.boolean().default(false),
  maxConcurrency: z.number().int().min(1).default(1),
  messageBatching: z.boolean().default(false),
  toolCalling: z.boolean().default(false),
  multiStepReasoning: z.boolean().default(false),
  timeoutSupport: z.boolean().default(false),
  delegation: z.boolean().default(true),
  rag: z.boolean().default(false),
  codeExecution: z.boolean().default(false),
});
export type AgentCapabilities = z.infer<typeof AgentCapabilities>;

/**
 * Names of the enabled capabilities. `maxConcurrency` is a number, so it is listed when
 * it allows more than the default single task at a time.
 */
export function enabledCapabilities(c: AgentCapabilities): string[] {
  return Object.entries(c)
    .filter(([k, v]) => (k === "maxConcurrency" ? (v as number) > 1 : v === true))
    .map(([k]) => k);
}

export const AgentSkill = z.object({
  id: z.string().min(1, "skill id is required"),
  name: z.string().optional(),
  description: z.string().default(""),
  inputSchema: JsonObject.default({}),
  outputSchema: JsonObject.default({}),
  tags: z.array(z.string()).default([]),
  /** Any JSON; non-string examples are sent to A2A peers as JSON text. */
  examples: z.array(JsonValue).default([]),
  inputModes: z.array(z.string()).optional(),
  outputModes: z.array(z.string()).optional(),
});
export type AgentSkill = z.infer<typeof AgentSkill>;

/** Security scheme in OpenAPI form: apiKey, http, oauth2, mutualTLS, openIdConnect. */
export const SecurityScheme = z.discriminatedUnion("type", [
  z.object({
    type: z.literal("apiKey"),
    in: z.enum(["header", "query", "cookie"]),
    name: z.string(),
    description: z.string().optional(),
  }),
  z.object({
    type: z.literal("http"),
    scheme: z.string(),
    bearerFormat: z.string().optional(),
    description: z.string().optional(),
  }),
  z.object({ type: z.literal("oauth2"), flows: JsonObject, description: z.string().optional() }),
  z.object({ type: z.literal("mutualTLS"), description: z.string().optional() }),
  z.object({
    type: z.literal("openIdConnect"),
    openIdConnectUrl: z.string(),
    description: z.string().optional(),
  }),
]);
export type SecurityScheme = z.infer<typeof SecurityScheme>;

/** An A2A extension the agent supports; `required` ones must be declared by clients. */
export const AgentExtension = z.object({
  uri: z.string().min(1),
  description: z.string().optional(),
  required: z.boolean().default(false),
  params: JsonObject.optional(),
});
export type AgentExtension = z.infer<typeof AgentExtension>;

/**
 * An agent's identity. `url` may be left out: the server fills it from the origin of
 * each request, so the same worker is right under `wrangler dev` and in production.
 */
export const AgentCard = z.object({
  name: z.string().trim().min(1, "name must not be empty"),
  description: z.string(),
  url: z.string().optional(),
  transport: TransportType.default("http"),
  version: z.string().default("1.0.0"),
  protocolVersion: z.string().default("1.0"),
  capabilities: AgentCapabilities.default(() => AgentCapabilities.parse({})),
  skills: z.array(AgentSkill).default(() => []),
  inputFormats: z.array(z.string()).default(() => ["text/plain"]),
  outputFormats: z.array(z.string()).default(() => ["text/plain"]),
  securitySchemes: z.record(z.string(), SecurityScheme).default(() => ({})),
  role: AgentRole.default("worker"),
  tags: z.array(z.string()).default(() => []),
  extensions: z.array(AgentExtension).default(() => []),
  provider: z.object({ organization: z.string(), url: z.string() }).optional(),
  documentationUrl: z.string().optional(),
  iconUrl: z.string().optional(),
});
export type AgentCard = z.infer<typeof AgentCard>;
export type AgentCardInput = z.input<typeof AgentCard>;

/** URI of the A2A extension that carries the Edgelink card fields A2A has no slot for. */
export const PROFILE_EXTENSION = "https://edgelink.dev/extensions/agent-profile/v1";

function profileExtension(
  card: AgentCard,
  capabilities: Omit<AgentCapabilities, "maxConcurrency">,
  transport: "http" | "sse",
): JsonObject {
  const skills: JsonObject = {};
  for (const s of card.skills) {
    skills[s.id] = {
      inputSchema: s.inputSchema,
      outputSchema: s.outputSchema,
      examples: s.examples,
    };
  }
  return {
    uri: PROFILE_EXTENSION,
    description: "Edgelink agent profile: role, tags, capability flags and skill schemas",
    required: false,
    params: {
      role: card.role,
      tags: card.tags,
      transport,
      capabilities: capabilities as unknown as JsonObject,
      skills,
    },
  };
}

const exampleText = (e: JsonValue): string => (typeof e === "string" ? e : JSON.stringify(e));

/** A skill as both card versions show it: A2A examples are strings, so others go as JSON. */
function skillToWire(s: AgentSkill): JsonObject {
  return compact({
    id: s.id,
    name: s.name ?? s.id,
    description: s.description,
    tags: s.tags,
    examples: s.examples.length ? s.examples.map(exampleText) : undefined,
    inputModes: s.inputModes,
    outputModes: s.outputModes,
  });
}

function schemeToV1(s: SecurityScheme): JsonObject {
  switch (s.type) {
    case "apiKey":
      return {
        apiKeySecurityScheme: compact({ location: s.in, name: s.name, description: s.description }),
      };
    case "http":
      return {
        httpAuthSecurityScheme: compact({
          scheme: s.scheme,
          bearerFormat: s.bearerFormat,
          description: s.description,
        }),
      };
    case "oauth2":
      return { oauth2SecurityScheme: compact({ flows: s.flows, description: s.description }) };
    case "mutualTLS":
      return { mtlsSecurityScheme: compact({ description: s.description }) };
    case "openIdConnect":
      return {
        openIdConnectSecurityScheme: compact({
          openIdConnectUrl: s.openIdConnectUrl,
          description: s.description,
        }),
      };
  }
}

/** Facts only the server knows, overriding whatever the card declares. */
export interface ServedFeatures {
  /**
   * Base URL of the endpoints, no trailing slash: `https://agent.example.com`, or
   * `https://example.com/agent` when the app is mounted under `/agent`.
   */
  baseUrl: string;
  streaming: boolean;
  pushNotifications: boolean;
  extendedAgentCard: boolean;
  /** The agent answers with a model. */
  hasLlm: boolean;
  /** The agent has tools (for its model, or for `tool_call` parts). */
  toolCalling: boolean;
  /** The agent can hand work to other agents. */
  delegation: boolean;
}

/** JSON-RPC is `POST /` at the root, and `POST /agent` (no slash) when mounted there. */
function rpcUrl(f: ServedFeatures): string {
  return new URL(f.baseUrl).pathname === "/" ? `${f.baseUrl}/` : f.baseUrl;
}

/**
 * The capabilities as served: every flag the server can check comes from what it serves.
 * `maxConcurrency` is left out: nothing limits concurrent tasks, so publishing a number
 * would be a promise nobody keeps.
 */
function served(card: AgentCard, f: ServedFeatures): Omit<AgentCapabilities, "maxConcurrency"> {
  const { maxConcurrency: _unenforced, ...declared } = card.capabilities;
  return {
    ...declared,
    streaming: f.streaming,
    pushNotifications: f.pushNotifications,
    stateTransitionHistory: true,
    hasLlm: f.hasLlm,
    toolCalling: f.toolCalling,
    delegation: f.delegation,
  };
}

/** Edgelink serves HTTP, streaming over SSE when streaming is on; never websocket. */
const servedTransport = (f: ServedFeatures): "http" | "sse" => (f.streaming ? "sse" : "http");

/** The A2A v1.0 card served at `/.well-known/agent-card.json`. */
export function cardToV1(card: AgentCard, f: ServedFeatures): JsonObject {
  const schemes = Object.entries(card.securitySchemes);
  const profile = profileExtension(card, served(card, f), servedTransport(f));
  return compact({
    name: card.name,
    description: card.description,
    supportedInterfaces: [
      { url: rpcUrl(f), protocolBinding: "JSONRPC", protocolVersion: "1.0" },
      { url: f.baseUrl, protocolBinding: "HTTP+JSON", protocolVersion: "1.0" },
    ],
    provider: card.provider,
    version: card.version,
    documentationUrl: card.documentationUrl,
    capabilities: {
      streaming: f.streaming,
      pushNotifications: f.pushNotifications,
      extendedAgentCard: f.extendedAgentCard,
      extensions: [...card.extensions.map((e) => compact({ ...e })), profile],
    },
    securitySchemes: schemes.length
      ? Object.fromEntries(schemes.map(([k, s]) => [k, schemeToV1(s)]))
      : undefined,
    securityRequirements: schemes.length
      ? schemes.map(([k]) => ({ schemes: { [k]: { list: [] } } }))
      : undefined,
    defaultInputModes: card.inputFormats,
    defaultOutputModes: card.outputFormats,
    skills: card.skills.map(skillToWire),
    iconUrl: card.iconUrl,
  });
}

/** The A2A v0.3 card served at the legacy `/.well-known/agent.json`. */
export function cardToV03(card: AgentCard, f: ServedFeatures): JsonObject {
  const schemes = Object.entries(card.securitySchemes);
  const profile = profileExtension(card, served(card, f), servedTransport(f));
  return compact({
    protocolVersion: "0.3.0",
    name: card.name,
    description: card.description,
    url: rpcUrl(f),
    preferredTransport: "JSONRPC",
    additionalInterfaces: [{ url: rpcUrl(f), transport: "JSONRPC" }],
    version: card.version,
    provider: card.provider,
    documentationUrl: card.documentationUrl,
    iconUrl: card.iconUrl,
    capabilities: {
      streaming: f.streaming,
      pushNotifications: f.pushNotifications,
      stateTransitionHistory: true,
      extensions: [...card.extensions.map((e) => compact({ ...e })), profile],
    },
    securitySchemes: schemes.length ? card.securitySchemes : undefined,
    security: schemes.length ? schemes.map(([k]) => ({ [k]: [] })) : undefined,
    defaultInputModes: card.inputFormats,
    defaultOutputModes: card.outputFormats,
    skills: card.skills.map(skillToWire),
    supportsAuthenticatedExtendedCard: f.extendedAgentCard,
  }) as JsonObject;
}

function schemeFromV1(wrapper: JsonObject): SecurityScheme | null {
  const [kind, body] = Object.entries(wrapper)[0] ?? [];
  const s = (body ?? {}) as Record<string, JsonValue>;
  const described = s.description === undefined ? {} : { description: s.description };
  const parsed = SecurityScheme.safeParse(
    kind === "apiKeySecurityScheme"
      ? { type: "apiKey", in: s.location, name: s.name, ...described }
      : kind === "httpAuthSecurityScheme"
        ? { type: "http", scheme: s.scheme, bearerFormat: s.bearerFormat, ...described }
        : kind === "oauth2SecurityScheme"
          ? { type: "oauth2", flows: s.flows, ...described }
          : kind === "mtlsSecurityScheme"
            ? { type: "mutualTLS", ...described }
            : kind === "openIdConnectSecurityScheme"
              ? { type: "openIdConnect", openIdConnectUrl: s.openIdConnectUrl, ...described }
              : null,
  );
  return parsed.success ? compact(parsed.data) : null;
}

/** Reads an Edgelink card back from the v1 JSON it rendered, profile extension included. */
export function cardFromV1(json: JsonObject): AgentCard {
  const caps = (json.capabilities ?? {}) as JsonObject;
  const declared = (caps.extensions ?? []) as JsonObject[];
  const ext = declared.find((e) => e.uri === PROFILE_EXTENSION);
  const params = (ext?.params ?? {}) as JsonObject;
  const skillExtras = (params.skills ?? {}) as Record<string, JsonObject>;
  const interfaces = (json.supportedInterfaces ?? []) as JsonObject[];
  return AgentCard.parse({
    name: json.name,
    description: json.description,
    url: interfaces[0]?.url,
    transport: params.transport,
    version: json.version,
    capabilities: params.capabilities,
    skills: ((json.skills ?? []) as JsonObject[]).map((s) => ({
      id: s.id,
      name: s.name,
      description: s.description,
      tags: s.tags,
      inputModes: s.inputModes,
      outputModes: s.outputModes,
      ...skillExtras[s.id as string],
    })),
    inputFormats: json.defaultInputModes,
    outputFormats: json.defaultOutputModes,
    role: params.role,
    tags: params.tags,
    extensions: declared.filter((e) => e.uri !== PROFILE_EXTENSION),
    securitySchemes: Object.fromEntries(
      Object.entries((json.securitySchemes ?? {}) as Record<string, JsonObject>).flatMap(
        ([name, wrapper]) => {
          const scheme = schemeFromV1(wrapper);
          return scheme ? [[name, scheme]] : [];
        },
      ),
    ),
    provider: json.provider,
    documentationUrl: json.documentationUrl,
    iconUrl: json.iconUrl,
  });
}
