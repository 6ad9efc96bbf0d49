import { type A2AError, invalidParams } from "../protocol/errors";
import { classifyIPv4, classifyIPv6, parseIPv4, parseIPv6 } from "./ip";

/**
 * Which webhook URLs an agent will POST to (A2A §13.2: agents SHOULD validate webhook URLs
 * against SSRF).
 *
 * What is checked: the scheme (https only), credentials in the URL, every IP literal in
 * every spelling the WHATWG URL parser accepts (it normalizes 2130706433, 0x7f000001,
 * 0177.0.0.1 and 127.1 to 127.0.0.1 and IPv6 to compressed hex, so one parse of
 * `url.hostname` sees them all), and host names that only resolve inside a private
 * network (localhost, *.local, *.internal, metadata.google.internal, single labels).
 *
 * What cannot be checked on Workers: what a public-looking name resolves to. There is no
 * DNS API, and a check before the request could be undone by DNS rebinding between the
 * check and the fetch anyway. On a deployed Worker this matters little: `fetch()` leaves
 * from Cloudflare's network to the public Internet and has no route into the deployer's
 * private network or a cloud metadata service (private networks are reachable only
 * through explicit bindings such as Tunnel/VPC services, which `fetch(url)` does not use).
 * Under `wrangler dev`, though, fetch runs on the developer's machine, so a name such as
 * `127.0.0.1.nip.io` would reach local services: keep `allowLocalhost` a dev-only setting
 * and do not run dev agents with untrusted clients.
 *
 * Redirects are a second way around a policy: deliveries use `redirect: "manual"` and
 * treat a 3xx as a permanent failure (see delivery.ts), so only checked URLs are fetched.
 */

export interface UrlPolicyOptions {
  /**
   * The dev/test setting: also accept `http://` and `https://` to exactly `localhost`,
   * `127.0.0.1` and `[::1]` (local development and conformance suites). Off in production.
   */
  allowLocalhost: boolean;
  /** The field named in the error (e.g. `pushNotificationConfig.url`). Default `url`. */
  field?: string;
}

/** The dev/test hosts `allowLocalhost` opens, as `URL.hostname` spells them. */
const LOCAL_DEV_HOSTS = new Set(["localhost", "127.0.0.1", "[::1]"]);

/**
 * Suffixes that name hosts inside private networks: RFC 6761/6762 (localhost, local),
 * RFC 8375 (home.arpa), ICANN's reserved private-use TLD (internal, which also covers
 * metadata.google.internal and AWS's *.ec2.internal) and common corporate conventions.
 */
const INTERNAL_SUFFIXES = [
  "localhost",
  "local",
  "localdomain",
  "internal",
  "intranet",
  "intra",
  "corp",
  "lan",
  "home",
  "private",
  "home.arpa",
];

const MAX_URL_LENGTH = 2048;

/**
 * Checks a webhook URL against the policy and returns it parsed and normalized, fragment
 * dropped (store `href`: it is also the `aud` of the delivery signature).
 * @throws A2AError `InvalidParams` naming the field, with a message saying why.
 * @example
 * checkWebhookUrl("https://hooks.example.com/a2a", { allowLocalhost: false }).href;
 * // "https://hooks.example.com/a2a"
 * checkWebhookUrl("https://2130706433/", { allowLocalhost: false });
 * // throws InvalidParams: "url: 127.0.0.1 is a loopback address; ..."
 */
export function checkWebhookUrl(url: string, options: UrlPolicyOptions): URL {
  const field = options.field ?? "url";
  const refuse = (why: string): A2AError =>
    invalidParams([{ path: [field], message: `webhook URL refused: ${why}` }]);

  if (url.length > MAX_URL_LENGTH) throw refuse(`longer than ${MAX_URL_LENGTH} characters`);
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw refuse("not a valid absolute URL");
  }
  if (parsed.username || parsed.password) {
    throw refuse("credentials in the URL are not allowed; use `authentication` instead");
  }

  const host = parsed.hostname;
  const isLocalDev = options.allowLocalhost && LOCAL_DEV_HOSTS.has(host);
  if (parsed.protocol !== "https:" && !(isLocalDev && parsed.protocol === "http:")) {
    throw refuse(
      options.allowLocalhost
        ? `it must use https (http is allowed only to localhost, 127.0.0.1 and [::1]), got "${parsed.protocol}"`
        : `it must use https, got "${parsed.protocol}"`,
    );
  }
  if (isLocalDev) return withoutFragment(parsed);

  const why = hostVerdict(host);
  if (why) throw refuse(`${host} is ${why}; webhooks must be publicly reachable`);
  return withoutFragment(parsed);
}

/** fetch never sends a fragment; dropping it keeps the stored URL equal to what the
 * receiver sees, which matters because the URL is the signature's audience. */
function withoutFragment(url: URL): URL {
  url.hash = "";
  return url;
}

/**
 * Why a URL host is refused, or null. `host` is `URL.hostname`: lower case, IPv6 in
 * brackets, IPv4 already normalized to dotted decimal.
 */
export function hostVerdict(host: string): string | null {
  if (host.startsWith("[")) {
    const groups = parseIPv6(host.slice(1, -1));
    return groups ? classifyIPv6(groups) : "not a valid IPv6 address";
  }
  const v4Address = parseIPv4(host);
  if (v4Address !== null) return classifyIPv4(v4Address);

  // "localhost." and "localhost" are the same name to DNS.
  const name = host.replace(/\.+$/, "");
  if (!name.includes(".")) {
    return name === "localhost"
      ? "a loopback name"
      : "a single-label name, which only resolves inside a private network";
  }
  for (const suffix of INTERNAL_SUFFIXES) {
    if (name === suffix || name.endsWith(`.${suffix}`)) {
      return `an internal name (*.${suffix})`;
    }
  }
  return null;
}
