import { Writable } from "node:stream";
import pino from "pino";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { call, createHarness, type Harness } from "../testdata/app-kit.js";

let h: Harness;
beforeEach(async () => {
  h = await createHarness();
});
afterEach(async () => {
  await h.close();
});

describe("OpenAPI and docs", () => {
  it("/openapi.json is version 1.0.0, lists every path, an OAuth2 and a bearer scheme", async () => {
    const r = await call(h, "GET", "/openapi.json");
    expect(r.status).toBe(200);
    expect(r.body.info.version).toBe("1.0.0");
    expect(Object.keys(r.body.paths).sort()).toEqual(
      [
        "/token",
        "/v1/detection",
        "/v1/detection/{detection_id}",
        "/v1/detection/{detection_id}/evidence",
        "/v1/detection/{detection_id}/evidence/pages/{file}",
        "/v1/detection/{detection_id}/feedback",
        "/review/{detection_id}",
        "/review/{detection_id}/pages/{file}",
        "/v1/uploads",
        "/v1/webhooks",
        "/v1/webhooks/deliveries",
        "/v1/webhooks/deliveries/{delivery_id}/replay",
        "/uploads/{upload_id}",
        "/jobs",
        "/jobs/{job_id}",
        "/healthz",
        "/readyz",
        "/.well-known/jwks.json",
        "/v1/detection/{detection_id}/attestation",
      ].sort(),
    );
    expect(r.body.components.securitySchemes.bearerAuth).toMatchObject({ type: "http", scheme: "bearer" });
    const create = r.body.paths["/v1/detection"].post;
    expect(r.body.components.securitySchemes.OAuth2.flows.clientCredentials.tokenUrl).toBe("/token");
    expect(create.security).toEqual([
      { OAuth2: ["DocumentVerification:detections:create"] },
      { OAuth2: ["DocumentVerification:detections:create_sample"] },
      { bearerAuth: [] },
    ]);
    expect(Object.keys(create.responses).sort()).toEqual([
      "202",
      "400",
      "401",
      "403",
      "409",
      "413",
      "422",
      "429",
      "503",
    ]);
    expect(create.parameters.map((p: { name: string; in: string }) => [p.in, p.name])).toEqual([
      ["header", "X-Sample-Run"],
      ["header", "Idempotency-Key"],
    ]);
    expect(create.description).toMatch(/Unknown fields are rejected/);
    const detail = r.body.components.schemas.DetectionDetail;
    expect(detail.required).toEqual(
      expect.arrayContaining(["id", "status", "score", "verdict", "failure_message"]),
    );
    expect(r.body.components.schemas.HTTPValidationError).toBeDefined();
    expect(r.body.paths["/v1/detection/{detection_id}"].get.parameters[0]).toMatchObject({
      name: "detection_id",
      in: "path",
      required: true,
    });
  });

  it("/docs serves swagger-ui from the local package, not a CDN", async () => {
    const page = await h.app.request("/docs");
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain('src="/docs/swagger-ui-bundle.js"');
    expect(html).not.toMatch(/https?:\/\//);
    const bundle = await h.app.request("/docs/swagger-ui-bundle.js");
    expect(bundle.status).toBe(200);
    expect(bundle.headers.get("content-type")).toMatch(/javascript/);
    expect((await bundle.text()).length).toBeGreaterThan(100_000);
    expect((await h.app.request("/docs/swagger-ui.css")).status).toBe(200);
    const init = await (await h.app.request("/docs/init.js")).text();
    expect(init).toContain('url: "/openapi.json"');
    const other = await h.app.request("/docs/package.json");
    expect(other.status).toBe(404);
    expect(await other.json()).toEqual({ detail: "Not Found" });
    expect((await h.app.request("/docs/..%2Fpackage.json")).status).toBe(404);
  });
});

describe("health, readiness, metrics", () => {
  it("/healthz answers ok", async () => {
    expect(await call(h, "GET", "/healthz")).toMatchObject({ status: 200, body: { status: "ok" } });
  });

  it("/readyz follows deps.ready(), including when it throws", async () => {
    expect((await call(h, "GET", "/readyz")).status).toBe(200);
    h.deps.ready = async () => ({ ok: false, reason: "the store is loading" });
    expect(await call(h, "GET", "/readyz")).toMatchObject({
      status: 503,
      body: { status: "unavailable", reason: "the store is loading" },
    });
    h.deps.ready = async () => {
      throw new Error("redis down");
    };
    const r = await call(h, "GET", "/readyz");
    expect(r.status).toBe(503);
    expect(r.body.reason).toMatch(/redis down/);
  });

  it("/metrics counts requests by route pattern, method and status, with a latency histogram", async () => {
    const t = await h.token("alice");
    await call(h, "GET", "/v1/detection/det-01jd5x9q3m8w2v7k4c6b0n1r2t", { token: t });
    await call(h, "GET", "/v1/detection/det-01jd5x9q3m8w2v7k4c6b0n1r2u", { token: t });
    await call(h, "GET", "/nowhere");
    const res = await h.app.request("/metrics");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^text\/plain/);
    const text = await res.text();
    expect(text).toContain(
      'docverify_http_requests_total{route="/v1/detection/:detection_id",method="GET",status="404"} 2',
    );
    expect(text).toContain('docverify_http_requests_total{route="/token",method="POST",status="200"} 1');
    expect(text).toContain('docverify_http_requests_total{route="unmatched",method="GET",status="404"} 1');
    expect(text).toMatch(
      /docverify_http_request_duration_seconds_bucket\{le="0\.005",route="\/v1\/detection\/:detection_id",method="GET"\}/,
    );
    expect(text).not.toContain("det-01jd5x9q3m8w2v7k4c6b0n1r2t");
  });

  it("two apps on one registry do not clash", async () => {
    const { createApp } = await import("../app.js");
    expect(() => createApp(h.deps)).not.toThrow();
  });
});

