/**
 * The OpenAPI document as generated clients, OAuth libraries and Swagger UI read it: Redocly's recommended
 * ruleset passes (run offline, proven by a network recorder), every operation has an operationId and the
 * right security, patterns are portable, the contract's required/pattern/oneOf are expressed, and every
 * status each operation really answers is documented with an example that matches the real answer.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Detection } from "../core/detection.js";
import { DETECTION_JOB_KIND, type DetectionJob } from "../core/detection-job.js";
import { StoreError } from "../core/ports.js";
import { SCOPES } from "../core/scopes.js";
import { detectionEvent, endpointsOf, queueEvent } from "../core/webhooks.js";
import { MemoryResourceStore } from "../platform/local/memory-resource-store.js";
import { reviewToken } from "./review/signing.js";
import { call, createHarness, type Harness, manualClock } from "./testdata/app-kit.js";
import { completeForAttestation } from "./testdata/attestation-kit.js";
import { completeWithEvidence, createDetection } from "./testdata/evidence-kit.js";

const ROOT = path.resolve(import.meta.dirname, "..");
const REDOCLY = path.join(ROOT, "node_modules/@redocly/cli/bin/cli.js");
const RECORDER = path.join(import.meta.dirname, "testdata/record-network.mjs");

// biome-ignore lint/suspicious/noExplicitAny: the document is plain JSON read freely
type Doc = any;
let h: Harness;
let doc: Doc;
const HOOK_URL = "https://hooks.example.com/docverify";
beforeAll(async () => {
  const clock = manualClock();
  h = await createHarness({
    clock,
    config: { maxDocumentBytes: 4096 },
    jobs: new MemoryResourceStore<DetectionJob>(DETECTION_JOB_KIND, { now: () => clock.now() }),
    clients: [
      {
        client_id: "alice",
        client_secret: "alice-secret",
        scopes: [SCOPES.all],
        sample_allowance: 1,
        webhooks: [{ url: HOOK_URL, events: ["detection.completed"], secret: `whsec_${"A".repeat(32)}` }],
      },
      { client_id: "reader", client_secret: "reader-secret", scopes: [SCOPES.get] },
      {
        client_id: "batcher",
        client_secret: "batcher-secret",
        scopes: [SCOPES.all],
        buckets: ["loan-inbox", "loan-reports"],
      },
    ],
  });
  doc = (await call(h, "GET", "/openapi.json")).body;
});
afterAll(async () => {
  await h.close();
});

const METHODS = ["get", "put", "post", "delete", "patch"];
function operations(d: Doc): { path: string; method: string; op: Doc }[] {
  return Object.entries(d.paths as Record<string, Doc>).flatMap(([p, item]) =>
    METHODS.filter((m) => item[m]).map((m) => ({ path: p, method: m, op: item[m] })),
  );
}

describe("Redocly lint (recommended ruleset, redocly.yaml)", () => {
  it("reports 0 errors and 0 warnings, without touching the network", () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), "docverify-openapi-"));
    try {
      const file = path.join(dir, "openapi.json");
      writeFileSync(file, JSON.stringify(doc));
      const r = spawnSync(
        process.execPath,
        ["--import", RECORDER, REDOCLY, "lint", "--config", path.join(ROOT, "redocly.yaml"), file],
        {
          cwd: dir,
          encoding: "utf8",
          env: {
            PATH: process.env.PATH ?? "",
            HOME: dir,
            REDOCLY_TELEMETRY: "off",
            REDOCLY_SUPPRESS_UPDATE_NOTICE: "true",
            NO_COLOR: "1",
          },
          timeout: 120_000,
        },
      );
      const out = `${r.stdout}\n${r.stderr}`;
      expect(out).toContain("network recorder active");
      expect(out).not.toContain("NETWORK ATTEMPT");
      expect(out, out).toMatch(/Your API description is valid/);
      expect(out, out).not.toMatch(/\d+ warnings?/);
      expect(r.status, out).toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("operations and security", () => {
  it("every operation has a unique operationId", () => {
    const ids = operations(doc).map((o) => o.op.operationId);
    expect(ids.every((id) => typeof id === "string" && /^[a-z][A-Za-z]+$/.test(id))).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids.sort()).toEqual(
      [
        "createDetection",
        "createJob",
        "createToken",
        "createUpload",
        "deleteDetection",
        "getAttestation",
        "getDetection",
        "getDetectionEvidence",
        "getDetectionEvidencePage",
        "getHealth",
        "getJob",
        "getJwks",
        "getReadiness",
        "getReviewPage",
        "getReviewPageImage",
        "listDetections",
        "putDetectionFeedback",
        "listWebhookDeliveries",
        "listWebhooks",
        "replayWebhookDelivery",
        "uploadDocument",
      ].sort(),
    );
  });

  it("has an OAuth2 client-credentials scheme with tokenUrl /token and every scope", () => {
    const oauth = doc.components.securitySchemes.OAuth2;
    expect(oauth.type).toBe("oauth2");
    expect(oauth.flows.clientCredentials.tokenUrl).toBe("/token");
    expect(Object.keys(oauth.flows.clientCredentials.scopes).sort()).toEqual(Object.values(SCOPES).sort());
  });

  it("public operations say security: []; every other one names its scope", () => {
    const expected: Record<string, string[] | "public"> = {
      createToken: "public",
      uploadDocument: "public",
      getHealth: "public",
      getReadiness: "public",
      getJwks: "public",
      getReviewPage: "public",
      getReviewPageImage: "public",
      createDetection: [SCOPES.create, SCOPES.createSample],
      listDetections: [SCOPES.get],
      getDetection: [SCOPES.get],
      getDetectionEvidence: [SCOPES.get],
      getDetectionEvidencePage: [SCOPES.get],
      getAttestation: [SCOPES.get],
      deleteDetection: [SCOPES.delete],
      putDetectionFeedback: [SCOPES.feedback],
      createUpload: [SCOPES.create],
      createJob: [SCOPES.jobsCreate],
      getJob: [SCOPES.jobsGet],
      listWebhooks: [SCOPES.get],
      listWebhookDeliveries: [SCOPES.get],
      replayWebhookDelivery: [SCOPES.get],
    };
    for (const { op } of operations(doc)) {
      const want = expected[op.operationId];
      if (want === "public") expect(op.security, op.operationId).toEqual([]);
      else {
        expect(op.security, op.operationId).toEqual([
          ...want!.map((s) => ({ OAuth2: [s] })),
          { bearerAuth: [] },
        ]);
      }
    }
  });

  it("every operation but the two probes and the JWKS documents a 4xx answer (redocly.yaml turns that rule off)", () => {
    for (const { op } of operations(doc)) {
      const has4xx = Object.keys(op.responses).some((s) => /^4/.test(s));
      expect(has4xx, op.operationId).toBe(!["getHealth", "getReadiness", "getJwks"].includes(op.operationId));
    }
  });
});

describe("schemas as the contract says", () => {
  /** Every `pattern` in the document, with where it is. */
  function patterns(v: unknown, at = "#"): { at: string; pattern: string }[] {
    if (Array.isArray(v)) return v.flatMap((x, i) => patterns(x, `${at}/${i}`));
    if (v === null || typeof v !== "object") return [];
    return Object.entries(v).flatMap(([k, x]) =>
      k === "pattern" && typeof x === "string" ? [{ at, pattern: x }] : patterns(x, `${at}/${k}`),
    );
  }

  it("patterns are plain regular expressions: no JS delimiters or flags, valid in unicode mode too", () => {
    const all = patterns(doc);
    expect(all.length).toBeGreaterThanOrEqual(5);
    for (const { at, pattern } of all) {
      expect(pattern, at).not.toMatch(/^\/|\/[dgimsuyv]*$/);
      expect(() => new RegExp(pattern), at).not.toThrow();
      // unicode mode refuses the lax escapes other dialects do not have
      expect(() => new RegExp(pattern, "u"), at).not.toThrow();
      // no lookbehind, named groups or backreferences (not in RE2/Go, many validators)
      expect(pattern, at).not.toMatch(/\(\?<|\(\?P|\\k<|\\[1-9]/);
    }
  });

  it("the job_id pattern accepts a real job id in either case", () => {
    const p = new RegExp(doc.paths["/jobs/{job_id}"].get.parameters[0].schema.pattern);
    expect(p.test("3f0b8a52-5a7e-4c1e-9d55-2b1f6c0e7a91")).toBe(true);
    expect(p.test("3F0B8A52-5A7E-4C1E-9D55-2B1F6C0E7A91")).toBe(true);
    expect(p.test("3f0b8a52")).toBe(false);
  });

  it("create: exactly one of source_url or upload_id (oneOf), doc_type and region required, region pattern", () => {
    const create = doc.components.schemas.CreateDetectionRequest;
    expect(create.oneOf.map((o: Doc) => o.required)).toEqual([["source_url"], ["upload_id"]]);
    expect(create.required.sort()).toEqual(["doc_type", "region"]);
    expect(create.additionalProperties).toBe(false);
    expect(create.properties.region.pattern).toBe("^[A-Za-z]{2}$");
    expect(create.properties.upload_id.pattern).toBe("^upl-[0-9a-hjkmnp-tv-z]{26}$");
  });

  it("token: grant_type required (client_credentials), the form media type, TokenError codes", () => {
    const form = doc.paths["/token"].post.requestBody.content["application/x-www-form-urlencoded"].schema;
    const schema = form.$ref ? doc.components.schemas[form.$ref.split("/").pop()] : form;
    expect(schema.required).toEqual(["grant_type"]);
    expect(schema.properties.grant_type.enum).toEqual(["client_credentials"]);
  });

  it("uploads: filename, content_type and size_bytes, all optional", () => {
    const up = doc.components.schemas.CreateUploadRequest;
    expect(Object.keys(up.properties).sort()).toEqual(["content_type", "filename", "size_bytes"]);
    expect(up.required).toBeUndefined();
    expect(up.properties.size_bytes).toMatchObject({ type: "integer", minimum: 1 });
  });

  it("no 403, 404 or 429 example says 'Missing bearer token'", () => {
    for (const { op } of operations(doc)) {
      for (const [status, res] of Object.entries(op.responses as Record<string, Doc>)) {
        if (status === "401") continue;
        const text = JSON.stringify(res.content ?? {});
        expect(text, `${op.operationId} ${status}`).not.toContain("Missing bearer token");
      }
    }
  });
});

