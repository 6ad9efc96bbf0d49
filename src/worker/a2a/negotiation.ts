import type { Agent } from "../../agent/definition";
import { A2AError } from "../../protocol/errors";
import { isKnownPart, type Part } from "../../protocol/part";

/** The card's required extensions, per agent: its card is fixed once it is defined. */
const requiredByAgent = new WeakMap<object, readonly string[]>();
function requiredExtensions(agent: Agent<unknown>): readonly string[] {
  let required = requiredByAgent.get(agent.card);
  if (!required) {
    required = agent.card.extensions.filter((e) => e.required).map((e) => e.uri);
    requiredByAgent.set(agent.card, required);
  }
  return required;
}

/**
 * Refuses a request that does not declare every extension the card marks required
 * (§3.3.4), read from the comma-separated `A2A-Extensions` header.
 */
export function requireExtensions(request: Request, agent: Agent<unknown>): void {
  const required = requiredExtensions(agent);
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

/** The option that turns each kind of client control part on. */
const OPT_IN = { infer: "acceptInfer", tool_call: "acceptToolCalls" } as const;

/**
 * Refuses `infer` and `tool_call` parts the agent does not accept from clients (by default
 * none, for an agent with a model), naming the part and the option that turns them on.
 * Checked in the Worker before routing, so a refused message creates no task and stores
 * nothing, and the client learns why at once instead of from a failed task.
 */
export function requireAcceptedParts(parts: readonly Part[], agent: Agent<unknown>): void {
  parts.forEach((part, i) => {
    if (part.type !== "infer" && part.type !== "tool_call") return;
    if (part.type === "infer" ? agent.acceptInfer : agent.acceptToolCalls) return;
    const option = OPT_IN[part.type];
    const field = `params.message.parts.${i}`;
    throw new A2AError(
      "InvalidParams",
      `${field}: this agent does not accept ${part.type} parts from clients (its operator can turn them on with ${option}: true)`,
      { part: part.type, option },
      [{ field, description: `${part.type} parts are not accepted; send text or data` }],
    );
  });
}
