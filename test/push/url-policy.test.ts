import { describe, expect, it } from "vitest";
import { A2AError } from "../../src/protocol/errors";
import { parseIPv6 } from "../../src/push/ip";
import { checkWebhookUrl, type UrlPolicyOptions } from "../../src/push/url-policy";

const prod = { allowLocalhost: false };
const dev = { allowLocalhost: true };

/** The InvalidParams error a refused URL throws (fails the test if none is thrown). */
function refusal(url: string, options: UrlPolicyOptions = prod): A2AError {
  try {
    checkWebhookUrl(url, options);
  } catch (error) {
    expect(error).toBeInstanceOf(A2AError);
    return error as A2AError;
  }
  throw new Error(`${url} was accepted`);
}

describe("webhook URL policy (issue 5, spec §13.2): accepted", () => {
  it.each([
    ["https://hooks.example.com/a2a", "https://hooks.example.com/a2a"],
    ["https://hooks.example.com", "https://hooks.example.com/"],
    ["https://HOOKS.Example.com:8443/x?y=1", "https://hooks.example.com:8443/x?y=1"],
    ["https://8.8.8.8/hook", "https://8.8.8.8/hook"],
    ["https://[2606:4700:4700::1111]/hook", "https://[2606:4700:4700::1111]/hook"],
    ["https://example.com./hook", "https://example.com./hook"],
    ["https://xn--bcher-kva.example/", "https://xn--bcher-kva.example/"],
    // fetch never sends a fragment, and the stored URL is the signature's audience.
    ["https://hooks.example.com/a2a#section", "https://hooks.example.com/a2a"],
    ["https://bücher.example/", "https://xn--bcher-kva.example/"],
    // Names that merely contain an internal word are public.
    ["https://localhost.example.com/", "https://localhost.example.com/"],
    ["https://internal.example.com/", "https://internal.example.com/"],
  ])("%s → %s", (url, href) => {
    expect(checkWebhookUrl(url, prod).href).toBe(href);
  });
});

describe("webhook URL policy: scheme", () => {
  it.each([
    "http://hooks.example.com/a2a",
    "ftp://hooks.example.com/",
    "ws://hooks.example.com/",
    "wss://hooks.example.com/",
    "file:///etc/passwd",
    "data:text/plain,hi",
    "javascript:alert(1)",
  ])("refuses %s (https only)", (url) => {
    expect(refusal(url).message).toMatch(/url: webhook URL refused: it must use https/);
  });

  it("http is refused for public hosts even with allowLocalhost", () => {
    expect(refusal("http://hooks.example.com/", dev).message).toMatch(
      /http is allowed only to localhost/,
    );
  });

  it.each(["not a url", "", "/relative/path", "https://", "https://exa mple.com/"])(
    "refuses the unparseable %j",
    (url) => {
      expect(refusal(url).message).toMatch(/not a valid absolute URL/);
    },
  );

  it("refuses credentials in the URL", () => {
    expect(refusal("https://user:pw@hooks.example.com/").message).toMatch(/credentials/);
  });

  it("refuses very long URLs", () => {
    expect(refusal(`https://hooks.example.com/${"a".repeat(2100)}`).message).toMatch(/longer/);
  });
});

