/**
 * How the client authenticates to an agent. Tokens and keys are sent on every request
 * (the card fetch included) to the origin connected to, or one in `trustedOrigins`, and
 * never after a redirect; a bearer function is asked again with `refresh: true` once
 * after a 401, so an expired token is renewed without failing the call. A key goes in
 * the query string only with `in: "query"`, even if the agent's card asks for it there.
 * @example
 * { bearer: "s3cret" }
 * { bearer: async ({ refresh }) => (refresh ? await renew() : cached) }
 * { apiKey: "k-123" }                          // header named by the card, else X-API-Key
 * { apiKey: "k-123", name: "api_key", in: "query" }
 */
export type Auth =
  | { bearer: string | TokenSource }
  | { apiKey: string; name?: string; in?: "header" | "query" };

/** Returns the current token; `refresh` is true when the last one was refused (401). */
export type TokenSource = (request: { refresh: boolean }) => string | Promise<string>;

/** Where an API key goes when the call does not say: the card's apiKey scheme, if any. */
export interface ApiKeyPlacement {
  name: string;
  in: "header" | "query" | "cookie";
}

/** Applies `auth` to a request's headers and URL. */
export async function applyAuth(
  auth: Auth | undefined,
  headers: Headers,
  url: URL,
  options: { refresh: boolean; cardApiKey: ApiKeyPlacement | undefined },
): Promise<void> {
  if (!auth) return;
  if ("bearer" in auth) {
    const token =
      typeof auth.bearer === "string"
        ? auth.bearer
        : await auth.bearer({ refresh: options.refresh });
    headers.set("Authorization", `Bearer ${token}`);
    return;
  }
  const placement = auth.name
    ? { name: auth.name, in: auth.in ?? "header" }
    : (options.cardApiKey ?? { name: "X-API-Key", in: "header" as const });
  if (placement.in === "query") url.searchParams.set(placement.name, auth.apiKey);
  else if (placement.in === "cookie") headers.append("Cookie", `${placement.name}=${auth.apiKey}`);
  else headers.set(placement.name, auth.apiKey);
}

/** Whether a 401 may be retried with a refreshed token. */
export const canRefresh = (auth: Auth | undefined): boolean =>
  auth !== undefined && "bearer" in auth && typeof auth.bearer === "function";
