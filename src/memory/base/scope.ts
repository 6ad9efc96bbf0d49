/**
 * Name of the Durable Object holding one memory: a tenant and a scope key (by default the
 * caller's owner, see `ownerOf`). Both are escaped, so no tenant or key can spell another
 * pair's name, and the "m:" prefix keeps memory names apart from conversations' and
 * indexes'. Anonymous callers have no memory: an empty key is refused here.
 * @example
 * memoryObjectName("acme", '["bearer","https://login.example.com/","u1"]');
 */
export function memoryObjectName(tenant: string, scopeKey: string): string {
  if (scopeKey === "") throw new TypeError("memory: an anonymous caller has no memory scope");
  return `m:${encodeURIComponent(tenant)}/${encodeURIComponent(scopeKey)}`;
}
