import { CredentialPolicyError } from "./errors";

/**
 * Where the client may send credentials: the origin the operator connected to, plus the
 * origins the operator listed; `"any"` for a fetch that reaches one peer whatever the URL
 * says (a service binding). `carries` is false when there are no credentials to protect.
 */
export interface CredentialScope {
  readonly carries: boolean;
  readonly origins: ReadonlySet<string> | "any";
}

/**
 * The scope of a connection: `configured` is the URL the operator gave (or the endpoint
 * of a card the operator gave), `trusted` the `trustedOrigins` option.
 */
export function credentialScope(
  carries: boolean,
  configured: string,
  trusted: readonly string[] | "any" | undefined,
): CredentialScope {
  if (trusted === "any") return { carries, origins: "any" };
  const origins = new Set([new URL(configured).origin]);
  for (const entry of trusted ?? []) origins.add(originOf(entry));
  return { carries, origins };
}

function originOf(entry: string): string {
  let url: URL;
  try {
    url = new URL(entry);
  } catch {
    throw new TypeError(`trustedOrigins: ${JSON.stringify(entry)} is not a URL`);
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") {
    throw new TypeError(`trustedOrigins: ${entry} is not an http(s) origin`);
  }
  return url.origin;
}

/** Refuses an endpoint outside the scope, when there are credentials to send to it. */
export function requireTrusted(scope: CredentialScope, url: string, what: string): void {
  if (!scope.carries || scope.origins === "any") return;
  const origin = new URL(url).origin;
  if (scope.origins.has(origin)) return;
  throw new CredentialPolicyError(
    `${what} is ${url}, on ${origin}, not an origin this client was given credentials for (${[...scope.origins].join(", ")}); add it to trustedOrigins (CLI: --trust-origin) if it is yours`,
    url,
  );
}

/**
 * The `redirect` mode of a request: one that carries credentials must not be followed
 * (fetch would resend custom headers, API keys among them, to wherever it leads).
 */
export const redirectMode = (scope: CredentialScope): RequestInit["redirect"] =>
  scope.carries ? "manual" : "follow";

/**
 * Where a response redirects to, if it is a redirect: its `Location` resolved against the
 * request URL, "" when a browser hides it (an opaque redirect), null when it is none.
 */
export function redirectTarget(response: Response, requestUrl: string): string | null {
  // Browsers answer a manual redirect with an opaque response (Workers and Node do not).
  if ((response.type as string) === "opaqueredirect") return "";
  if (![301, 302, 303, 307, 308].includes(response.status)) return null;
  const location = response.headers.get("Location");
  if (location === null) return null;
  try {
    return new URL(location, requestUrl).href;
  } catch {
    return "";
  }
}

/**
 * Refuses a response that is, or followed, a redirect of a credentialed request: the
 * client never sends credentials on to where a redirect leads.
 */
export async function refuseRedirect(
  scope: CredentialScope,
  response: Response,
  requestUrl: string,
): Promise<void> {
  if (!scope.carries) return;
  const target = response.redirected ? response.url : redirectTarget(response, requestUrl);
  if (target === null) return;
  await response.body?.cancel().catch(() => {});
  throw new CredentialPolicyError(
    `${requestUrl} redirected${target ? ` to ${target}` : ""}; credentials are not sent after a redirect: connect to the final URL (and list its origin in trustedOrigins if it is another)`,
    target || requestUrl,
  );
}