describe("unknown routes, methods and errors", () => {
  it("404 JSON for an unknown route, 405 JSON with Allow for a wrong method", async () => {
    expect(await call(h, "GET", "/nope")).toMatchObject({ status: 404, body: { detail: "Not Found" } });
    const r = await call(h, "PUT", "/healthz");
    expect(r).toMatchObject({ status: 405, body: { detail: "Method Not Allowed" } });
    expect(r.headers.get("allow")).toBe("GET, HEAD");
    const t = await h.token("alice");
    const patch = await call(h, "PATCH", "/v1/detection/det-01jd5x9q3m8w2v7k4c6b0n1r2t", { token: t });
    expect(patch.status).toBe(405);
    expect(patch.headers.get("allow")).toBe("GET, DELETE, HEAD");
  });

  it("echoes a valid x-request-id and makes one otherwise", async () => {
    const mine = await h.app.request("/healthz", { headers: { "x-request-id": "req-123" } });
    expect(mine.headers.get("x-request-id")).toBe("req-123");
    const made = await h.app.request("/healthz", { headers: { "x-request-id": "bad id\twith spaces" } });
    expect(made.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/);
  });

  it("an unexpected error is a 500 naming the request id, logged with it, without a stack trace", async () => {
    const lines: string[] = [];
    h.deps.log = pino(
      { level: "error" },
      new Writable({
        write(chunk, _enc, cb) {
          lines.push(chunk.toString());
          cb();
        },
      }),
    );
    h.store.get = async () => {
      throw new Error("disk on fire at /var/lib/secret/path");
    };
    const t = await h.token("alice");
    const res = await h.app.request("/v1/detection/det-01jd5x9q3m8w2v7k4c6b0n1r2t", {
      headers: { authorization: `Bearer ${t}`, "x-request-id": "req-500" },
    });
    expect(res.status).toBe(500);
    const text = await res.text();
    expect(JSON.parse(text)).toEqual({ detail: "Internal server error (request req-500)." });
    expect(text).not.toMatch(/disk on fire|at .*\.ts/);
    expect(res.headers.get("x-request-id")).toBe("req-500");
    expect(lines).toHaveLength(1);
    const entry = JSON.parse(lines[0]!);
    expect(entry.requestId).toBe("req-500");
    expect(entry.err.message).toMatch(/disk on fire/);
  });
});

describe("storage outages", () => {
  it("a store that is unavailable answers 503 with Retry-After, not 500", async () => {
    const { StoreError } = await import("../../core/ports.js");
    h.store.list = async () => {
      throw new StoreError("Unavailable", "apiserver unreachable");
    };
    const t = await h.token("alice");
    const r = await call(h, "GET", "/v1/detection", { token: t });
    expect(r.status).toBe(503);
    expect(r.headers.get("retry-after")).toBe("5");
    expect(r.body.detail).toMatch(/storage is unavailable/);
  });
});
