import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { classifyAddress, effectivePort, isPublicAddress } from "./address-policy.js";
import { type SafeFetchOptions, SourceError, safeFetch } from "./safe-fetch.js";
import { closedPort, startTestHttpServer, type TestHttpServer } from "./testdata/http-server.js";

/** Every port: these tests fetch from a loopback server on a random port (the port policy has its own tests). */
const ANY_PORT = [[1, 65535]] as const;
const allow: SafeFetchOptions = {
  allowPrivate: true,
  timeoutMs: 5_000,
  maxBytes: 1_000,
  allowedPorts: ANY_PORT,
};
const deny: SafeFetchOptions = {
  allowPrivate: false,
  timeoutMs: 5_000,
  maxBytes: 1_000,
  allowedPorts: ANY_PORT,
};

async function failureOf(p: Promise<unknown>): Promise<SourceError> {
  try {
    await p;
  } catch (err) {
    expect(err).toBeInstanceOf(SourceError);
    return err as SourceError;
  }
  throw new Error("expected the fetch to fail");
}

describe("address policy", () => {
  it.each([
    ["127.0.0.1", "loopback"],
    ["10.1.2.3", "private"],
    ["172.16.0.1", "private"],
    ["192.168.1.1", "private"],
    ["169.254.169.254", "linkLocal"],
    ["100.64.0.1", "carrierGradeNat"],
    ["224.0.0.1", "multicast"],
    ["0.0.0.0", "unspecified"],
    ["255.255.255.255", "broadcast"],
    ["240.0.0.1", "reserved"],
    ["::1", "loopback"],
    ["::", "unspecified"],
    ["fd00::1", "uniqueLocal"],
    ["fe80::1", "linkLocal"],
    ["ff02::1", "multicast"],
    ["::ffff:127.0.0.1", "loopback"],
    ["::ffff:169.254.169.254", "linkLocal"],
    ["[::ffff:10.0.0.1]", "private"],
    ["not-an-ip", "invalid"],
    // IPv4-compatible (::/96): the URL parser writes [::127.0.0.1] as [::7f00:1]; both are refused.
    ["::127.0.0.1", "ipv4Compatible"],
    ["::7f00:1", "ipv4Compatible"],
    ["[::7f00:1]", "ipv4Compatible"],
    ["::8.8.8.8", "ipv4Compatible"],
    ["::a9fe:a9fe", "ipv4Compatible"],
    // Other forms that embed an IPv4 address, refused whatever they carry (public or not).
    ["64:ff9b::7f00:1", "nat64"],
    ["64:ff9b::808:808", "nat64"],
    ["64:ff9b:1::a00:1", "nat64"],
    ["2002:7f00:1::1", "6to4"],
    ["2002:808:808::1", "6to4"],
    ["2001:0:4136:e378:8000:63bf:3fff:fdd2", "teredo"],
    ["::ffff:0:7f00:1", "siit"],
    ["2001:db8:1::5efe:7f00:1", "documentation"],
    ["2a00:1450:4001::200:5efe:a00:1", "isatap"],
    ["2a00:1450:4001::5efe:808:808", "isatap"],
    // Special-purpose ranges inside 2000::/3.
    ["2001:db8::1", "documentation"],
    ["3fff::1", "documentation"],
    ["2001:2::1", "ietfProtocolAssignment"],
    ["2001:20::1", "ietfProtocolAssignment"],
    ["5f00::1", "segmentRouting"],
    // Outside 2000::/3.
    ["100::1", "discard"],
    ["fec0::1", "siteLocal"],
    ["4000::1", "notGlobalUnicast"],
    ["e000::1", "notGlobalUnicast"],
    ["1::1", "notGlobalUnicast"],
  ])("refuses %s (%s)", (ip, range) => {
    const v = classifyAddress(ip);
    expect(v.range).toBe(range);
    expect(v.public).toBe(false);
  });

  it.each([
    "8.8.8.8",
    "93.184.216.34",
    "2606:4700:4700::1111",
    "2a00:1450:4001:80b::200e",
    "2620:4f:8000::1",
    "3ffe::1",
    "::ffff:8.8.8.8",
    "[::ffff:808:808]",
  ])("accepts %s", (ip) => {
    expect(isPublicAddress(ip)).toBe(true);
  });

  it("judges an IPv4-mapped address by the IPv4 address it carries", () => {
    expect(classifyAddress("::ffff:8.8.8.8")).toEqual({ public: true, range: "unicast", address: "8.8.8.8" });
    expect(classifyAddress("::ffff:a9fe:a9fe")).toMatchObject({ public: false, address: "169.254.169.254" });
  });

  it("knows the default port of each scheme", () => {
    expect(effectivePort(new URL("http://example.com/a"))).toBe(80);
    expect(effectivePort(new URL("https://example.com/a"))).toBe(443);
    expect(effectivePort(new URL("https://example.com:443/a"))).toBe(443);
    expect(effectivePort(new URL("http://example.com:8080/a"))).toBe(8080);
  });
});

