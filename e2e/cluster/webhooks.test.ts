/**
 * Webhooks in the cluster runtime (issue 25), on a real kube-apiserver + etcd with the real operator and
 * api, step Pods (node player), Redis and S3 (s3rver); real receivers on loopback verify each delivery with
 * the `standardwebhooks` library. Only the operator's leader sends (the api replicas only read the log
 * and file replays); the outbox mark rides on the Detection's status through the CRD. The runtime runs
 * without the private-address override: only 127.0.0.1 is allowed, so an endpoint on 127.0.0.2 is refused.
 */
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeDocument } from "../../fixtures/documents.js";
import { newSecret, startReceiver } from "../../operator/testdata/webhook-receiver.js";
import { missingPrerequisites, type RuntimeWorld, startRuntimeWorld, until } from "./runtime-world.js";
import type { RuntimeProcess } from "./runtime-process.js";
import { tempDirs } from "../../fixtures/temp-dirs.js";

const temp = tempDirs();
afterAll(temp.removeAll);

const NS = "docverify-webhooks";
const secret = newSecret();
const CLIENT = {
  client_id: "acme-bank",
  client_secret: "s3cret-acme-0123456789",
  scopes: ["DocumentVerification:*"],
};
const OTHER = {
  client_id: "other-bank",
  client_secret: "s3cret-other-0123456789",
  scopes: ["DocumentVerification:*"],
};

const missing = missingPrerequisites();
const title = missing.length
  ? `webhooks in the cluster runtime: SKIPPED — ${missing.join("; ")}`
  : "webhooks in the cluster runtime";

// biome-ignore lint/suspicious/noExplicitAny: JSON answers of many shapes
type Json = any;
type Receiver = Awaited<ReturnType<typeof startReceiver>>;

