import * as z from "zod";
import { JsonObject, newId, nowIso } from "./json";
import { Part, Parts } from "./part";

/**
 * Output of a task. Every key is present in the stored shape; the optional
 * descriptors are null rather than absent.
 */
export const Artifact = z.object({
  artifactId: z
    .string()
    .min(1)
    .default(() => newId()),
  parts: z.array(Part).default([]),
  metadata: JsonObject.default({}),
  timestamp: z.iso.datetime().default(() => nowIso()),
  kind: z.string().min(1).default("result"),
  name: z.string().nullable().default(null),
  description: z.string().nullable().default(null),
  uri: z.string().nullable().default(null),
  mediaType: z.string().nullable().default(null),
  actionId: z.string().nullable().default(null),
  extensions: z.array(z.string()).optional(),
});
export type Artifact = z.infer<typeof Artifact>;
export type ArtifactInput = z.input<typeof Artifact>;

/**
 * Artifact factory and chainable edits.
 * @example
 * const a = Artifacts.addText(Artifacts.create({ name: "answer" }), "42");
 */
export const Artifacts = {
  create: (input: ArtifactInput = {}): Artifact => Artifact.parse(input),
  addPart: (artifact: Artifact, part: Part): Artifact => {
    artifact.parts.push(part);
    return artifact;
  },
  addText: (artifact: Artifact, text: string): Artifact => {
    artifact.parts.push(Parts.text(text));
    return artifact;
  },
  forAction: (artifact: Artifact, actionId: string): Artifact => {
    artifact.actionId = actionId;
    return artifact;
  },
} as const;
