import type { Context } from "hono";
import type { ContextIdGuard } from "../agent/routes";
import { A2AError } from "../protocol/errors";
import {
  type IdScope,
  idKeys,
  LOCAL_ID_SECRET_OBJECT,
  type LocalSecretHolder,
  type LocalSecretSource,
  looksIssued,
  MAX_CONTEXT_ID_LENGTH,
  readyIdKeys,
  verifiedBefore,
  verifyContextId,
} from "../storage/ids";
import type { ContextVerifier } from "./route-scope";

/** What verifying an agent's context ids needs of it. */
export interface ContextIdPolicy {
  /** Whether client-chosen context ids (not issued by this agent) are accepted. */
  readonly clientContextIds: boolean;
  /** The index namespace's binding, where a local run keeps its generated id key. */
  readonly indexBinding: string;
}

/** A normalized URL's origin (`Request.url` is one), read without parsing the URL. */
export function originOf(url: string): string {
  const end = url.indexOf("/", url.indexOf("//") + 2);
  return end < 0 ? url : url.slice(0, end);
}

/** Under wrangler dev without EDGELINK_ID_KEY: the object that keeps the generated secret. */
export function localSecretHolder(env: unknown, binding: string): LocalSecretHolder {
  return {
    localSecretSource: () => {
      const ns = (env as Record<string, DurableObjectNamespace | undefined>)[binding];
      if (!ns || typeof ns.idFromName !== "function") {
        throw new A2AError(
          "Internal",
          `Durable Object binding ${binding} is missing; declare it in wrangler.toml`,
        );
      }
      return ns.get(ns.idFromName(LOCAL_ID_SECRET_OBJECT)) as unknown as LocalSecretSource;
    },
  };
}

/**
 * A context id a client names, for the caller `ids`. One of the shape Edgelink issues must
 * verify for this caller (null when it does not: forged, or another caller's); any other
 * is a client-chosen id, refused unless the agent accepts those (a `filter` gets null: no
 * context of this caller has it). Checked in the Worker, so a forged id reaches no object.
 */
export async function namedContext(
  policy: ContextIdPolicy,
  env: unknown,
  origin: string,
  ids: IdScope,
  contextId: string,
  field: string,
  use: ContextIdGuard["use"],
): Promise<string | null> {
  if (contextId.length > MAX_CONTEXT_ID_LENGTH) {
    throw new A2AError("InvalidParams", `${field} is too long`, {}, [
      { field, description: `at most ${MAX_CONTEXT_ID_LENGTH} characters` },
    ]);
  }
  if (looksIssued(contextId)) {
    const keys = await idKeys(env, origin, localSecretHolder(env, policy.indexBinding));
    return (await verifyContextId(keys, ids, contextId)) ? contextId : null;
  }
  if (policy.clientContextIds) return contextId;
  if (use === "filter") return null;
  throw new A2AError(
    "InvalidParams",
    `${field}: this agent does not accept client-chosen context ids`,
    { contextId },
    [
      {
        field,
        description: "omit it to start a conversation, or send a contextId this agent issued",
      },
    ],
  );
}

/**
 * The route table's context-id verifier for an agent: a context id not issued to this
 * caller (and not an accepted client-chosen id) is refused before any object is named:
 * invalid for a write (400 naming the field), not found for a read, nothing for a filter.
 */
export function contextVerifier(policy: ContextIdPolicy): ContextVerifier {
  const verify = async (
    c: Context,
    ids: IdScope,
    origin: string,
    value: string,
    field: string,
    use: ContextIdGuard["use"],
  ) => {
    const named = await namedContext(policy, c.env, origin, ids, value, field, use);
    if (named !== null || use === "filter") return named;
    if (use === "read") {
      throw new A2AError(
        "ContextNotFound",
        `Context ${value} not found (${field} is not a context id this agent issued to this caller)`,
        { contextId: value },
      );
    }
    throw new A2AError(
      "InvalidParams",
      `${field} ${value} is not a context id this agent issued to this caller`,
      { contextId: value },
      [{ field, description: "not issued by this agent to this caller" }],
    );
  };
  // A conversation's follow-ups name an id that verified before: answered without the
  // chain of awaits (keys, verification) a first sight of the id takes.
  return (c: Context, scope, value, field, use) => {
    const ids = { tenant: scope.tenant, owner: scope.owner };
    const origin = originOf(c.req.url);
    if (value.length <= MAX_CONTEXT_ID_LENGTH && looksIssued(value)) {
      const keys = readyIdKeys(c.env, origin);
      if (keys && verifiedBefore(keys, ids, value)) return Promise.resolve(value);
    }
    return verify(c, ids, origin, value, field, use);
  };
}
