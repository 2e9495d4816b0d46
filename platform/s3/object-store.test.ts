import { randomBytes, randomUUID } from "node:crypto";
import { once } from "node:events";
import { createServer, request, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { Readable } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../../core/config.js";
import { describeArchiveContract } from "../testdata/archive-contract.js";
import { describeMemoryContract } from "../testdata/memory-contract.js";
import { describeObjectStoreContract } from "../testdata/object-store-contract.js";
import { createS3ObjectStore, S3ObjectStoreError, s3ConfigFromEnv } from "./object-store.js";
import type { S3ObjectStoreOptions } from "./s3-config.js";
import { type S3TestServer, s3TestServerAvailable, startS3TestServer } from "./testdata/s3-test-server.js";
import { presignedUrlValid } from "./testdata/sigv4-oracle.js";

const availability = s3TestServerAvailable();
let server: S3TestServer;

const optionsFor = (s: S3TestServer, extra: Partial<S3ObjectStoreOptions> = {}): S3ObjectStoreOptions => ({
  endPoint: s.endPoint,
  port: s.port,
  useSSL: false,
  accessKey: s.accessKey,
  secretKey: s.secretKey,
  region: "us-east-1",
  pathStyle: true,
  ...extra,
});
const newBucket = () => `t-${randomUUID().slice(0, 13)}`;
/**
 * A pass-through HTTP proxy in front of the server that records each request's method and URL. With
 * `closeReusedConnections`, it destroys a connection instead of serving its second request, as a server does
 * with a connection left idle past its keep-alive timeout (`dropped` counts them).
 */
async function recordingProxy(
  target: S3TestServer,
  o: { closeReusedConnections?: boolean } = {},
): Promise<{ port: number; seen: string[]; dropped(): number; close(): Promise<void> }> {
  const seen: string[] = [];
  const served = new WeakMap<object, number>();
  let dropped = 0;
  const proxy: Server = createServer((req, res) => {
    const n = (served.get(req.socket) ?? 0) + 1;
    served.set(req.socket, n);
    if (o.closeReusedConnections && n > 1) {
      dropped++;
      req.socket.destroy();
      return;
    }
    seen.push(`${req.method} ${req.url}`);
    const upstream = request(
      { host: target.endPoint, port: target.port, method: req.method, path: req.url, headers: req.headers },
      (up) => {
        res.writeHead(up.statusCode ?? 502, up.headers);
        up.pipe(res);
      },
    );
    upstream.on("error", () => res.destroy());
    req.pipe(upstream);
  });
  proxy.listen(0, "127.0.0.1");
  await once(proxy, "listening");
  return {
    port: (proxy.address() as AddressInfo).port,
    seen,
    dropped: () => dropped,
    close: async () => {
      proxy.closeAllConnections();
      proxy.close();
      await once(proxy, "close");
    },
  };
}

const errorOf = (p: Promise<unknown>) =>
  p.then(
    () => undefined,
    (e: unknown) => e as S3ObjectStoreError,
  );

describe.skipIf(!availability.ok)(
  availability.ok ? "createS3ObjectStore on s3rver" : `createS3ObjectStore (skipped: ${availability.reason})`,
  () => {
    beforeAll(async () => {
      server = await startS3TestServer();
    });
    afterAll(async () => {
      await server?.stop();
    });

    describeObjectStoreContract(
      "S3 (s3rver on loopback)",
      async () => {
        const store = createS3ObjectStore(optionsFor(server));
        const bucket = newBucket();
        await store.ensureBucket(bucket);
        return { store, bucket, missingBucket: newBucket() };
      },
      { presign: true, byteOrderAcrossSlash: false },
    );

    it("tries a read or write once more when the server had closed the kept-alive connection it went out on", async () => {
      // A proxy that closes every connection on its second request, as a server does with a connection left
      // idle past its keep-alive timeout while the client's event loop was busy (the check step on a
      // 300-page statement, in the cluster e2e: EPIPE storing its text).
      const proxy = await recordingProxy(server, { closeReusedConnections: true });
      try {
        const direct = createS3ObjectStore(optionsFor(server));
        const bucket = newBucket();
        await direct.ensureBucket(bucket);
        const store = createS3ObjectStore(optionsFor(server, { port: proxy.port }));
        const body = Buffer.from("ünïcode text ".repeat(5000));
        await store.put(bucket, "runs/a/text.txt", body, { contentType: "text/plain; charset=utf-8" });
        await store.put(bucket, "runs/b/text.txt", body, { contentType: "text/plain; charset=utf-8" });
        expect((await store.get(bucket, "runs/a/text.txt")).equals(body)).toBe(true);
        expect((await store.stat(bucket, "runs/b/text.txt"))?.size).toBe(body.length);
        await store.delete(bucket, "runs/b/text.txt");
        expect(await direct.stat(bucket, "runs/b/text.txt")).toBeUndefined();
        expect(proxy.dropped()).toBeGreaterThanOrEqual(3);
      } finally {
        await proxy.close();
      }
    });

    describeMemoryContract("S3 (s3rver on loopback)", async () => {
      const store = createS3ObjectStore(optionsFor(server));
      const bucket = newBucket();
      await store.ensureBucket(bucket);
      return { store, bucket, missingBucket: newBucket() };
    });

    describeArchiveContract("S3 (s3rver on loopback)", async () => {
      const store = createS3ObjectStore(optionsFor(server));
      const bucket = newBucket();
      await store.ensureBucket(bucket);
      return { store, bucket, missingBucket: newBucket() };
    });

    it("uploads a stream larger than one part as a multipart upload, and aborts it when the body fails", async () => {
      const proxy = await recordingProxy(server);
      try {
        const store = createS3ObjectStore(
          optionsFor(server, { port: proxy.port, partSize: 5 * 1024 * 1024 }),
        );
        const bucket = newBucket();
        await store.ensureBucket(bucket);
        const body = randomBytes(11 * 1024 * 1024);
        proxy.seen.length = 0;
        expect(await store.put(bucket, "doc", Readable.from([body]))).toEqual({ size: body.length });
        // 5 + 5 + 1 MiB: initiate, three parts, complete.
        expect(proxy.seen.map((r) => r.replace(/uploadId=[^&]+/, "uploadId=U"))).toEqual([
          `POST /${bucket}/doc?uploads`,
          `PUT /${bucket}/doc?uploadId=U&partNumber=1`,
          `PUT /${bucket}/doc?uploadId=U&partNumber=2`,
          `PUT /${bucket}/doc?uploadId=U&partNumber=3`,
          `POST /${bucket}/doc?uploadId=U`,
        ]);
        expect((await store.get(bucket, "doc")).equals(body)).toBe(true);

        // A stream that fits one part is a single PUT.
        proxy.seen.length = 0;
        await store.put(bucket, "small", Readable.from([Buffer.from("tiny")]));
        expect(proxy.seen).toEqual([`PUT /${bucket}/small`]);

        // A body that fails after two parts went up: the upload is aborted, the old object stays.
        proxy.seen.length = 0;
        let sent = 0;
        const failing = new Readable({
          read() {
            if (sent >= 12 * 1024 * 1024) return void this.destroy(new Error("client went away"));
            sent += 1024 * 1024;
            this.push(Buffer.alloc(1024 * 1024, 7));
          },
        });
        await expect(store.put(bucket, "doc", failing)).rejects.toThrow("client went away");
        expect(proxy.seen.at(-1)).toMatch(new RegExp(`^DELETE /${bucket}/doc\\?uploadId=`));
        expect((await store.get(bucket, "doc")).equals(body)).toBe(true);
      } finally {
        await proxy.close();
      }
    });

    it("signs presigned URLs for the public endpoint, not the internal one", async () => {
      // Clients reach the storage as "localhost"; the service talks to it as 127.0.0.1.
      const publicEndpoint = `http://localhost:${server.port}`;
      const store = createS3ObjectStore(optionsFor(server, { publicEndpoint }));
      const bucket = newBucket();
      await store.ensureBucket(bucket);
      const url = await store.presignPut!(bucket, "uploads/abc", 300);
      expect(url.startsWith(`${publicEndpoint}/${bucket}/uploads/abc?`)).toBe(true);
      const secretKey = server.secretKey;
      expect(presignedUrlValid(url, { method: "PUT", secretKey })).toBe(true);
      // The signature covers host, method, key, expiry and secret: any change breaks it.
      expect(presignedUrlValid(url, { method: "PUT", secretKey, host: `127.0.0.1:${server.port}` })).toBe(
        false,
      );
      expect(presignedUrlValid(url, { method: "GET", secretKey })).toBe(false);
      expect(presignedUrlValid(url, { method: "PUT", secretKey: "other" })).toBe(false);
      expect(
        presignedUrlValid(url.replace("/uploads/abc?", "/uploads/abd?"), { method: "PUT", secretKey }),
      ).toBe(false);
      expect(presignedUrlValid(url, { method: "PUT", secretKey, now: new Date(Date.now() + 301_000) })).toBe(
        false,
      );

      const res = await fetch(url, { method: "PUT", body: "document bytes" });
      expect(res.status, await res.text()).toBe(200);
      expect((await store.get(bucket, "uploads/abc")).toString()).toBe("document bytes");
      // Without a public endpoint the URL is signed for the internal one.
      const internal = await createS3ObjectStore(optionsFor(server)).presignPut!(bucket, "k", 60);
      expect(internal.startsWith(`${server.url}/${bucket}/k?`)).toBe(true);
      expect(presignedUrlValid(internal, { method: "PUT", secretKey })).toBe(true);
    });

    it("presigns without any network call when the region is configured", async () => {
      const store = createS3ObjectStore(
        optionsFor(server, {
          endPoint: "127.0.0.1",
          port: 1, // nothing listens here: any request would fail
          publicEndpoint: "https://storage.example.invalid",
          region: "eu-west-1",
        }),
      );
      const url = new URL(await store.presignPut!("docs", "uploads/x", 900));
      expect(url.origin).toBe("https://storage.example.invalid");
      expect(url.pathname).toBe("/docs/uploads/x");
      expect(url.searchParams.get("X-Amz-Expires")).toBe("900");
      expect(url.searchParams.get("X-Amz-Credential")).toContain("/eu-west-1/s3/aws4_request");
      expect(presignedUrlValid(url.toString(), { method: "PUT", secretKey: server.secretKey })).toBe(true);
    });

    it("finds the bucket's region through the internal endpoint when none is configured", async () => {
      const store = createS3ObjectStore(
        optionsFor(server, { region: undefined, publicEndpoint: `http://localhost:${server.port}` }),
      );
      const bucket = newBucket();
      await store.ensureBucket(bucket);
      const url = await store.presignPut!(bucket, "k", 60);
      expect(new URL(url).searchParams.get("X-Amz-Credential")).toContain("/us-east-1/s3/aws4_request");
      expect(presignedUrlValid(url, { method: "PUT", secretKey: server.secretKey })).toBe(true);
      const res = await fetch(url, { method: "PUT", body: "v" });
      expect(res.status, await res.text()).toBe(200);
    });

    it("explains refusals: bad names, keys, metadata, expiry and part size", async () => {
      const store = createS3ObjectStore(optionsFor(server));
      const bucket = newBucket();
      await store.ensureBucket(bucket);
      for (const b of ["", "UPPER", "a", "a_b", "-ab", "ab-", "a..b", "192.168.1.1"]) {
        expect((await errorOf(store.put(b, "k", "x")))?.code, b).toBe("InvalidBucketName");
        expect((await errorOf(store.ensureBucket(b)))?.code, b).toBe("InvalidBucketName");
      }
      expect((await errorOf(store.put(bucket, "", "x")))?.code).toBe("InvalidKey");
      expect((await errorOf(store.get(bucket, "x".repeat(1025))))?.code).toBe("InvalidKey");
      const nonAscii = await errorOf(store.put(bucket, "k", "x", { metadata: { name: "café" } }));
      expect(nonAscii?.code).toBe("InvalidMetadata");
      expect(nonAscii?.message).toContain("printable ASCII");
      const reserved = await errorOf(store.put(bucket, "k", "x", { metadata: { "content-type": "a" } }));
      expect(reserved?.code).toBe("InvalidMetadata");
      expect((await errorOf(store.presignPut!(bucket, "k", 0)))?.code).toBe("InvalidArgument");
      expect((await errorOf(store.presignPut!(bucket, "k", 8 * 24 * 3600)))?.message).toContain("7 days");
      expect(() => createS3ObjectStore(optionsFor(server, { partSize: 1024 }))).toThrow(/at least 5242880/);
      expect(await store.stat(bucket, "k")).toBeUndefined();
    });

    it("says when the storage is unreachable or refuses the credentials", async () => {
      const down = createS3ObjectStore(optionsFor(server, { port: 1 }));
      const unreachable = await errorOf(down.put("docs", "k", "x"));
      expect(unreachable).toBeInstanceOf(S3ObjectStoreError);
      expect(unreachable?.code).toBe("Unavailable");
      expect(unreachable?.message).toMatch(/Cannot reach S3 at http:\/\/127\.0\.0\.1:1 .*check S3_ENDPOINT/);

      const stranger = createS3ObjectStore(optionsFor(server, { accessKey: "NOBODY" }));
      const bucket = newBucket();
      await createS3ObjectStore(optionsFor(server)).ensureBucket(bucket);
      const denied = await errorOf(stranger.put(bucket, "k", "x"));
      expect(denied?.code).toBe("AccessDenied");
      expect(denied?.message).toMatch(/\(InvalidAccessKeyId\); check S3_ACCESS_KEY, S3_SECRET_KEY/);
    });
  },
);

describe("s3ConfigFromEnv", () => {
  const base = { S3_ENDPOINT: "http://minio.storage:9000", S3_ACCESS_KEY: "ak", S3_SECRET_KEY: "sk" };
  const map = (env: Record<string, string>) => s3ConfigFromEnv(loadConfig({ ...base, ...env }));
  const failure = (env: Record<string, string | undefined>) => {
    try {
      s3ConfigFromEnv(loadConfig({ ...base, ...env }));
    } catch (err) {
      expect(err).toBeInstanceOf(ConfigError);
      return (err as Error).message;
    }
    throw new Error("expected a ConfigError");
  };

  it("maps a URL endpoint, the public endpoint, region, bucket and keys", () => {
    expect(
      map({
        S3_PUBLIC_ENDPOINT: "https://s3.example.com/",
        S3_REGION: "eu-central-1",
        S3_BUCKET: "docverify-prod",
      }),
    ).toEqual({
      bucket: "docverify-prod",
      options: {
        endPoint: "minio.storage",
        port: 9000,
        useSSL: false,
        accessKey: "ak",
        secretKey: "sk",
        region: "eu-central-1",
        publicEndpoint: "https://s3.example.com",
        pathStyle: true,
      },
    });
  });

  it("takes TLS from the URL scheme, or from S3_USE_SSL for host:port, with default ports", () => {
    expect(map({ S3_ENDPOINT: "https://s3.eu-west-1.amazonaws.com" }).options).toMatchObject({
      endPoint: "s3.eu-west-1.amazonaws.com",
      port: 443,
      useSSL: true,
      pathStyle: false,
    });
    expect(map({ S3_ENDPOINT: "minio:9000" }).options).toMatchObject({
      endPoint: "minio",
      port: 9000,
      useSSL: false,
    });
    expect(map({ S3_ENDPOINT: "minio", S3_USE_SSL: "true" }).options).toMatchObject({
      port: 443,
      useSSL: true,
    });
    expect(map({ S3_ENDPOINT: "http://[::1]:9000" }).options).toMatchObject({ endPoint: "::1", port: 9000 });
    expect(map({}).bucket).toBe("docverify");
    expect(map({}).options.region).toBeUndefined();
    expect(map({}).options.publicEndpoint).toBeUndefined();
  });

  it("refuses missing and malformed settings, naming the variable and the fix", () => {
    expect(failure({ S3_ENDPOINT: undefined })).toMatch(/S3_ENDPOINT is not set/);
    expect(failure({ S3_ACCESS_KEY: undefined })).toMatch(/S3_ACCESS_KEY is not set/);
    expect(failure({ S3_SECRET_KEY: "" })).toMatch(/S3_SECRET_KEY is not set/);
    expect(failure({ S3_ENDPOINT: "ftp://minio:21" })).toMatch(/must use http or https/);
    expect(failure({ S3_ENDPOINT: "http://minio:9000/s3" })).toMatch(/no path/);
    expect(failure({ S3_ENDPOINT: "http://minio:notaport" })).toMatch(/not a valid endpoint/);
    expect(failure({ S3_USE_SSL: "true" })).toMatch(/says http but S3_USE_SSL is true/);
    expect(failure({ S3_BUCKET: "Bad_Bucket" })).toMatch(/S3_BUCKET "Bad_Bucket" is not a valid bucket name/);
    expect(failure({ S3_PUBLIC_ENDPOINT: "s3.example.com" })).toMatch(/must be a full URL/);
    expect(failure({ S3_PUBLIC_ENDPOINT: "https://s3.example.com/prefix" })).toMatch(/no path/);
  });
});
