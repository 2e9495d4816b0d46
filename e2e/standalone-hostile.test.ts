/**
 * Hostile input against the running standalone service (issue 13): every case of e2e/hostile-cases.ts —
 * decompression bombs, operator and XObject bombs, cycles, deep and huge page trees, huge images,
 * truncated and garbage files, encrypted files, polyglots, slow, silent and endless sources — reaches its
 * expected terminal state; the service stays healthy throughout and completes a normal document afterwards.
 * The cases are submitted together (as an attacker would), with a generous guard against hangs. Time and
 * memory per case are `npm run bench:hostile`'s to measure.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FAILURE_MESSAGES, type FailureCode } from "../core/failure-codes.js";
import { makeDocument } from "../fixtures/documents.js";
import { haveQpdf } from "../fixtures/encrypted.js";
import { CLIENTS, type Service, startService } from "./harness.js";
import { HOSTILE_CASES, type HostileCase, misbehave } from "./hostile-cases.js";

/** Long enough for any case on a loaded machine; a hang runs into it. */
const GUARD_MS = 170_000;
const needsQpdf = (c: HostileCase) => c.name.startsWith("encrypted_");
const cases = HOSTILE_CASES.filter((c) => haveQpdf() || !needsQpdf(c));

let svc: Service;
let server: http.Server;
let port: number;
const ids = new Map<string, string>();
const outcomes = new Map<string, Promise<Record<string, unknown>>>();

beforeAll(async () => {
  const docs = new Map<string, { bytes: Uint8Array; type: string }>();
  for (const c of cases)
    if (c.source.kind === "document")
      docs.set(`/${c.name}`, { bytes: await c.source.bytes(), type: c.source.contentType });
  docs.set("/normal.pdf", {
    bytes: await makeDocument({ seed: 1398, docType: "invoice", region: "GB" }),
    type: "application/pdf",
  });
  server = http.createServer((req, res) => {
    const c = cases.find((x) => `/${x.name}` === req.url);
    if (c && c.source.kind !== "document") return misbehave(c.source.kind, req, res);
    const doc = docs.get(req.url ?? "");
    if (!doc) return void res.writeHead(404).end();
    res.writeHead(200, { "content-type": doc.type, "content-length": doc.bytes.length }).end(doc.bytes);
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  port = (server.address() as AddressInfo).port;
  svc = await startService({
    env: {
      DOCVERIFY_ALLOW_PRIVATE_SOURCES: "true",
      DOCVERIFY_ALLOWED_SOURCE_PORTS: String(port),
      // The slow and silent sources end at the download limit: a short one keeps the suite short.
      DOCVERIFY_DOWNLOAD_TIMEOUT_SECONDS: "4",
      DOCVERIFY_CONCURRENCY: "32",
    },
  });
  // Everything at once, as an attacker would send it.
  for (const c of cases) {
    const created = await svc.create(CLIENTS.full, {
      source_url: `http://127.0.0.1:${port}/${c.name}`,
      doc_type: "invoice",
      region: "GB",
    });
    expect(created.status, c.name).toBe(202);
    ids.set(c.name, created.body.id);
  }
  for (const c of cases) {
    const p = svc.waitTerminal(CLIENTS.full, ids.get(c.name)!, GUARD_MS);
    p.catch(() => undefined);
    outcomes.set(c.name, p);
  }
});

afterAll(async () => {
  await svc?.dispose();
  await new Promise<void>((r) => (server ? server.close(() => r()) : r()));
});

describe("hostile input", () => {
  it("answers health checks while the hostile cases run", async () => {
    const health = await svc.call("GET", "/healthz");
    expect(health.status).toBe(200);
    const list = await svc.call("GET", "/v1/detection?limit=5", { client: CLIENTS.full });
    expect(list.status).toBe(200);
  });

  it.each(cases.map((c) => [c.name, c] as const))("%s reaches its terminal state", async (_name, c) => {
    const d = await outcomes.get(c.name)!;
    expect({ status: d.status, failure_code: d.failure_code }, `${c.name}: ${c.what}`).toEqual({
      status: c.expect.status,
      failure_code: c.expect.failureCode ?? null,
    });
    if (c.expect.failureCode)
      expect(d.failure_message).toBe(FAILURE_MESSAGES[c.expect.failureCode as FailureCode]);
    else expect(d.score).not.toBeNull();
  });

  it("stays healthy and completes a normal document afterwards", async () => {
    await Promise.allSettled(outcomes.values());
    expect((await svc.call("GET", "/healthz")).status).toBe(200);
    expect((await svc.call("GET", "/readyz")).status).toBe(200);
    const created = await svc.create(CLIENTS.full, {
      source_url: `http://127.0.0.1:${port}/normal.pdf`,
      doc_type: "invoice",
      region: "GB",
    });
    expect(created.status).toBe(202);
    const d = await svc.waitTerminal(CLIENTS.full, created.body.id, GUARD_MS);
    expect(d).toMatchObject({ status: "COMPLETED", failure_code: null });
    expect(typeof d.score).toBe("number");
  });
});
