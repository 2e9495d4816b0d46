import ipaddr from "ipaddr.js";

/**
 * Which network addresses the prepare step may download from (docs/decisions.md, "SSRF policy").
 *
 * IPv4: only what ipaddr.js calls `unicast` is public; loopback, private, link-local (incl. the
 * 169.254.169.254 cloud metadata service), carrier-grade NAT 100.64/10, multicast, unspecified,
 * broadcast and reserved (documentation, benchmarking, 240/4, ...) are refused.
 *
 * IPv6: only global unicast, 2000::/3, minus the special-purpose ranges inside it (IANA's IPv6
 * Special-Purpose Address Registry): 2001::/23 IETF protocol assignments (Teredo 2001::/32,
 * benchmarking, ORCHID, AMT, ...), 2001:db8::/32 and 3fff::/20 documentation, 2002::/16 6to4, and
 * ISATAP interface identifiers (…:0:5efe:a.b.c.d). Everything outside 2000::/3 is refused: ::1, ::,
 * unique-local fc00::/7, link-local fe80::/10, site-local, multicast, discard 100::/64, SRv6 5f00::/16,
 * NAT64 64:ff9b::/96 and 64:ff9b:1::/48, IPv4-compatible ::/96 (`[::127.0.0.1]` = `[::7f00:1]`),
 * SIIT ::ffff:0:0:0/96.
 *
 * Embedded IPv4: only an IPv4-mapped address (::ffff:a.b.c.d) is judged by the IPv4 address it carries,
 * because the kernel connects to exactly that IPv4 address. Every other form that embeds an IPv4 address
 * (IPv4-compatible, NAT64, 6to4, Teredo, ISATAP) reaches it through a translator or relay whose network
 * we cannot see, so it is refused whatever IPv4 address it carries.
 */
export interface AddressVerdict {
  /** True when the address may be fetched from. */
  public: boolean;
  /** Range name, e.g. `loopback`, `private`, `linkLocal`, `6to4`, `unicast`; `invalid` when unparseable. */
  range: string;
  /** The address as judged (the IPv4 address for IPv4-mapped IPv6), in canonical text. */
  address: string;
}

type Cidr = [ipaddr.IPv6, number];
const cidr = (text: string): Cidr => ipaddr.IPv6.parseCIDR(text) as Cidr;

/** Special-purpose ranges inside 2000::/3, most specific first. */
const INSIDE_GLOBAL: readonly [Cidr, string][] = [
  [cidr("2001::/32"), "teredo"],
  [cidr("2001:db8::/32"), "documentation"],
  [cidr("2001::/23"), "ietfProtocolAssignment"],
  [cidr("2002::/16"), "6to4"],
  [cidr("3fff::/20"), "documentation"],
];

/** Named ranges outside 2000::/3 (all refused; the names are for messages), most specific first. */
const OUTSIDE_GLOBAL: readonly [Cidr, string][] = [
  [cidr("::/128"), "unspecified"],
  [cidr("::1/128"), "loopback"],
  [cidr("::ffff:0:0:0/96"), "siit"],
  [cidr("::/96"), "ipv4Compatible"],
  [cidr("64:ff9b::/96"), "nat64"],
  [cidr("64:ff9b:1::/48"), "nat64"],
  [cidr("100::/64"), "discard"],
  [cidr("5f00::/16"), "segmentRouting"],
  [cidr("fc00::/7"), "uniqueLocal"],
  [cidr("fe80::/10"), "linkLocal"],
  [cidr("fec0::/10"), "siteLocal"],
  [cidr("ff00::/8"), "multicast"],
];
const GLOBAL_UNICAST = cidr("2000::/3");

