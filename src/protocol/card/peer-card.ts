import * as z from "zod";
import { JsonObject } from "../json";

/**
 * Another agent's card as a client reads it: the A2A v1.0 card, or a v0.3 card turned
 * into the same shape (its `url`/`preferredTransport`/`additionalInterfaces` become
 * `supportedInterfaces` with protocol version 0.3). Unknown members are kept, so nothing
 * the agent published is lost; only what a client acts on is checked.
 */

export const PeerInterface = z.object({
  url: z.string().min(1, "url is required"),
  protocolBinding: z.string().min(1, "protocolBinding is required"),
  /** "1.0", "0.3" ...; a v1 interface that omits it is taken as 1.0. */
  protocolVersion: z.string().default("1.0"),
  tenant: z.string().optional(),
});
export type PeerInterface = z.infer<typeof PeerInterface>;

const Skill = z.looseObject({
  id: z.string(),
  name: z.string().default(""),
  description: z.string().default(""),
  tags: z.array(z.string()).default([]),
  examples: z.array(z.string()).optional(),
});

const Capabilities = z.looseObject({
  streaming: z.boolean().optional(),
  pushNotifications: z.boolean().optional(),
  extendedAgentCard: z.boolean().optional(),
  extensions: z
    .array(
      z.looseObject({
        uri: z.string(),
        required: z.boolean().optional(),
        description: z.string().optional(),
        params: JsonObject.optional(),
      }),
    )
    .optional(),
});

export const PeerCard = z.looseObject({
  name: z.string().min(1, "name is required"),
  description: z.string().default(""),
  version: z.string().default(""),
  supportedInterfaces: z.array(PeerInterface).min(1, "at least one interface is required"),
  capabilities: Capabilities.default({}),
  skills: z.array(Skill).default([]),
  defaultInputModes: z.array(z.string()).default([]),
  defaultOutputModes: z.array(z.string()).default([]),
  securitySchemes: z.record(z.string(), JsonObject).optional(),
  provider: z.looseObject({ organization: z.string(), url: z.string().optional() }).optional(),
  documentationUrl: z.string().optional(),
  iconUrl: z.string().optional(),
});
export type PeerCard = z.infer<typeof PeerCard>;
export type PeerCardInput = z.input<typeof PeerCard>;

const V03Card = z.looseObject({
  name: z.string(),
  url: z.string().min(1, "url is required"),
  protocolVersion: z.string().optional(),
  preferredTransport: z.string().default("JSONRPC"),
  additionalInterfaces: z.array(z.object({ url: z.string(), transport: z.string() })).optional(),
  capabilities: JsonObject.optional(),
  supportsAuthenticatedExtendedCard: z.boolean().optional(),
});

/** Major.Minor of a version string ("0.3.0" → "0.3"). */
export function majorMinor(version: string): string {
  const m = /^(\d+)\.(\d+)/.exec(version.trim());
  return m ? `${Number(m[1])}.${Number(m[2])}` : version.trim();
}

/**
 * Reads a card of either version into a `PeerCard`.
 * @throws z.ZodError naming the bad field when the JSON is no agent card.
 * @example
 * const card = parsePeerCard(await (await fetch(url)).json());
 * card.supportedInterfaces[0]; // { url, protocolBinding: "JSONRPC", protocolVersion: "1.0" }
 */
export function parsePeerCard(json: unknown): PeerCard {
  const obj = (json ?? {}) as Record<string, unknown>;
  if (obj.supportedInterfaces !== undefined || obj.url === undefined) return PeerCard.parse(json);
  const v03 = V03Card.parse(json);
  const version = majorMinor(v03.protocolVersion ?? "0.3");
  const interfaces = [
    { url: v03.url, protocolBinding: v03.preferredTransport, protocolVersion: version },
    ...(v03.additionalInterfaces ?? []).map((i) => ({
      url: i.url,
      protocolBinding: i.transport,
      protocolVersion: version,
    })),
  ];
  const seen = new Set<string>();
  const { url: _url, preferredTransport: _p, additionalInterfaces: _a, ...rest } = v03;
  return PeerCard.parse({
    ...rest,
    capabilities: {
      ...v03.capabilities,
      extendedAgentCard: v03.supportsAuthenticatedExtendedCard ?? false,
    },
    supportedInterfaces: interfaces.filter((i) => {
      const key = `${i.protocolBinding} ${i.url}`;
      if (seen.has(key)) return false;
      seen.add(key);
      return true;
    }),
  });
}
