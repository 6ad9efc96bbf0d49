import { readBounded } from "../protocol/bounded-body";
import { JwksUnavailableError } from "./errors";

/** Limits of one fetch of a key set or a discovery document. */
export interface BoundedFetchOptions {
  /** Fetch to use (default global fetch). */
  fetch?: typeof fetch;
  /** Time limit for the whole fetch, body included. */
  timeoutMs: number;
  /** Size limit of the response body. */
  maxBytes: number;
}

/**
 * GETs `url` and parses its JSON body, or throws JwksUnavailableError: only a 200 is
 * accepted (a redirect is never followed: it could lead the verifier to keys an attacker
 * serves), within `timeoutMs`, at most `maxBytes` read.
 */
export async function fetchBoundedJson(
  url: string,
  options: BoundedFetchOptions,
): Promise<unknown> {
  const signal = AbortSignal.timeout(options.timeoutMs);
  let response: Response;
  try {
    response = await (options.fetch ?? fetch)(url, {
      method: "GET",
      redirect: "manual",
      headers: { Accept: "application/json, application/jwk-set+json" },
      signal,
    });
  } catch (error) {
    throw new JwksUnavailableError(`fetching ${url} failed (${describe(error)})`);
  }
  if (response.status !== 200) {
    // An unread body keeps the connection (and, in Workers, the request) busy.
    await response.body?.cancel().catch(() => {});
    const redirect = response.status >= 300 && response.status < 400;
    throw new JwksUnavailableError(
      `${url} answered ${response.status}, not 200${redirect ? " (redirects are not followed)" : ""}`,
    );
  }
  const text = await readLimited(response, options.maxBytes, url);
  try {
    return JSON.parse(text);
  } catch {
    throw new JwksUnavailableError(`${url} did not answer JSON`);
  }
}

/** The body as text, refused past `maxBytes`: our failure to fetch keys, named as such. */
async function readLimited(response: Response, maxBytes: number, url: string): Promise<string> {
  let text: string | null;
  try {
    text = await readBounded(response, maxBytes);
  } catch (error) {
    throw new JwksUnavailableError(`reading ${url} failed (${describe(error)})`);
  }
  if (text === null) throw new JwksUnavailableError(`${url} answered more than ${maxBytes} bytes`);
  return text;
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