function ipv6Range(addr: ipaddr.IPv6): string {
  if (addr.match(GLOBAL_UNICAST)) {
    for (const [range, name] of INSIDE_GLOBAL) if (addr.match(range)) return name;
    // ISATAP: interface identifier 0000:5efe or 0200:5efe followed by an IPv4 address (RFC 5214).
    if ((addr.parts[4] === 0 || addr.parts[4] === 0x200) && addr.parts[5] === 0x5efe) return "isatap";
    return "unicast";
  }
  for (const [range, name] of OUTSIDE_GLOBAL) if (addr.match(range)) return name;
  return "notGlobalUnicast";
}

/**
 * An IPv6 text with a dotted IPv4 tail (`::127.0.0.1`) in all-hex form (`::7f00:1`). ipaddr.js 2.5 reads
 * `::a.b.c.d` as the IPv4-mapped `::ffff:a.b.c.d`, which would judge an IPv4-compatible address by its
 * IPv4 part; the hex form is read as written.
 */
function hexTail(text: string): string {
  const m = /^(.*:)(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(text);
  if (!m) return text;
  const [a, b, c, d] = m.slice(2).map(Number) as [number, number, number, number];
  if ([a, b, c, d].some((n) => n > 255)) return text;
  return `${m[1]}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
}

export function classifyAddress(ip: string): AddressVerdict {
  let bare = ip.replace(/^\[|\]$/g, "").replace(/%.*$/, "");
  if (bare.includes(":")) bare = hexTail(bare);
  if (!ipaddr.isValid(bare)) return { public: false, range: "invalid", address: bare };
  const parsed = ipaddr.parse(bare);
  if (parsed.kind() === "ipv4") {
    const range = parsed.range();
    return { public: range === "unicast", range, address: parsed.toString() };
  }
  const v6 = parsed as ipaddr.IPv6;
  // ::ffff:0:0/96 (checked on the parts: ipaddr.js also calls the ::/96 text form `::1.2.3.4` "mapped").
  if (v6.parts.slice(0, 5).every((p) => p === 0) && v6.parts[5] === 0xffff) {
    return classifyAddress(v6.toIPv4Address().toString());
  }
  const range = ipv6Range(v6);
  return { public: range === "unicast", range, address: v6.toString() };
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
  siteLocal: "a site-local IPv6 address",
  discard: "an IPv6 discard-only address",
  documentation: "a documentation address",
  teredo: "a Teredo address (it embeds an IPv4 address reached through a relay)",
  "6to4": "a 6to4 address (it embeds an IPv4 address reached through a relay)",
  nat64: "a NAT64 address (it embeds an IPv4 address reached through a translator)",
  siit: "an IPv4-translated address (it embeds an IPv4 address reached through a translator)",
  ipv4Compatible: "an IPv4-compatible IPv6 address (it embeds an IPv4 address)",
  isatap: "an ISATAP address (it embeds an IPv4 address)",
  ietfProtocolAssignment: "an IETF protocol-assignment address",
  segmentRouting: "an SRv6 segment identifier",
  notGlobalUnicast: "not a global unicast IPv6 address",
  invalid: "not a valid IP address",
};

/** Words for a refused range, for messages: "127.0.0.1 is a loopback address". */
export function describeRange(range: string): string {
  return RANGE_WORDS[range] ?? `a non-public address (${range})`;
}

/** Inclusive port ranges, e.g. [[80, 80], [443, 443]] (DOCVERIFY_ALLOWED_SOURCE_PORTS). */
export type PortRanges = readonly (readonly [number, number])[];

/** The port a URL connects to: its explicit port, else its scheme's default. */
export function effectivePort(url: URL): number {
  if (url.port) return Number(url.port);
  return url.protocol === "https:" ? 443 : 80;
}

export const portAllowed = (port: number, allowed: PortRanges): boolean =>
  allowed.some(([lo, hi]) => port >= lo && port <= hi);

/** "80, 443, 8000-8999" */
export const describePorts = (allowed: PortRanges): string =>
  allowed.map(([lo, hi]) => (lo === hi ? String(lo) : `${lo}-${hi}`)).join(", ");
