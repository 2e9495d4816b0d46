import { Hono } from "hono";
import { describe, expect, it } from "vitest";
import { addressKey, peerAddress } from "./client-address.js";

async function seen(hops: number, remoteAddress: string | undefined, xff?: string): Promise<string> {
  const app = new Hono();
  app.get("/", (c) => c.text(peerAddress(c, hops)));
  const env = remoteAddress === undefined ? {} : { incoming: { socket: { remoteAddress } } };
  const res = await app.request("/", { headers: xff ? { "x-forwarded-for": xff } : {} }, env);
  return res.text();
}

describe("peerAddress", () => {
  it("is the TCP peer, whatever X-Forwarded-For says, with no trusted proxy", async () => {
    expect(await seen(0, "203.0.113.5", "1.1.1.1")).toBe("203.0.113.5");
    expect(await seen(0, undefined)).toBe("unknown");
  });

  it("behind N trusted proxies is the N-th X-Forwarded-For entry from the right", async () => {
    // The client wrote "6.6.6.6" itself; the ingress (the peer) appended what it saw.
    expect(await seen(1, "10.1.0.7", "6.6.6.6, 198.51.100.4")).toBe("198.51.100.4");
    expect(await seen(2, "10.1.0.7", "6.6.6.6, 198.51.100.4, 10.2.0.1")).toBe("198.51.100.4");
    // Fewer entries than hops: the farthest one there is.
    expect(await seen(3, "10.1.0.7", "198.51.100.4")).toBe("198.51.100.4");
    expect(await seen(1, "10.1.0.7")).toBe("10.1.0.7");
  });
});

describe("addressKey", () => {
  it("keys IPv4 (also IPv4-mapped) by address and IPv6 by its /64", () => {
    expect(addressKey("203.0.113.5")).toBe("203.0.113.5");
    expect(addressKey("::ffff:203.0.113.5")).toBe("203.0.113.5");
    expect(addressKey("2001:db8:1:2:aaaa::1")).toBe("2001:db8:1:2::/64");
    expect(addressKey("[2001:db8:1:2:bbbb::9]")).toBe(addressKey("2001:db8:1:2::7"));
    expect(addressKey("2001:db8:1:3::1")).not.toBe(addressKey("2001:db8:1:2::1"));
    expect(addressKey("unknown")).toBe("other:unknown");
    expect(addressKey("x".repeat(500))).toHaveLength(70);
  });
});
