import type { Agent } from "../agent/definition";
import { A2AError } from "../models/errors";
import { isKnownPart, type Part } from "../models/part";

/**
 * Refuses a request that does not declare every extension the card marks required
 * (§3.3.4), read from the comma-separated `A2A-Extensions` header.
 */
export function requireExtensions(request: Request, agent: Agent<unknown>): void {
  const required = agent.card.extensions.filter((e) => e.required).map((e) => e.uri);
  if (required.length === 0) return;
  const declared = new Set(
    (request.headers.get("A2A-Extensions") ?? "")
      .split(",")
      .map((s) => s.trim())
      .filter(Boolean),
  );
  const missing = required.filter((uri) => !declared.has(uri));
  if (missing.length) {
    throw new A2AError(
      "ExtensionSupportRequired",
      `This agent requires the extension(s) ${missing.join(", ")}; declare them in the A2A-Extensions header`,
      { extensions: missing.join(",") },
    );
  }
}

function accepts(formats: readonly string[], mediaType: string): boolean {
  const type = mediaType.split(";")[0]?.trim().toLowerCase() ?? "";
  const family = `${type.split("/")[0]}/*`;
  return formats.some((f) => {
    const format = f.toLowerCase();
    return format === "*/*" || format === type || format === family;
  });
}

/**
 * Refuses message parts whose declared media type the card's `inputFormats` do not list
 * (ContentTypeNotSupportedError). Parts without a media type, and Edgelink's own control
 * parts (tool calls and the like), are not media and always pass.
 */
export function requireInputFormats(parts: readonly Part[], agent: Agent<unknown>): void {
  parts.forEach((part, i) => {
    if (!isKnownPart(part)) return;
    const mediaType =
      part.type === "file"
        ? part.content.mediaType
        : part.type === "text" || part.type === "data"
          ? part.mediaType
          : undefined;
    if (mediaType && !accepts(agent.card.inputFormats, mediaType)) {
      throw new A2AError(
        "ContentTypeNotSupported",
        `Media type ${mediaType} is not supported; this agent accepts ${agent.card.inputFormats.join(", ")}`,
        { mediaType },
        [{ field: `params.message.parts.${i}.mediaType`, description: "unsupported media type" }],
      );
    }
  });
}
