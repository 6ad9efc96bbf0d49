/** Who is asking, for choosing a memory scope. */
export interface MemoryWho {
  tenant: string;
  /** The caller's owner (`ownerOf`); "" for an anonymous caller. */
  owner: string;
  /** The conversation, when there is one (a model turn; an API call naming it). */
  contextId?: string;
}

/**
 * Whose memory a turn or an API call reaches: `"owner"` (the default) is one user's
 * memory across all their conversations; `"context"` one conversation's (of that owner);
 * a function returns a key of its own (for example a team id from the token's claims).
 * An empty key means no memory for this caller.
 */
export type MemoryScope = "owner" | "context" | ((who: MemoryWho) => string);

/** The scope key of a caller; "" when it has none (anonymous callers never have one). */
export function scopeKeyOf(scope: MemoryScope, who: MemoryWho): string {
  if (typeof scope === "function") return scope(who);
  if (who.owner === "") return "";
  if (scope === "owner") return who.owner;
  // Context ids may be named by clients: the owner keeps two owners' same-named apart.
  return who.contextId ? JSON.stringify(["context", who.owner, who.contextId]) : "";
}