describe("safeFetch", () => {
  let server: TestHttpServer;
  beforeAll(async () => {
    server = await startTestHttpServer({
      "/doc": (_req, res) => {
        res.writeHead(200, { "content-type": "application/pdf", "x-a": "1" });
        res.end("%PDF-1.7 small");
      },
      "/hop1": (_req, res) => {
        res.writeHead(302, { location: "/hop2" });
        res.end();
      },
      "/hop2": (_req, res) => {
        res.writeHead(301, { location: `${server.origin}/doc` });
        res.end();
      },
      "/loop": (_req, res) => {
        res.writeHead(302, { location: "/loop" });
        res.end();
      },
      "/to-metadata": (_req, res) => {
        res.writeHead(302, { location: "http://169.254.169.254/latest/meta-data/" });
        res.end();
      },
      "/to-other-loopback": (_req, res) => {
        res.writeHead(307, { location: `http://127.0.0.2:${server.port}/doc` });
        res.end();
      },
      "/to-redis-port": (_req, res) => {
        res.writeHead(302, { location: "http://127.0.0.1:6379/" });
        res.end();
      },
      "/to-file": (_req, res) => {
        res.writeHead(302, { location: "file:///etc/passwd" });
        res.end();
      },
      "/big-declared": (_req, res) => {
        res.writeHead(200, { "content-length": "5000" });
        res.end(Buffer.alloc(5000, 1));
      },
      "/big-chunked": (_req, res) => {
        res.writeHead(200, { "content-type": "application/octet-stream" });
        // Streams far more than the cap, chunked (no content-length); the reader must stop early.
        let sent = 0;
        const pump = () => {
          while (sent < 1_000_000) {
            sent += 500;
            if (!res.write(Buffer.alloc(500, 2))) return void res.once("drain", pump);
          }
          res.end();
        };
        res.on("error", () => undefined);
        pump();
      },
      "/stall": () => {
        // never answers
      },
      "/stall-body": (_req, res) => {
        res.writeHead(200, { "content-type": "application/pdf" });
        res.write("%PDF-1.7\n");
      },
      "/gone": (_req, res) => {
        res.writeHead(500);
        res.end("boom");
      },
    });
  });
  afterAll(() => server.close());

  it("downloads a document when private sources are allowed", async () => {
    const res = await safeFetch(server.url("/doc"), allow);
    expect(res.status).toBe(200);
    expect(res.body.toString()).toBe("%PDF-1.7 small");
    expect(res.headers["content-type"]).toBe("application/pdf");
    expect(res.finalUrl).toBe(server.url("/doc"));
    expect(res.redirects).toEqual([]);
  });

  it("follows redirects and reports every hop", async () => {
    const res = await safeFetch(server.url("/hop1"), allow);
    expect(res.body.toString()).toBe("%PDF-1.7 small");
    expect(res.finalUrl).toBe(server.url("/doc"));
    expect(res.redirects).toEqual([server.url("/hop1"), server.url("/hop2")]);
  });

  it("stops after five redirects", async () => {
    const err = await failureOf(safeFetch(server.url("/loop"), allow));
    expect(err.code).toBe("source_http_error");
    expect(err.message).toMatch(/more than 5 times/);
  });

  it("refuses a loopback literal, a name resolving to loopback, and numeric host forms", async () => {
    for (const url of [
      server.url("/doc"),
      `http://localhost:${server.port}/doc`,
      `http://2130706433:${server.port}/doc`,
      `http://0x7f.1:${server.port}/doc`,
      `http://017700000001:${server.port}/doc`,
      `http://127.1:${server.port}/doc`,
      `http://[::1]:${server.port}/doc`,
      `http://[::ffff:127.0.0.1]:${server.port}/doc`,
      `http://[::ffff:7f00:1]:${server.port}/doc`,
      `http://[::127.0.0.1]:${server.port}/doc`,
      `http://[::7f00:1]:${server.port}/doc`,
      `http://[64:ff9b::7f00:1]:${server.port}/doc`,
      `http://[2002:7f00:1::1]:${server.port}/doc`,
      "http://169.254.169.254/latest/meta-data/",
      "http://100.64.0.1/",
      "http://0.0.0.0/",
      "http://[fd12::1]/",
    ]) {
      const err = await failureOf(safeFetch(url, deny));
      expect(err.code, url).toBe("source_forbidden");
    }
  });

  it("re-checks every redirect hop against the guard", async () => {
    const opts = { ...deny, allowAddresses: ["127.0.0.1"] };
    // The first hop is allowlisted, so the server is reachable ...
    expect((await safeFetch(server.url("/doc"), opts)).status).toBe(200);
    // ... but where it redirects to is judged again.
    const metadata = await failureOf(safeFetch(server.url("/to-metadata"), opts));
    expect(metadata.code).toBe("source_forbidden");
    expect(metadata.message).toMatch(/169\.254\.169\.254 is a link-local address/);
    const other = await failureOf(safeFetch(server.url("/to-other-loopback"), opts));
    expect(other.code).toBe("source_forbidden");
    expect(other.message).toMatch(/127\.0\.0\.2/);
  });

  it("fetches only from allowed ports, on every redirect too", async () => {
    const ports = { ...allow, allowedPorts: [[server.port, server.port]] as const };
    expect((await safeFetch(server.url("/hop1"), ports)).status).toBe(200);
    const other = await closedPort();
    const refused = await failureOf(safeFetch(`http://127.0.0.1:${other}/doc`, ports));
    expect(refused.code).toBe("source_forbidden");
    expect(refused.message).toMatch(
      new RegExp(`uses port ${other}; this deployment fetches only from ports ${server.port}`),
    );
    // The defaults: 80 and 443 only, so an explicit :8080 or a redirect to :6379 is refused before connecting.
    const web = {
      ...deny,
      allowedPorts: [
        [80, 80],
        [443, 443],
      ] as const,
    };
    expect((await failureOf(safeFetch("http://93.184.216.34:8080/a.pdf", web))).code).toBe(
      "source_forbidden",
    );
    expect(
      (await failureOf(safeFetch(server.url("/doc"), { ...allow, allowedPorts: web.allowedPorts }))).message,
    ).toMatch(/fetches only from ports 80, 443/);
    const toRedis = await failureOf(safeFetch(server.url("/to-redis-port"), ports));
    expect(toRedis.code).toBe("source_forbidden");
    expect(toRedis.message).toMatch(/uses port 6379/);
  });

  it("never follows a non-http(s) scheme", async () => {
    const err = await failureOf(safeFetch(server.url("/to-file"), allow));
    expect(err.code).toBe("source_forbidden");
    expect(err.message).toMatch(/scheme "file"/);
    expect((await failureOf(safeFetch("ftp://example.com/x.pdf", allow))).code).toBe("source_forbidden");
  });

  it("refuses URLs with credentials", async () => {
    const err = await failureOf(safeFetch(`http://user:pw@127.0.0.1:${server.port}/doc`, allow));
    expect(err.code).toBe("source_forbidden");
  });

  it("caps the size by Content-Length and while streaming", async () => {
    const declared = await failureOf(safeFetch(server.url("/big-declared"), allow));
    expect(declared.code).toBe("source_too_large");
    expect(declared.message).toMatch(/declares 5000 bytes/);
    const streamed = await failureOf(safeFetch(server.url("/big-chunked"), allow));
    expect(streamed.code).toBe("source_too_large");
  });

  it("times out on a server that never answers or stalls mid-body", async () => {
    const opts = { ...allow, timeoutMs: 300 };
    expect((await failureOf(safeFetch(server.url("/stall"), opts))).code).toBe("source_timeout");
    expect((await failureOf(safeFetch(server.url("/stall-body"), opts))).code).toBe("source_timeout");
  });

  it("maps the source's own error statuses to source_http_error", async () => {
    const notFound = await failureOf(safeFetch(server.url("/missing"), allow));
    expect(notFound.code).toBe("source_http_error");
    expect(notFound.status).toBe(404);
    const serverError = await failureOf(safeFetch(server.url("/gone"), allow));
    expect(serverError.status).toBe(500);
  });

  it("reports unresolvable hosts and closed ports as unreachable", async () => {
    const dnsErr = await failureOf(safeFetch("http://nonexistent.invalid/doc.pdf", deny));
    expect(dnsErr.code).toBe("source_unreachable");
    expect(dnsErr.message).toMatch(/could not be resolved/);
    const port = await closedPort();
    const refused = await failureOf(safeFetch(`http://127.0.0.1:${port}/doc.pdf`, allow));
    expect(refused.code).toBe("source_unreachable");
    expect(refused.message).toMatch(/refused the connection/);
  });

  it("reports an invalid URL as a value, not a crash", async () => {
    expect((await failureOf(safeFetch("http://exa mple.com:99999/", allow))).code).toBe("source_unreachable");
  });

  it("honours an outside abort signal", async () => {
    const ctl = new AbortController();
    const p = safeFetch(server.url("/stall"), { ...allow, signal: ctl.signal });
    setTimeout(() => ctl.abort(new Error("cancelled")), 50);
    await expect(p).rejects.toThrow("cancelled");
  });
});