describe("every status an operation answers is documented, with a matching example", () => {
  /** Ids, UUIDs and numbers differ from the examples; the sentences must not. */
  const normalize = (s: string) =>
    s
      .replace(/det-[0-9a-z]{26}/g, "det-ID")
      .replace(/upl-[0-9a-z]{26}/g, "upl-ID")
      .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi, "UUID")
      .replace(/\d+/g, "N");

  const seen: string[] = [];
  /** Asserts that answer `r` of `method path` is documented and matches a documented example. */
  function documented(method: string, p: string, r: { status: number; body: Doc; headers?: Headers }): void {
    const op = doc.paths[p]?.[method];
    expect(op, `${method} ${p}`).toBeDefined();
    const res = op.responses[String(r.status)];
    const where = `${op.operationId} ${r.status} ${JSON.stringify(r.body).slice(0, 300)}`;
    expect(res, where).toBeDefined();
    seen.push(`${op.operationId} ${r.status}`);
    if (r.status === 204) {
      // No content: neither a body nor a documented media type.
      expect(r.body, where).toBe("");
      expect(res.content, where).toBeUndefined();
      return;
    }
    // The answer's media type is the one documented for that status (JSON unless it says otherwise).
    const type = (r.headers?.get("content-type") ?? "application/json").split(";")[0]!.trim();
    expect(Object.keys(res.content ?? {}), where).toContain(type);
    if (type !== "application/json") return;
    const media = res.content?.["application/json"];
    expect(media, where).toBeDefined();
    if (Array.isArray(r.body.detail)) {
      // HTTPValidationError: the shape, and an example of the same kind
      for (const issue of r.body.detail) {
        expect(
          Array.isArray(issue.loc) && typeof issue.msg === "string" && typeof issue.type === "string",
        ).toBe(true);
      }
      expect(media.example?.detail?.length, where).toBeGreaterThan(0);
      return;
    }
    if (r.status < 300 || typeof r.body.detail !== "string") return;
    const examples = media.examples
      ? Object.values(media.examples as Record<string, { value: Doc }>).map((e) => e.value)
      : [media.example];
    const actual = normalize(JSON.stringify(r.body));
    expect(
      examples.map((e) => normalize(JSON.stringify(e))),
      where,
    ).toContain(actual);
  }

  const PDF = Buffer.from("%PDF-1.7\n1 0 obj << >> endobj\ntrailer << >>\n%%EOF\n");
  const form = (fields: Record<string, string>) => ({
    raw: new URLSearchParams(fields).toString(),
    headers: { "content-type": "application/x-www-form-urlencoded" },
  });
  const putTo = async (url: string, body: Buffer | string) => {
    const u = new URL(url);
    const res = await h.app.request(`${u.pathname}${u.search}`, { method: "PUT", body });
    return { status: res.status, body: await res.json() };
  };

  it("POST /token", async () => {
    const ok = { grant_type: "client_credentials", client_id: "alice", client_secret: "alice-secret" };
    documented("post", "/token", await call(h, "POST", "/token", form(ok)));
    documented("post", "/token", await call(h, "POST", "/token", form({ ...ok, grant_type: "password" })));
    documented(
      "post",
      "/token",
      await call(
        h,
        "POST",
        "/token",
        form({ ...ok, client_id: "reader", client_secret: "reader-secret", scope: SCOPES.jobsGet }),
      ),
    );
    documented("post", "/token", await call(h, "POST", "/token", { body: ok }));
    documented("post", "/token", await call(h, "POST", "/token", form({ ...ok, client_secret: "wrong" })));
    documented("post", "/token", await call(h, "POST", "/token", form({ ...ok, scope: "x".repeat(20_000) })));
    // 429: an address that failed 10 times is blocked (a harness of its own: the block would hold for h).
    const throttled = await createHarness();
    try {
      for (let i = 0; i < 10; i++) {
        const r = await call(
          throttled,
          "POST",
          "/token",
          form({ ...ok, client_id: `guess-${i}`, client_secret: "x" }),
        );
        expect(r.status).toBe(401);
      }
      documented("post", "/token", await call(throttled, "POST", "/token", form(ok)));
    } finally {
      await throttled.close();
    }
  });

  it("detections", async () => {
    const alice = await h.token("alice");
    const reader = await h.token("reader");
    const createOnly = await h.token("alice", SCOPES.create);
    const body = { source_url: "https://example.com/a.pdf", doc_type: "invoice", region: "GB" };
    const created = await call(h, "POST", "/v1/detection", { token: alice, body });
    documented("post", "/v1/detection", created);
    const id = created.body.id;
    documented("post", "/v1/detection", await call(h, "POST", "/v1/detection", { body }));
    documented("post", "/v1/detection", await call(h, "POST", "/v1/detection", { token: "nonsense", body }));
    documented("post", "/v1/detection", await call(h, "POST", "/v1/detection", { token: reader, body }));
    documented(
      "post",
      "/v1/detection",
      await call(h, "POST", "/v1/detection", {
        token: alice,
        body: { ...body, upload_id: "upl-01jd5x9q3m8w2v7k4c6b0n1r2t" },
      }),
    );
    documented(
      "post",
      "/v1/detection",
      await call(h, "POST", "/v1/detection", { token: alice, body: { ...body, pad: "x".repeat(70_000) } }),
    );
    const sample = { token: alice, body, headers: { "x-sample-run": "true" } };
    documented("post", "/v1/detection", await call(h, "POST", "/v1/detection", sample));
    documented("post", "/v1/detection", await call(h, "POST", "/v1/detection", sample));

    documented(
      "get",
      "/v1/detection/{detection_id}",
      await call(h, "GET", `/v1/detection/${id}`, { token: alice }),
    );
    documented(
      "get",
      "/v1/detection/{detection_id}",
      await call(h, "GET", `/v1/detection/${id}`, { token: createOnly }),
    );
    documented(
      "get",
      "/v1/detection/{detection_id}",
      await call(h, "GET", "/v1/detection/DET_01", { token: alice }),
    );
    documented(
      "get",
      "/v1/detection/{detection_id}",
      await call(h, "GET", "/v1/detection/det-01jd5x9q3m8w2v7k4c6b0n1r2t", { token: alice }),
    );
    documented("get", "/v1/detection", await call(h, "GET", "/v1/detection", { token: alice }));
    documented("get", "/v1/detection", await call(h, "GET", "/v1/detection?limit=500", { token: alice }));
    documented("get", "/v1/detection", await call(h, "GET", "/v1/detection", { token: createOnly }));
    documented(
      "delete",
      "/v1/detection/{detection_id}",
      await call(h, "DELETE", `/v1/detection/${id}`, { token: createOnly }),
    );
    documented(
      "delete",
      "/v1/detection/{detection_id}",
      await call(h, "DELETE", `/v1/detection/${id}`, { token: alice }),
    );
    documented(
      "delete",
      "/v1/detection/{detection_id}",
      await call(h, "DELETE", `/v1/detection/${id}`, { token: alice }),
    );
    documented(
      "delete",
      "/v1/detection/{detection_id}",
      await call(h, "DELETE", "/v1/detection/x_", { token: alice }),
    );

    // an expired token
    h.clock.advance(3600_000 + 1000);
    documented("get", "/v1/detection", await call(h, "GET", "/v1/detection", { token: alice }));
  });

  it("evidence, page images and the reviewer page", async () => {
    const alice = await h.token("alice");
    const createOnly = await h.token("alice", SCOPES.create);
    const id = await createDetection(h, alice);
    const ev = `/v1/detection/${id}/evidence`;
    const evDoc = "/v1/detection/{detection_id}/evidence";
    const pageDoc = "/v1/detection/{detection_id}/evidence/pages/{file}";
    documented("get", evDoc, await call(h, "GET", ev, { token: alice }));
    documented("get", pageDoc, await call(h, "GET", `${ev}/pages/1.png`, { token: alice }));
    await completeWithEvidence(h, id);
    const full = await call(h, "GET", ev, { token: alice });
    documented("get", evDoc, full);
    documented("get", evDoc, await call(h, "GET", ev, { token: createOnly }));
    documented("get", evDoc, await call(h, "GET", "/v1/detection/DET_01/evidence", { token: alice }));
    documented(
      "get",
      evDoc,
      await call(h, "GET", "/v1/detection/det-01jd5x9q3m8w2v7k4c6b0n1r2t/evidence", { token: alice }),
    );
    documented("get", pageDoc, await call(h, "GET", `${ev}/pages/1.png`, { token: alice }));
    documented("get", pageDoc, await call(h, "GET", `${ev}/pages/7.png`, { token: alice }));
    documented("get", pageDoc, await call(h, "GET", `${ev}/pages/x.gif`, { token: alice }));
    documented("get", pageDoc, await call(h, "GET", `${ev}/pages/1.png`, { token: createOnly }));
    documented(
      "get",
      pageDoc,
      await call(h, "GET", "/v1/detection/det-01jd5x9q3m8w2v7k4c6b0n1r2t/evidence/pages/1.png", {
        token: alice,
      }),
    );
    const link = new URL(full.body.review_url as string);
    documented("get", "/review/{detection_id}", await call(h, "GET", `${link.pathname}${link.search}`));
    documented("get", "/review/{detection_id}", await call(h, "GET", link.pathname));
    const image = `${link.pathname}/pages/1.png${link.search}`;
    documented("get", "/review/{detection_id}/pages/{file}", await call(h, "GET", image));
    documented(
      "get",
      "/review/{detection_id}/pages/{file}",
      await call(h, "GET", `${link.pathname}/pages/1.png`),
    );
  });

  it("uploads", async () => {
    const alice = await h.token("alice");
    const reader = await h.token("reader");
    const reserve = (b?: unknown) => call(h, "POST", "/v1/uploads", { token: alice, body: b });
    const up = await reserve({ filename: "a.pdf", size_bytes: PDF.length });
    documented("post", "/v1/uploads", up);
    documented("post", "/v1/uploads", await call(h, "POST", "/v1/uploads", { token: reader }));
    documented("post", "/v1/uploads", await reserve({ size_bytes: 5000 }));
    documented("post", "/v1/uploads", await reserve({ filename: "x".repeat(70_000) }));

    const url = up.body.upload_url as string;
    documented("put", "/uploads/{upload_id}", await putTo(url, Buffer.concat([PDF, PDF])));
    documented("put", "/uploads/{upload_id}", await putTo(url, PDF.subarray(0, 9)));
    documented("put", "/uploads/{upload_id}", await putTo(url.replace(/sig=./, "sig=0"), PDF));
    documented("put", "/uploads/{upload_id}", await putTo(url, PDF));
    const open = (await reserve()).body.upload_url as string;
    documented("put", "/uploads/{upload_id}", await putTo(open, Buffer.alloc(5000, 1)));
    const created = await call(h, "POST", "/v1/detection", {
      token: alice,
      body: { upload_id: up.body.upload_id, doc_type: "invoice", region: "GB" },
    });
    documented("post", "/v1/detection", created);
    documented("put", "/uploads/{upload_id}", await putTo(url, PDF));
    documented(
      "post",
      "/v1/detection",
      await call(h, "POST", "/v1/detection", {
        token: alice,
        body: { upload_id: up.body.upload_id, doc_type: "invoice", region: "GB" },
      }),
    );
    const gone = (await reserve()).body;
    await h.deps.objects.deletePrefix(h.deps.bucket, `uploads/${gone.upload_id}/`);
    documented("put", "/uploads/{upload_id}", await putTo(gone.upload_url, PDF));
    h.clock.advance(3600_000 + 1000);
    documented("put", "/uploads/{upload_id}", await putTo(open, PDF));
  });

  it("webhooks", async () => {
    const alice = await h.token("alice");
    const jobsOnly = await h.token("batcher", SCOPES.jobsGet);
    documented("get", "/v1/webhooks", await call(h, "GET", "/v1/webhooks", { token: alice }));
    documented("get", "/v1/webhooks", await call(h, "GET", "/v1/webhooks", { token: jobsOnly }));
    const list = "/v1/webhooks/deliveries";
    const [endpoint] = endpointsOf("alice", h.deps.clients.get("alice")?.webhooks);
    const [delivery] = await queueEvent(
      h.deps.objects,
      h.deps.bucket,
      detectionEvent(
        { name: "det-01jd5x9q3m8w2v7k4c6b0n1r2t", clientId: "alice" },
        { phase: "Failed" },
        undefined,
        h.clock.now(),
      ),
      [endpoint!],
      h.clock.now(),
    );
    documented("get", list, await call(h, "GET", `${list}?endpoint_id=${endpoint!.id}`, { token: alice }));
    documented("get", list, await call(h, "GET", `${list}?endpoint_id=${endpoint!.id}`, { token: jobsOnly }));
    documented(
      "post",
      "/v1/webhooks/deliveries/{delivery_id}/replay",
      await call(h, "POST", `/v1/webhooks/deliveries/${delivery!.id}/replay`, { token: alice }),
    );
    documented(
      "post",
      "/v1/webhooks/deliveries/{delivery_id}/replay",
      await call(h, "POST", `/v1/webhooks/deliveries/${delivery!.id}/replay`, { token: jobsOnly }),
    );
    documented("get", list, await call(h, "GET", `${list}?endpoint_id=ep_000000000000`, { token: alice }));
    documented("get", list, await call(h, "GET", `${list}?endpoint_id=x`, { token: alice }));
    const replay = "/v1/webhooks/deliveries/{delivery_id}/replay";
    const id = "whd_8232712345678_1a2b3c4d_3f9a0c1d2e4b";
    documented(
      "post",
      replay,
      await call(h, "POST", `/v1/webhooks/deliveries/${id}/replay`, { token: alice }),
    );
    documented("post", replay, await call(h, "POST", "/v1/webhooks/deliveries/x/replay", { token: alice }));
  });

  it("jobs", async () => {
    const alice = await h.token("alice");
    const batcher = await h.token("batcher");
    const reader = await h.token("reader");
    const body = {
      connector: { type: "s3", bucket_name: "loan-inbox", prefixes: [""] },
      output: { type: "s3", bucket_name: "loan-reports", prefix: "" },
    };
    const job = await call(h, "POST", "/jobs", { token: batcher, body });
    documented("post", "/jobs", job);
    documented("get", "/jobs/{job_id}", await call(h, "GET", `/jobs/${job.body.job_id}`, { token: batcher }));
    documented("post", "/jobs", await call(h, "POST", "/jobs", { token: alice, body }));
    documented("post", "/jobs", await call(h, "POST", "/jobs", { token: reader, body }));
    documented(
      "post",
      "/jobs",
      await call(h, "POST", "/jobs", { token: alice, body: { ...body, output: {} } }),
    );
    documented(
      "post",
      "/jobs",
      await call(h, "POST", "/jobs", {
        token: alice,
        raw: " ".repeat(70_000),
        headers: { "content-type": "application/json" },
      }),
    );
    const jobId = "3f0b8a52-5a7e-4c1e-9d55-2b1f6c0e7a91";
    documented("get", "/jobs/{job_id}", await call(h, "GET", `/jobs/${jobId}`, { token: alice }));
    documented("get", "/jobs/{job_id}", await call(h, "GET", `/jobs/${jobId}`, { token: reader }));
    documented("get", "/jobs/{job_id}", await call(h, "GET", "/jobs/abc", { token: alice }));
    const noJobs = await createHarness();
    try {
      const t = await noJobs.token("alice");
      documented("get", "/jobs/{job_id}", await call(noJobs, "GET", `/jobs/${jobId}`, { token: t }));
      documented("post", "/jobs", await call(noJobs, "POST", "/jobs", { token: t, body }));
    } finally {
      await noJobs.close();
    }
  });

  it("attestation and JWKS", async () => {
    const alice = await h.token("alice");
    const createOnly = await h.token("alice", SCOPES.create);
    const reader = await h.token("reader");
    const doc = "/v1/detection/{detection_id}/attestation";
    documented("get", "/.well-known/jwks.json", await call(h, "GET", "/.well-known/jwks.json"));
    const id = await createDetection(h, alice);
    const at = `/v1/detection/${id}/attestation`;
    documented("get", doc, await call(h, "GET", at, { token: alice })); // 409 QUEUED
    await completeForAttestation(h, id, PDF, []);
    documented("get", doc, await call(h, "GET", at, { token: alice }));
    documented("get", doc, await call(h, "GET", at, { token: createOnly }));
    documented("get", doc, await call(h, "GET", at, { token: reader }));
    documented("get", doc, await call(h, "GET", "/v1/detection/DET_01/attestation", { token: alice }));
    const pruned = await createDetection(h, alice);
    await completeForAttestation(h, pruned, PDF, []);
    const d = (await h.store.get(pruned)) as Detection;
    await h.store.updateStatus({
      ...d,
      status: { ...d.status, verdict: null, prunedAt: "2030-02-01T00:00:00Z" },
    });
    documented("get", doc, await call(h, "GET", `/v1/detection/${pruned}/attestation`, { token: alice }));
    const unsigned = await createHarness({ attestation: null });
    try {
      const t = await unsigned.token("alice");
      const other = await createDetection(unsigned, t);
      await completeForAttestation(unsigned, other, PDF, []);
      documented("get", doc, await call(unsigned, "GET", `/v1/detection/${other}/attestation`, { token: t }));
    } finally {
      await unsigned.close();
    }
  });

  it("feedback", async () => {
    const alice = await h.token("alice");
    const reader = await h.token("reader");
    const doc = "/v1/detection/{detection_id}/feedback";
    const id = await createDetection(h, alice);
    const at = `/v1/detection/${id}/feedback`;
    documented("put", doc, await call(h, "PUT", at, { token: alice, body: { label: "genuine" } }));
    documented("put", doc, await call(h, "PUT", at, { token: alice, body: { label: "fraud" } }));
    documented("put", doc, await call(h, "PUT", at, { token: reader, body: { label: "genuine" } }));
    documented(
      "put",
      doc,
      await call(h, "PUT", "/v1/detection/det-01jd5x9q3m8w2v7k4c6b0n1r2t/feedback", {
        token: alice,
        body: { label: "genuine" },
      }),
    );
    documented("put", doc, await call(h, "PUT", "/v1/detection/DET_01/feedback", { token: alice, body: {} }));
    const big = { label: "genuine", note: "x".repeat(9000) };
    documented("put", doc, await call(h, "PUT", at, { token: alice, body: big }));
  });

  /** One request of each bearer operation (method, documented path, real path, body). */
  const BEARER_CALLS: [string, string, string, unknown?][] = [
    [
      "POST",
      "/v1/detection",
      "/v1/detection",
      { source_url: "https://example.com/a.pdf", doc_type: "invoice", region: "GB" },
    ],
    ["GET", "/v1/detection", "/v1/detection"],
    ["GET", "/v1/detection/{detection_id}", "/v1/detection/det-01jd5x9q3m8w2v7k4c6b0n1r2t"],
    ["GET", "/v1/detection/{detection_id}/evidence", "/v1/detection/det-01jd5x9q3m8w2v7k4c6b0n1r2t/evidence"],
    [
      "GET",
      "/v1/detection/{detection_id}/evidence/pages/{file}",
      "/v1/detection/det-01jd5x9q3m8w2v7k4c6b0n1r2t/evidence/pages/1.png",
    ],
    [
      "GET",
      "/v1/detection/{detection_id}/attestation",
      "/v1/detection/det-01jd5x9q3m8w2v7k4c6b0n1r2t/attestation",
    ],
    ["DELETE", "/v1/detection/{detection_id}", "/v1/detection/det-01jd5x9q3m8w2v7k4c6b0n1r2t"],
    [
      "PUT",
      "/v1/detection/{detection_id}/feedback",
      "/v1/detection/det-01jd5x9q3m8w2v7k4c6b0n1r2t/feedback",
      { label: "genuine" },
    ],
    ["POST", "/v1/uploads", "/v1/uploads"],
    ["GET", "/v1/webhooks", "/v1/webhooks"],
    ["GET", "/v1/webhooks/deliveries", "/v1/webhooks/deliveries?endpoint_id=ep_000000000000"],
    [
      "POST",
      "/v1/webhooks/deliveries/{delivery_id}/replay",
      "/v1/webhooks/deliveries/whd_8232712345678_1a2b3c4d_3f9a0c1d2e4b/replay",
    ],
    [
      "POST",
      "/jobs",
      "/jobs",
      {
        connector: { type: "s3", bucket_name: "loan-inbox", prefixes: [""] },
        output: { type: "s3", bucket_name: "loan-reports", prefix: "" },
      },
    ],
    ["GET", "/jobs/{job_id}", "/jobs/3f0b8a52-5a7e-4c1e-9d55-2b1f6c0e7a91"],
  ];

  it("Idempotency-Key: 400 malformed, 409 in flight, 422 reused (both creates)", async () => {
    const alice = await h.token("alice");
    const batcher = await h.token("batcher");
    const jobs = h.deps.jobs as MemoryResourceStore<DetectionJob>;
    const cases = [
      {
        p: "/v1/detection",
        token: alice,
        body: { source_url: "https://example.com/a.pdf", doc_type: "invoice", region: "GB" },
        other: { source_url: "https://example.com/b.pdf", doc_type: "invoice", region: "GB" },
        store: h.store as unknown as { create: (o: unknown) => Promise<unknown> },
      },
      {
        p: "/jobs",
        token: batcher,
        body: {
          connector: { type: "s3", bucket_name: "loan-inbox", prefixes: [""] },
          output: { type: "s3", bucket_name: "loan-reports", prefix: "" },
        },
        other: {
          connector: { type: "s3", bucket_name: "loan-inbox", prefixes: ["b/"] },
          output: { type: "s3", bucket_name: "loan-reports", prefix: "" },
        },
        store: jobs as unknown as { create: (o: unknown) => Promise<unknown> },
      },
    ];
    for (const k of cases) {
      const key = { "Idempotency-Key": `openapi-${k.p}` };
      const post = (body: unknown, headers: Record<string, string>) =>
        call(h, "POST", k.p, { token: k.token, body, headers });
      documented("post", k.p, await post(k.body, { "Idempotency-Key": "" }));
      const create = k.store.create;
      let open!: () => void;
      let entered!: () => void;
      const inCreate = new Promise<void>((r) => {
        entered = r;
      });
      const gate = new Promise<void>((r) => {
        open = r;
      });
      k.store.create = async (o) => {
        entered();
        await gate;
        return create.call(k.store, o);
      };
      const first = post(k.body, key);
      await inCreate;
      const busy = await post(k.body, key);
      expect(busy.status).toBe(409);
      documented("post", k.p, busy);
      open();
      expect((await first).status).toBe(202);
      k.store.create = create;
      const replay = await post(k.body, key);
      expect(replay.status).toBe(202);
      expect(replay.body).toEqual((await first).body);
      documented("post", k.p, replay);
      const reused = await post(k.other, key);
      expect(reused.status, `${k.p} ${JSON.stringify(reused.body)}`).toBe(422);
      documented("post", k.p, reused);
    }
  });

  it("401 without a token, on every bearer operation", async () => {
    for (const [method, doc, real, body] of BEARER_CALLS) {
      documented(method.toLowerCase(), doc, await call(h, method, real, { body }));
    }
  });

  it("429 when the per-client rate limit is set and exceeded, on every bearer operation", async () => {
    const limited = await createHarness({
      config: { rateLimitPerMinute: 1 },
      jobs: new MemoryResourceStore<DetectionJob>(DETECTION_JOB_KIND),
    });
    try {
      const t = await limited.token("alice");
      expect((await call(limited, "GET", "/v1/detection", { token: t })).status).toBe(200);
      for (const [method, doc, real, body] of BEARER_CALLS) {
        const r = await call(limited, method, real, { token: t, body });
        expect(r.status).toBe(429);
        expect(r.headers.get("retry-after")).toMatch(/^\d+$/);
        documented(method.toLowerCase(), doc, r);
      }
    } finally {
      await limited.close();
    }
  });

  it("503 when the resource store is unavailable, on every operation that reads it; the probes", async () => {
    const jobs = new MemoryResourceStore<DetectionJob>(DETECTION_JOB_KIND);
    const down = await createHarness({
      jobs,
      clients: [
        { client_id: "b", client_secret: "s", scopes: [SCOPES.all], buckets: ["loan-inbox", "loan-reports"] },
      ],
    });
    try {
      const t = await down.token("b");
      const unavailable = async () => {
        throw new StoreError("Unavailable", "etcd is down");
      };
      for (const store of [down.store, jobs] as unknown as Record<
        "get" | "list" | "create" | "delete",
        unknown
      >[]) {
        store.get = unavailable;
        store.list = unavailable;
        store.create = unavailable;
        store.delete = unavailable;
      }
      for (const [method, doc, real, body] of BEARER_CALLS) {
        const r = await call(down, method, real, { token: t, body });
        if (doc.startsWith("/v1/webhooks")) continue; // the webhook routes read no resource
        if (doc === "/v1/uploads") {
          expect(r.status).toBe(201); // reserving an upload reads no resource
          continue;
        }
        expect(r.status, doc).toBe(503);
        documented(method.toLowerCase(), doc, r);
      }
      // The reviewer page and its images read the detection too, once a link's signature holds.
      const id = "det-01jd5x9q3m8w2v7k4c6b0n1r2t";
      const link = reviewToken(id, "b", 4_000_000_000, down.deps.tokens.hmac);
      for (const p of ["/review/{detection_id}", "/review/{detection_id}/pages/{file}"]) {
        const real = p.replace("{detection_id}", id).replace("{file}", "1.png");
        const r = await call(down, "GET", `${real}?token=${encodeURIComponent(link)}`);
        expect(r.status, p).toBe(503);
        documented("get", p, r);
      }
      documented("get", "/healthz", await call(down, "GET", "/healthz"));
      documented("get", "/readyz", await call(down, "GET", "/readyz"));
      down.deps.ready = async () => ({ ok: false, reason: "The resource store does not answer." });
      documented("get", "/readyz", await call(down, "GET", "/readyz"));
    } finally {
      await down.close();
    }
  });

  afterAll(() => {
    // the scenarios above reached every operation and more than one status of each
    const ops = new Set(seen.map((s) => s.split(" ")[0]));
    expect([...ops].sort()).toEqual(
      operations(doc)
        .map((o) => o.op.operationId)
        .sort(),
    );
    // every documented answer was produced by a real request above
    const documentedAnswers = operations(doc).flatMap((o) =>
      Object.keys(o.op.responses).map((s) => `${o.op.operationId} ${s}`),
    );
    const unexercised = documentedAnswers.filter((a) => !seen.includes(a));
    expect(unexercised.sort()).toEqual([]);
  });
});
