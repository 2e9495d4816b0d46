import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeDocument } from "../fixtures/documents.js";
import { CLIENTS, type Service, startFileServer, startService } from "./harness.js";

let svc: Service;
let files: Awaited<ReturnType<typeof startFileServer>>;

beforeAll(async () => {
  files = await startFileServer({
    "/invoice.pdf": { body: await makeDocument({ seed: 11, docType: "invoice", region: "DE" }) },
  });
  // The SSRF guard is on (the default): the file server on 127.0.0.1 is a private address. Its port is
  // allowed, so what refuses it is the address guard.
  svc = await startService({
    env: { DOCVERIFY_RETENTION_SECONDS: "3", DOCVERIFY_ALLOWED_SOURCE_PORTS: `80,443,${files.port}` },
  });
});
afterAll(async () => {
  await svc?.dispose();
  await files?.close();
});

describe("SSRF guard", () => {
  it.each([
    ["loopback", () => files.url("/invoice.pdf")],
    ["numeric loopback", () => "http://2130706433/invoice.pdf"],
    ["metadata address", () => "http://169.254.169.254/latest/meta-data/"],
    ["IPv4-mapped IPv6 loopback", () => "http://[::ffff:127.0.0.1]/x.pdf"],
    ["private range", () => "http://10.0.0.1/x.pdf"],
    ["IPv4-compatible IPv6 loopback", () => `http://[::127.0.0.1]:${files.port}/invoice.pdf`],
    ["NAT64 loopback", () => `http://[64:ff9b::7f00:1]:${files.port}/invoice.pdf`],
    ["6to4 loopback", () => `http://[2002:7f00:1::1]:${files.port}/invoice.pdf`],
    ["public address on a port outside the allow-list", () => "http://93.184.216.34:8080/x.pdf"],
  ])("refuses a %s source with 202 then FAILED source_forbidden", async (_name, url) => {
    const c = await svc.create(CLIENTS.full, { source_url: url(), doc_type: "invoice", region: "DE" });
    expect(c.status).toBe(202);
    const d = await svc.waitTerminal(CLIENTS.full, c.body.id);
    expect(d).toMatchObject({ status: "FAILED", failure_code: "source_forbidden" });
  });

  it("refuses a non-http scheme at create with 422", async () => {
    const c = await svc.create(CLIENTS.full, {
      source_url: "file:///etc/passwd",
      doc_type: "invoice",
      region: "DE",
    });
    expect(c.status).toBe(422);
    expect(c.body.detail[0].loc).toEqual(["body", "source_url"]);
  });
});

describe("bad input never yields a 500", () => {
  const cases: [string, string, Record<string, unknown>][] = [
    ["malformed JSON", "POST", { body: "{not json", headers: { "content-type": "application/json" } }],
    [
      "both sources",
      "POST",
      {
        json: {
          source_url: "https://x.example/a.pdf",
          upload_id: "upl-x",
          doc_type: "invoice",
          region: "US",
        },
      },
    ],
    ["neither source", "POST", { json: { doc_type: "invoice", region: "US" } }],
    [
      "unknown doc_type",
      "POST",
      { json: { source_url: "https://x.example/a.pdf", doc_type: "napkin", region: "US" } },
    ],
    [
      "bad region",
      "POST",
      { json: { source_url: "https://x.example/a.pdf", doc_type: "invoice", region: "XX" } },
    ],
    ["array body", "POST", { json: [1, 2, 3] }],
    [
      "huge string",
      "POST",
      { json: { source_url: `https://x.example/${"a".repeat(70_000)}`, doc_type: "invoice", region: "US" } },
    ],
  ];
  it.each(cases)("%s → 4xx with a detail", async (_n, method, opts) => {
    const r = await svc.call(method, "/v1/detection", { client: CLIENTS.full, ...opts });
    expect(r.status).toBeGreaterThanOrEqual(400);
    expect(r.status).toBeLessThan(500);
    expect(r.body).toHaveProperty("detail");
    expect(JSON.stringify(r.body)).not.toMatch(/\bat .+\.(ts|js):\d+/); // no stack traces
  });

  it("orders 401 → 403 → 422 → 404", async () => {
    expect((await svc.call("GET", "/v1/detection/NOT_VALID")).status).toBe(401);
    const noScope = await svc.token(CLIENTS.sampler, "DocumentVerification:detections:create_sample");
    expect((await svc.call("GET", "/v1/detection/NOT_VALID", { token: noScope })).status).toBe(403);
    expect((await svc.call("GET", "/v1/detection/NOT_VALID", { client: CLIENTS.full })).status).toBe(422);
    expect(
      (await svc.call("GET", "/v1/detection/det-00000000000000000000000000", { client: CLIENTS.full }))
        .status,
    ).toBe(404);
  });

  it("uses the spec's exact auth messages", async () => {
    expect((await svc.call("GET", "/v1/detection")).body).toEqual({ detail: "Missing bearer token" });
    expect(
      (await svc.call("GET", "/v1/detection", { headers: { authorization: "Basic abc" } })).body,
    ).toEqual({
      detail: "Missing bearer token",
    });
    expect((await svc.call("GET", "/v1/detection", { token: "not.a.jwt" })).status).toBe(401);
    const t = await svc.call("POST", "/token", {
      body: new URLSearchParams({ grant_type: "password", client_id: "x", client_secret: "y" }),
      headers: { "content-type": "application/x-www-form-urlencoded" },
    });
    expect(t.status).toBe(400);
    expect(t.body.detail).toBe("unsupported grant_type");
  });
});

