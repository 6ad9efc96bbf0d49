/**
 * IP literal parsing and classification for the webhook URL policy. Only canonical forms
 * need parsing: `new URL()` has already turned every odd IPv4 spelling (2130706433,
 * 0x7f000001, 0177.0.0.1, 127.1) into dotted decimal, and IPv6 into compressed hex.
 */

/** Why an address is refused, or null when it is globally reachable unicast. */
export type AddressVerdict = string | null;

interface V4Range {
  base: number;
  bits: number;
  label: string;
}

const v4 = (cidr: string, label: string): V4Range => {
  const [addr = "", bits = "32"] = cidr.split("/");
  return { base: parseIPv4(addr) ?? 0, bits: Number(bits), label };
};

// Order matters: the first match names the refusal, so specific entries (metadata,
// broadcast) come before the ranges that contain them. The list follows the IANA IPv4
// special-purpose registry: nothing in it is a reachable public webhook.
const V4_REFUSED: readonly V4Range[] = [
  v4("0.0.0.0/8", "an unspecified (this-network) address"),
  v4("10.0.0.0/8", "a private address (10.0.0.0/8)"),
  v4("100.64.0.0/10", "a shared carrier-grade NAT address (100.64.0.0/10)"),
  v4("127.0.0.0/8", "a loopback address"),
  v4("169.254.169.254/32", "the cloud metadata service address"),
  v4("169.254.0.0/16", "a link-local address"),
  v4("172.16.0.0/12", "a private address (172.16.0.0/12)"),
  v4("192.0.0.0/24", "an IETF protocol-assignment address (192.0.0.0/24)"),
  v4("192.0.2.0/24", "a documentation address"),
  v4("192.88.99.0/24", "a deprecated 6to4 relay address"),
  v4("192.168.0.0/16", "a private address (192.168.0.0/16)"),
  v4("198.18.0.0/15", "a benchmarking address"),
  v4("198.51.100.0/24", "a documentation address"),
  v4("203.0.113.0/24", "a documentation address"),
  v4("224.0.0.0/4", "a multicast address"),
  v4("255.255.255.255/32", "the broadcast address"),
  v4("240.0.0.0/4", "a reserved address (240.0.0.0/4)"),
];

/** Dotted-decimal IPv4 to an unsigned 32-bit number, or null. */
export function parseIPv4(text: string): number | null {
  const parts = text.split(".");
  if (parts.length !== 4) return null;
  let value = 0;
  for (const part of parts) {
    if (!/^\d{1,3}$/.test(part)) return null;
    const octet = Number(part);
    if (octet > 255) return null;
    value = value * 256 + octet;
  }
  return value;
}

/** Why this IPv4 address (as a 32-bit number) is refused, or null. */
export function classifyIPv4(address: number): AddressVerdict {
  for (const range of V4_REFUSED) {
    const size = 2 ** (32 - range.bits);
    if (address >= range.base && address < range.base + size) return range.label;
  }
  return null;
}

/**
 * IPv6 text (no brackets, no zone) to eight 16-bit groups, or null. Accepts `::`
 * compression and a trailing dotted IPv4 (`::ffff:10.0.0.1`).
 */
export function parseIPv6(text: string): number[] | null {
  let head = text;
  const tail: number[] = [];
  const lastColon = head.lastIndexOf(":");
  if (head.includes(".")) {
    const v4Value = parseIPv4(head.slice(lastColon + 1));
    if (v4Value === null) return null;
    tail.push(Math.floor(v4Value / 65536), v4Value % 65536);
    // Keep the colon so "::1.2.3.4" still ends in "::".
    head = head.slice(0, lastColon + 1);
    if (head.endsWith(":") && !head.endsWith("::")) head = head.slice(0, -1);
  }
  const halves = head.split("::");
  if (halves.length > 2) return null;
  const group = (s: string): number[] | null => {
    if (s === "") return [];
    const out: number[] = [];
    for (const piece of s.split(":")) {
      if (!/^[0-9a-f]{1,4}$/i.test(piece)) return null;
      out.push(Number.parseInt(piece, 16));
    }
    return out;
  };
  const left = group(halves[0] ?? "");
  const right = halves.length === 2 ? group(halves[1] ?? "") : [];
  if (!left || !right) return null;
  const known = left.length + right.length + tail.length;
  if (halves.length === 2) {
    if (known > 7) return null;
    return [...left, ...new Array<number>(8 - known).fill(0), ...right, ...tail];
  }
  return known === 8 ? [...left, ...tail] : null;
}

const startsWith = (groups: readonly number[], prefix: readonly number[], bits: number) => {
  for (let i = 0; i * 16 < bits; i++) {
    const take = Math.min(16, bits - i * 16);
    const mask = (0xffff << (16 - take)) & 0xffff;
    if (((groups[i] ?? 0) & mask) !== ((prefix[i] ?? 0) & mask)) return false;
  }
  return true;
};

interface V6Range {
  prefix: number[];
  bits: number;
  label: string;
}

const v6 = (cidr: string, label: string): V6Range => {
  const [addr = "", bits = "128"] = cidr.split("/");
  return { prefix: parseIPv6(addr) ?? [], bits: Number(bits), label };
};

// Specific labels first; anything else outside 2000::/3 (global unicast) is refused below.
const V6_REFUSED: readonly V6Range[] = [
  v6("::/128", "the unspecified address"),
  v6("::1/128", "a loopback address"),
  v6("::ffff:0:0/96", "an IPv4-mapped IPv6 address"),
  v6("::/96", "an IPv4-compatible IPv6 address"),
  v6("64:ff9b::/96", "a NAT64 address embedding IPv4"),
  v6("64:ff9b:1::/48", "a local-use NAT64 address"),
  v6("100::/64", "a discard-only address"),
  v6("fd00:ec2::254/128", "the cloud metadata service address"),
  v6("fc00::/7", "a unique-local address (fc00::/7)"),
  v6("fe80::/10", "a link-local address"),
  v6("fec0::/10", "a deprecated site-local address"),
  v6("ff00::/8", "a multicast address"),
  v6("2001:db8::/32", "a documentation address"),
  v6("3fff::/20", "a documentation address"),
  v6("2001::/23", "an IETF special-purpose address (Teredo, ORCHID, …)"),
  v6("2002::/16", "a 6to4 address embedding IPv4"),
];

/** Why this IPv6 address (eight groups) is refused, or null. */
export function classifyIPv6(groups: readonly number[]): AddressVerdict {
  for (const range of V6_REFUSED) {
    if (startsWith(groups, range.prefix, range.bits)) return range.label;
  }
  // Only 2000::/3 is allocated as global unicast; the rest is reserved.
  if (((groups[0] ?? 0) & 0xe000) !== 0x2000) return "a reserved IPv6 address";
  return null;
}