describe.skipIf(missing.length > 0)(title, () => {
  let w: RuntimeWorld;
  let good: Receiver;
  let flaky: Receiver;
  let redirecting: Receiver;
  let target: Receiver;
  let refused: Receiver;
  let holding: Receiver;
  let operator: RuntimeProcess;
  let env: Record<string, string>;

  beforeAll(async () => {
    good = await startReceiver({ secret });
    flaky = await startReceiver({ secret, behaviour: (n) => (n < 5 ? 500 : 200) });
    target = await startReceiver({ secret });
    redirecting = await startReceiver({ secret, behaviour: () => ({ redirect: target.url("/moved") }) });
    refused = await startReceiver({ secret, host: "127.0.0.2" });
    holding = await startReceiver({ secret, behaviour: (n) => (n === 0 ? "hold" : 200) });
    w = await startRuntimeWorld({
      namespace: NS,
      documents: {
        "/statement.pdf": Buffer.from(
          await makeDocument({ seed: 12, docType: "bank_statement", region: "GB", pages: 1 }),
        ),
      },
    });
    const events = ["detection.completed", "detection.failed"];
    const clients = [
      {
        ...CLIENT,
        webhooks: [
          { url: good.url(), events, secret },
          { url: flaky.url(), events, secret },
          { url: redirecting.url(), events, secret },
          { url: refused.url(), events, secret },
        ],
      },
      { ...OTHER, webhooks: [{ url: holding.url(), events, secret }] },
    ];
    const dir = await temp.make("docverify-cluster-webhooks-");
    const clientsFile = path.join(dir, "clients.json");
    await writeFile(clientsFile, JSON.stringify({ clients }));
    const docPort = new URL(w.docBase).port;
    const ports = [good, flaky, target, redirecting, refused, holding].map((r) => r.port);
    env = {
      DOCVERIFY_ALLOW_PRIVATE_SOURCES: "false",
      DOCVERIFY_ALLOWED_PRIVATE_ADDRESSES: "127.0.0.1",
      DOCVERIFY_ALLOWED_SOURCE_PORTS: [docPort, ...ports].join(","),
      DOCVERIFY_WEBHOOK_RETRY_SECONDS: "0.2,0.2,0.2,0.2,0.2,0.2,0.2",
      DOCVERIFY_WEBHOOK_TIMEOUT_SECONDS: "120",
      DOCVERIFY_WEBHOOK_POLL_SECONDS: "0.2",
      DOCVERIFY_PUBLIC_URL: "https://verify.example.com",
      DOCVERIFY_CLIENTS_FILE: clientsFile,
    };
    operator = await w.newOperator("operator-a", env);
    await operator.waitForLog(/is the leader/, 30_000);
    await w.startApi(clients, env);
  });
  afterAll(async () => {
    await w?.stop();
    for (const r of [good, flaky, target, redirecting, refused, holding]) await r?.close();
  });

  async function deliveries(url: string, client = CLIENT): Promise<Json[]> {
    const eps = await w.call("GET", "/v1/webhooks", undefined, client);
    expect(eps.status).toBe(200);
    const ep = (eps.body.items as { id: string; url: string }[]).find((e) => e.url === url);
    if (!ep) throw new Error(`no endpoint ${url}`);
    const r = await w.call("GET", `/v1/webhooks/deliveries?endpoint_id=${ep.id}`, undefined, client);
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    return r.body.items;
  }
  const settled = (url: string, client = CLIENT) =>
    until(`the delivery to ${url}`, async () => {
      const ds = await deliveries(url, client);
      return ds.length > 0 && ds[0].status !== "PENDING" ? ds : undefined;
    });

  let detection: Json;
  it("a completed detection is delivered once by the operator, signed so standardwebhooks verifies it", async () => {
    const created = await w.call("POST", "/v1/detection", {
      source_url: `${w.docBase}/statement.pdf`,
      doc_type: "bank_statement",
      region: "GB",
    });
    expect(created.status, JSON.stringify(created.body)).toBe(202);
    detection = await w.waitTerminal(created.body.id);
    expect(detection.status, JSON.stringify(detection)).toBe("COMPLETED");
    const ds = await settled(good.url());
    expect(ds).toHaveLength(1);
    expect(ds[0]).toMatchObject({ status: "DELIVERED", attempt_count: 1, webhook_id: `msg_${detection.id}` });
    expect(good.received).toHaveLength(1);
    expect(good.received[0]!.verified).toBe(true);
    expect(JSON.parse(good.received[0]!.body)).toEqual({
      type: "detection.completed",
      timestamp: detection.completed_at,
      data: {
        id: detection.id,
        status: "COMPLETED",
        score: detection.score,
        url: `https://verify.example.com/v1/detection/${detection.id}`,
      },
    });
    // The operator sent it; the api never sends.
    await operator.waitForLog(/webhook delivered/, 30_000);
    expect(w.api!.log).not.toMatch(/webhook delivered/);
  });

  it("a receiver that fails 5 times then recovers gets it; a redirect is not followed; a private address is refused", async () => {
    const f = await settled(flaky.url());
    expect(f[0]).toMatchObject({ status: "DELIVERED", attempt_count: 6 });
    expect(new Set(flaky.received.map((r) => r.id))).toEqual(new Set([`msg_${detection.id}`]));
    const r = await settled(redirecting.url());
    expect(r[0].status).toBe("FAILED");
    expect(r[0].attempts.every((a: { outcome: string }) => a.outcome === "redirect")).toBe(true);
    expect(target.received).toHaveLength(0);
    const p = await settled(refused.url());
    expect(p[0].attempts[0]).toMatchObject({ outcome: "refused" });
    expect(p[0].attempts[0].message).toMatch(/127\.0\.0\.2 is a loopback address/);
    expect(refused.received).toHaveLength(0);
    await operator.waitForLog(
      /webhook attempt failed: The webhook address 127\.0\.0\.2 is a loopback address/,
      30_000,
    );
  });

  it("replay through the api: the operator sends it again with the same webhook-id", async () => {
    const [d] = await deliveries(good.url());
    const r = await w.call("POST", `/v1/webhooks/deliveries/${d.id}/replay`);
    expect(r.status, JSON.stringify(r.body)).toBe(202);
    await good.waitFor((got) => got.length === 2);
    expect(good.received[1]).toMatchObject({ id: good.received[0]!.id, verified: true });
  });

  it("kill -9 of the operator between completion and delivery: the next leader delivers it", async () => {
    const created = await w.call(
      "POST",
      "/v1/detection",
      { source_url: `${w.docBase}/statement.pdf`, doc_type: "bank_statement", region: "GB" },
      OTHER,
    );
    expect(created.status).toBe(202);
    await holding.waitFor((got) => got.length === 1);
    await operator.stop("SIGKILL");
    const next = await w.newOperator("operator-b", env);
    await next.waitForLog(/is the leader/, 60_000);
    await holding.waitFor((got) => got.some((g) => g.answered === 200));
    expect(holding.received.map((r) => r.id)).toEqual([`msg_${created.body.id}`, `msg_${created.body.id}`]);
    expect(holding.received.every((r) => r.verified)).toBe(true);
    const ds = await settled(holding.url(), OTHER);
    expect(ds[0]).toMatchObject({ status: "DELIVERED" });
  });
});