describe("webhook URL policy: IPv4 literals", () => {
  it.each([
    ["https://127.0.0.1/", "loopback"],
    ["https://127.255.255.254/", "loopback"],
    ["https://10.0.0.1/", "private address \\(10"],
    ["https://10.255.255.255/", "private"],
    ["https://172.16.0.1/", "private address \\(172.16"],
    ["https://172.31.255.255/", "private"],
    ["https://192.168.1.1/", "private address \\(192.168"],
    ["https://100.64.0.1/", "carrier-grade NAT"],
    ["https://100.127.255.255/", "carrier-grade NAT"],
    ["https://100.100.100.200/", "carrier-grade NAT"], // Alibaba Cloud metadata
    ["https://169.254.169.254/latest/meta-data/", "cloud metadata"],
    ["https://169.254.1.1/", "link-local"],
    ["https://0.0.0.0/", "unspecified"],
    ["https://0.1.2.3/", "unspecified"],
    ["https://224.0.0.1/", "multicast"],
    ["https://239.255.255.250/", "multicast"],
    ["https://255.255.255.255/", "broadcast"],
    ["https://240.0.0.1/", "reserved"],
    ["https://192.0.0.192/", "IETF protocol-assignment"], // Oracle Cloud metadata
    ["https://192.0.2.1/", "documentation"],
    ["https://198.51.100.7/", "documentation"],
    ["https://203.0.113.9/", "documentation"],
    ["https://198.18.0.1/", "benchmarking"],
  ])("refuses %s (%s)", (url, why) => {
    const error = refusal(url);
    expect(error.kind).toBe("InvalidParams");
    expect(error.message).toMatch(new RegExp(why));
    expect(error.fieldViolations).toEqual([{ field: "url", description: expect.any(String) }]);
  });

  it.each([
    "https://172.15.255.255/",
    "https://172.32.0.1/",
    "https://100.63.255.255/",
    "https://100.128.0.1/",
    "https://169.253.255.255/",
    "https://11.0.0.1/",
    "https://192.169.0.1/",
    "https://223.255.255.255/",
  ])("accepts the public neighbour %s", (url) => {
    expect(() => checkWebhookUrl(url, prod)).not.toThrow();
  });

  // The URL parser turns every legacy IPv4 spelling into dotted decimal: the policy sees
  // the address fetch would connect to, not the spelling.
  it.each([
    ["https://2130706433/", "127.0.0.1", "loopback"],
    ["https://0x7f000001/", "127.0.0.1", "loopback"],
    ["https://0x7f.0.0.1/", "127.0.0.1", "loopback"],
    ["https://0177.0.0.1/", "127.0.0.1", "loopback"],
    ["https://127.1/", "127.0.0.1", "loopback"],
    ["https://127.0.1/", "127.0.0.1", "loopback"],
    ["https://127.0.0.1./", "127.0.0.1", "loopback"],
    ["https://0/", "0.0.0.0", "unspecified"],
    ["https://10.1/", "10.0.0.1", "private"],
    ["https://167772161/", "10.0.0.1", "private"],
    ["https://0xa9fea9fe/", "169.254.169.254", "cloud metadata"],
    ["https://0251.0376.0251.0376/", "169.254.169.254", "cloud metadata"],
    ["https://%31%32%37.0.0.1/", "127.0.0.1", "loopback"],
    ["https://１２７.０.０.１/", "127.0.0.1", "loopback"],
  ])("refuses the odd spelling %s (= %s)", (url, address, why) => {
    const { message } = refusal(url);
    expect(message).toContain(address);
    expect(message).toMatch(new RegExp(why));
  });
});

describe("webhook URL policy: IPv6 literals", () => {
  it.each([
    ["https://[::1]/", "loopback"],
    ["https://[0:0:0:0:0:0:0:1]/", "loopback"],
    ["https://[::]/", "unspecified"],
    ["https://[fe80::1]/", "link-local"],
    ["https://[febf::1]/", "link-local"],
    ["https://[fc00::1]/", "unique-local"],
    ["https://[fd12:3456::1]/", "unique-local"],
    ["https://[fd00:ec2::254]/", "cloud metadata"],
    ["https://[fec0::1]/", "site-local"],
    ["https://[ff02::1]/", "multicast"],
    ["https://[::ffff:10.0.0.1]/", "IPv4-mapped"],
    ["https://[::ffff:127.0.0.1]/", "IPv4-mapped"],
    ["https://[::ffff:7f00:1]/", "IPv4-mapped"],
    ["https://[::ffff:8.8.8.8]/", "IPv4-mapped"],
    ["https://[::127.0.0.1]/", "IPv4-compatible"],
    ["https://[::a00:1]/", "IPv4-compatible"],
    ["https://[64:ff9b::a9fe:a9fe]/", "NAT64"],
    ["https://[64:ff9b:1::1]/", "NAT64"],
    ["https://[2002:7f00:1::]/", "6to4"],
    ["https://[2001::1]/", "IETF special-purpose"],
    ["https://[2001:db8::1]/", "documentation"],
    ["https://[3fff::1]/", "documentation"],
    ["https://[100::1]/", "discard"],
    ["https://[4000::1]/", "reserved"],
    ["https://[1::1]/", "reserved"],
  ])("refuses %s (%s)", (url, why) => {
    expect(refusal(url).message).toMatch(new RegExp(why));
  });

  it.each([
    "https://[2606:4700:4700::1111]/",
    "https://[2001:4860:4860::8888]/",
    "https://[2a00:1450:4001::1]/",
    "https://[2001:200::1]/",
  ])("accepts the global unicast %s", (url) => {
    expect(() => checkWebhookUrl(url, prod)).not.toThrow();
  });

  it("parses IPv6 forms exactly (the classifier's input)", () => {
    expect(parseIPv6("::")).toEqual([0, 0, 0, 0, 0, 0, 0, 0]);
    expect(parseIPv6("::ffff:10.0.0.1")).toEqual([0, 0, 0, 0, 0, 0xffff, 0x0a00, 1]);
    expect(parseIPv6("1:2:3:4:5:6:1.2.3.4")).toEqual([1, 2, 3, 4, 5, 6, 0x0102, 0x0304]);
    expect(parseIPv6("fe80::1")).toEqual([0xfe80, 0, 0, 0, 0, 0, 0, 1]);
    expect(parseIPv6("1::2::3")).toBeNull();
    expect(parseIPv6("1:2:3:4:5:6:7")).toBeNull();
    expect(parseIPv6("1:2:3:4:5:6:7:8:9")).toBeNull();
    expect(parseIPv6("12345::")).toBeNull();
    expect(parseIPv6("::1.2.3")).toBeNull();
  });
});

