import type { Context } from "hono";
import ipaddr from "ipaddr.js";

/**
 * Where a request comes from, for throttling. The peer address of the TCP connection (@hono/node-server
 * puts the Node request on `c.env.incoming`), or, behind `trustedProxyHops` reverse proxies that append
 * to X-Forwarded-For (an ingress controller: 1), the address the outermost trusted proxy saw, counted from
 * the right as Express' `trust proxy = N` does: entries a client wrote itself are never believed.
 * `unknown` when neither is available (in-process tests).
 */
export function peerAddress(c: Context, trustedProxyHops: number): string {
  const env = c.env as { incoming?: { socket?: { remoteAddress?: string } } } | undefined;
  const socket = env?.incoming?.socket?.remoteAddress;
  if (trustedProxyHops <= 0 || !socket) return socket ?? "unknown";
  // Nearest hop first: the socket's peer, then X-Forwarded-For from its right end.
  const chain = [
    socket,
    ...(c.req.header("x-forwarded-for") ?? "")
      .split(",")
      .map((s) => s.trim())
      .filter(Boolean)
      .reverse(),
  ];
  return chain[Math.min(trustedProxyHops, chain.length - 1)]!;
}

/**
 * The throttling key of an address: IPv4 (also IPv4-mapped IPv6) as dotted quad; IPv6 by its /64 prefix,
 * since one subscriber usually holds a whole /64 and could rotate through it; anything unparseable as is
 * (bounded in length).
 */
export function addressKey(address: string): string {
  const bare = address.replace(/^\[|\]$/g, "").replace(/%.*$/, "");
  if (!ipaddr.isValid(bare)) return `other:${bare.slice(0, 64)}`;
  let parsed: ipaddr.IPv4 | ipaddr.IPv6 = ipaddr.parse(bare);
  if (parsed.kind() === "ipv6" && (parsed as ipaddr.IPv6).isIPv4MappedAddress()) {
    parsed = (parsed as ipaddr.IPv6).toIPv4Address();
  }
  if (parsed.kind() === "ipv4") return parsed.toString();
  const parts = (parsed as ipaddr.IPv6).parts.slice(0, 4).map((p) => p.toString(16));
  return `${parts.join(":")}::/64`;
}
