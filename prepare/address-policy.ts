import ipaddr from "ipaddr.js";

/**
 * Which network addresses the prepare step may download from. Only globally routable unicast
 * addresses are public; everything else (loopback, private, link-local incl. the 169.254.169.254
 * cloud metadata service, CGNAT 100.64/10, multicast, unspecified, broadcast, reserved, unique-local
 * IPv6, and transition forms such as 6to4, Teredo and NAT64 that embed an IPv4 address) is refused.
 * IPv4-mapped IPv6 addresses (`::ffff:127.0.0.1`) are judged by the IPv4 address they carry.
 */
export interface AddressVerdict {
  /** True when the address is globally routable unicast. */
  public: boolean;
  /** ipaddr.js range name, e.g. `loopback`, `private`, `linkLocal`, `unicast`; `invalid` when unparseable. */
  range: string;
  /** The address as judged (IPv4 for IPv4-mapped IPv6). */
  address: string;
}

export function classifyAddress(ip: string): AddressVerdict {
  const bare = ip.replace(/^\[|\]$/g, "").replace(/%.*$/, "");
  if (!ipaddr.isValid(bare)) return { public: false, range: "invalid", address: bare };
  let addr: ipaddr.IPv4 | ipaddr.IPv6 = ipaddr.parse(bare);
  if (addr.kind() === "ipv6" && (addr as ipaddr.IPv6).isIPv4MappedAddress()) {
    addr = (addr as ipaddr.IPv6).toIPv4Address();
  }
  const range = addr.range();
  return { public: range === "unicast", range, address: addr.toString() };
}

export function isPublicAddress(ip: string): boolean {
  return classifyAddress(ip).public;
}

const RANGE_WORDS: Record<string, string> = {
  loopback: "a loopback address",
  private: "a private network address",
  linkLocal: "a link-local address (this range holds cloud metadata services)",
  carrierGradeNat: "a carrier-grade NAT address",
  multicast: "a multicast address",
  unspecified: "the unspecified address",
  broadcast: "the broadcast address",
  reserved: "a reserved address",
  uniqueLocal: "a unique-local IPv6 address",
  invalid: "not a valid IP address",
};

/** Words for a refused range, for messages: "127.0.0.1 is a loopback address". */
export function describeRange(range: string): string {
  return RANGE_WORDS[range] ?? `a non-public address (${range})`;
}