describe("webhook URL policy: internal names", () => {
  it.each([
    ["https://localhost/", "loopback name"],
    ["https://LOCALHOST/", "loopback name"],
    ["https://localhost./", "loopback name"],
    ["https://api.localhost/", "\\*\\.localhost"],
    ["https://printer.local/", "\\*\\.local"],
    ["https://metadata.google.internal/computeMetadata/v1/", "\\*\\.internal"],
    ["https://ip-10-0-0-1.ec2.internal/", "\\*\\.internal"],
    ["https://wiki.intranet/", "\\*\\.intranet"],
    ["https://nas.home.arpa/", "\\*\\.home\\.arpa"],
    ["https://router.lan/", "\\*\\.lan"],
    ["https://db.corp/", "\\*\\.corp"],
    ["https://host.localdomain/", "\\*\\.localdomain"],
    ["https://intranet/", "single-label"],
    ["https://metadata/", "single-label"],
    ["https://webhook-receiver:8080/", "single-label"],
  ])("refuses %s (%s)", (url, why) => {
    expect(refusal(url).message).toMatch(new RegExp(why));
  });
});

describe("webhook URL policy: allowLocalhost (the dev/test setting)", () => {
  it.each([
    ["http://localhost:8788/hook", "http://localhost:8788/hook"],
    ["https://localhost/hook", "https://localhost/hook"],
    ["http://127.0.0.1:9999/", "http://127.0.0.1:9999/"],
    ["http://[::1]:9999/", "http://[::1]:9999/"],
    ["http://2130706433:9999/", "http://127.0.0.1:9999/"],
    ["http://localhost:8788/hook#x", "http://localhost:8788/hook"],
  ])("allows %s", (url, href) => {
    expect(checkWebhookUrl(url, dev).href).toBe(href);
  });

  it.each([
    "http://127.0.0.2/",
    "http://api.localhost/",
    "http://10.0.0.1/",
    "https://10.0.0.1/",
    "https://169.254.169.254/",
    "https://metadata.google.internal/",
    "http://[::ffff:127.0.0.1]/",
  ])("still refuses %s", (url) => {
    refusal(url, dev);
  });

  it.each([
    "http://localhost:8788/hook",
    "https://localhost/",
    "http://127.0.0.1/",
    "http://[::1]/",
  ])("refuses %s when the setting is off", (url) => {
    refusal(url, prod);
  });
});

describe("webhook URL policy: the error", () => {
  it("names the field given and says why", () => {
    const error = refusal("https://10.0.0.1/", {
      allowLocalhost: false,
      field: "pushNotificationConfig.url",
    });
    expect(error.code).toBe(-32602);
    expect(error.fieldViolations).toEqual([
      {
        field: "pushNotificationConfig.url",
        description:
          "webhook URL refused: 10.0.0.1 is a private address (10.0.0.0/8); webhooks must be publicly reachable",
      },
    ]);
    expect(error.message).toBe(
      "Invalid parameters: pushNotificationConfig.url: webhook URL refused: 10.0.0.1 is a private address (10.0.0.0/8); webhooks must be publicly reachable",
    );
  });
});