describe("retention", () => {
  it("prunes the verdict after the retention period; status and score stay", async () => {
    const r = await svc.call("POST", "/v1/uploads", { client: CLIENTS.full, json: { filename: "inv.pdf" } });
    await fetch(r.body.upload_url, {
      method: "PUT",
      body: await makeDocument({ seed: 12, docType: "invoice", region: "DE" }),
    });
    const c = await svc.create(CLIENTS.full, {
      upload_id: r.body.upload_id,
      doc_type: "invoice",
      region: "DE",
    });
    const d = await svc.waitTerminal(CLIENTS.full, c.body.id);
    expect(d.status).toBe("COMPLETED");
    expect(d.verdict).not.toBeNull();
    const until = Date.now() + 30_000;
    let after = d;
    while (after.verdict !== null && Date.now() < until) {
      await new Promise((res) => setTimeout(res, 250));
      after = (await svc.call("GET", `/v1/detection/${d.id}`, { client: CLIENTS.full })).body;
    }
    expect(after).toMatchObject({ status: "COMPLETED", verdict: null, score: d.score });
  });
});

describe("many at once", () => {
  it("40 concurrent detections all reach a terminal state", async () => {
    const uploads = await Promise.all(
      Array.from({ length: 40 }, async (_, i) => {
        const r = await svc.call("POST", "/v1/uploads", {
          client: CLIENTS.full,
          json: { filename: `doc-${i}.pdf` },
        });
        const put = await fetch(r.body.upload_url, {
          method: "PUT",
          body: await makeDocument({ seed: 100 + i, docType: i % 2 ? "invoice" : "payslip", region: "US" }),
        });
        expect(put.status).toBe(200);
        return { id: r.body.upload_id as string, type: i % 2 ? "invoice" : "payslip" };
      }),
    );
    const created = await Promise.all(
      uploads.map((u) => svc.create(CLIENTS.full, { upload_id: u.id, doc_type: u.type, region: "US" })),
    );
    for (const c of created) expect(c.status).toBe(202);
    const done = await Promise.all(created.map((c) => svc.waitTerminal(CLIENTS.full, c.body.id, 150_000)));
    expect(done.filter((d) => d.status === "COMPLETED")).toHaveLength(40);
  });
});

describe("service endpoints", () => {
  it("serves openapi.json, docs, health, readiness and metrics", async () => {
    const spec = await svc.call("GET", "/openapi.json");
    expect(spec.status).toBe(200);
    expect(spec.body.info.version).toBe("1.0.0");
    expect(Object.keys(spec.body.paths)).toEqual(
      expect.arrayContaining(["/token", "/v1/detection", "/v1/detection/{detection_id}"]),
    );
    const docs = await fetch(`${svc.url}/docs`);
    expect(docs.status).toBe(200);
    expect(await docs.text()).toMatch(/swagger/i);
    expect((await svc.call("GET", "/healthz")).status).toBe(200);
    expect((await svc.call("GET", "/readyz")).status).toBe(200);
    const m = await fetch(`${svc.url}/metrics`);
    const text = await m.text();
    expect(text).toContain("docverify_reconcile_total");
    expect(text).toContain("docverify_step_duration_seconds");
  });
});
