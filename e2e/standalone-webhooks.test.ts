import { mkdtemp, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeDocument } from "../fixtures/documents.js";
import { newSecret, startReceiver } from "../operator/testdata/webhook-receiver.js";
import { CLIENTS, ENTRY, removeDataDir, runNode, Service, startFileServer, until } from "./harness.js";

/**
 * Webhooks on the real standalone service (issue 25): real receivers on loopback verify every delivery
 * with the `standardwebhooks` library. The service runs without the private-address override: only
 * 127.0.0.1 is allowed (DOCVERIFY_ALLOWED_PRIVATE_ADDRESSES), so an endpoint on 127.0.0.2 is refused.
 */
const secret = newSecret();
const otherSecret = newSecret();
let svc: Service;
let files: Awaited<ReturnType<typeof startFileServer>>;
// biome-ignore lint/suspicious/noExplicitAny: JSON answers of many shapes
type Json = any;
type Receiver = Awaited<ReturnType<typeof startReceiver>>;
let good: Receiver;
let flaky: Receiver;
let redirecting: Receiver;
let target: Receiver;
let refused: Receiver;
let holding: Receiver;

beforeAll(async () => {
  files = await startFileServer({
    "/statement.pdf": {
      body: await makeDocument({ seed: 11, docType: "bank_statement", region: "GB", pages: 1 }),
    },
  });
  good = await startReceiver({ secret });
  flaky = await startReceiver({ secret, behaviour: (n) => (n < 5 ? 500 : 200) });
  target = await startReceiver({ secret });
  redirecting = await startReceiver({ secret, behaviour: () => ({ redirect: target.url("/moved") }) });
  refused = await startReceiver({ secret, host: "127.0.0.2" });
  holding = await startReceiver({ secret: otherSecret, behaviour: (n) => (n === 0 ? "hold" : 200) });
  const events = ["detection.completed", "detection.failed"];
  const clients = [
    {
      ...CLIENTS.full,
      webhooks: [
        { url: good.url(), events, secret },
        { url: flaky.url(), events, secret },
        { url: redirecting.url(), events, secret },
        { url: refused.url(), events, secret },
      ],
    },
    { ...CLIENTS.other, webhooks: [{ url: holding.url(), events, secret: otherSecret }] },
  ];
  const dataDir = await mkdtemp(path.join(os.tmpdir(), "docverify-e2e-webhooks-"));
  const clientsFile = `${dataDir}-clients.json`;
  await writeFile(clientsFile, JSON.stringify({ clients }));
  const ports = [files, good, flaky, target, redirecting, refused, holding].map((s) => s.port).join(",");
  svc = new Service(dataDir, clientsFile, {
    DOCVERIFY_ALLOWED_PRIVATE_ADDRESSES: "127.0.0.1",
    DOCVERIFY_ALLOWED_SOURCE_PORTS: ports,
    DOCVERIFY_WEBHOOK_RETRY_SECONDS: "0.2,0.2,0.2,0.2,0.2,0.2,0.2",
    DOCVERIFY_WEBHOOK_TIMEOUT_SECONDS: "120",
    DOCVERIFY_WEBHOOK_POLL_SECONDS: "0.2",
    DOCVERIFY_LOG_LEVEL: "info",
  });
  await svc.start();
});
afterAll(async () => {
  await svc?.stop();
  if (svc) await removeDataDir(svc.dataDir);
  for (const s of [files, good, flaky, target, redirecting, refused, holding]) await s?.close();
});

async function endpointId(url: string, client = CLIENTS.full): Promise<string> {
  const r = await svc.call("GET", "/v1/webhooks", { client });
  expect(r.status).toBe(200);
  const ep = (r.body.items as { id: string; url: string }[]).find((e) => e.url === url);
  if (!ep) throw new Error(`no endpoint ${url} in ${JSON.stringify(r.body)}`);
  return ep.id;
}

async function deliveries(url: string, client = CLIENTS.full): Promise<Json[]> {
  const r = await svc.call("GET", `/v1/webhooks/deliveries?endpoint_id=${await endpointId(url, client)}`, {
    client,
  });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body.items;
}

const settled = (ds: Json[]) => ds.length > 0 && ds[0].status !== "PENDING";

describe("webhooks, standalone", () => {
  let detection: Json;

  it("GET /v1/webhooks lists the caller's endpoints without their secrets", async () => {
    const r = await svc.call("GET", "/v1/webhooks", { client: CLIENTS.full });
    expect(r.status).toBe(200);
    expect(r.body.items).toHaveLength(4);
    expect(JSON.stringify(r.body)).not.toContain("whsec_");
    expect(r.body.items[0]).toEqual({
      id: expect.stringMatching(/^ep_[0-9a-f]{12}$/),
      url: good.url(),
      events: ["detection.completed", "detection.failed"],
      secret_rotation: false,
    });
    const other = await svc.call("GET", "/v1/webhooks", { client: CLIENTS.other });
    expect(other.body.items.map((e: { url: string }) => e.url)).toEqual([holding.url()]);
  });

  it("a completed detection is delivered once, with a signature the standardwebhooks verifier accepts", async () => {
    const created = await svc.create(CLIENTS.full, {
      source_url: files.url("/statement.pdf"),
      doc_type: "bank_statement",
      region: "GB",
    });
    expect(created.status, JSON.stringify(created.body)).toBe(202);
    detection = await svc.waitTerminal(CLIENTS.full, created.body.id);
    expect(detection.status, JSON.stringify(detection)).toBe("COMPLETED");
    const ds = await until("the good endpoint's delivery", () => deliveries(good.url()), settled);
    expect(ds).toHaveLength(1);
    expect(ds[0]).toMatchObject({ status: "DELIVERED", attempt_count: 1, webhook_id: `msg_${detection.id}` });
    expect(good.received).toHaveLength(1);
    const got = good.received[0]!;
    expect(got.verified).toBe(true);
    expect(got.id).toBe(`msg_${detection.id}`);
    expect(JSON.parse(got.body)).toEqual({
      type: "detection.completed",
      timestamp: detection.completed_at,
      data: {
        id: detection.id,
        status: "COMPLETED",
        score: detection.score,
        url: `${svc.url}/v1/detection/${detection.id}`,
      },
    });
  });

  it("a receiver that fails 5 times then recovers gets the event (same webhook-id on every attempt)", async () => {
    const ds = await until("the flaky endpoint's delivery", () => deliveries(flaky.url()), settled);
    expect(ds[0]).toMatchObject({ status: "DELIVERED", attempt_count: 6 });
    expect(ds[0].attempts.map((a: { http_status: number }) => a.http_status)).toEqual([
      500, 500, 500, 500, 500, 200,
    ]);
    expect(new Set(flaky.received.map((r) => r.id))).toEqual(new Set([`msg_${detection.id}`]));
    expect(flaky.received.every((r) => r.verified)).toBe(true);
  });

  it("a redirecting receiver is not followed: the attempts fail and are logged", async () => {
    const ds = await until(
      "the redirecting endpoint's delivery",
      () => deliveries(redirecting.url()),
      settled,
    );
    expect(ds[0].status).toBe("FAILED");
    expect(ds[0].attempts.every((a: { outcome: string }) => a.outcome === "redirect")).toBe(true);
    expect(ds[0].attempts[0].message).toMatch(/redirects are not followed/);
    expect(target.received).toHaveLength(0);
  });

  it("a receiver on a private address (without the override) is refused and logged", async () => {
    const ds = await until("the refused endpoint's delivery", () => deliveries(refused.url()), settled);
    expect(ds[0].status).toBe("FAILED");
    expect(ds[0].attempts[0]).toMatchObject({ outcome: "refused", http_status: null });
    expect(ds[0].attempts[0].message).toMatch(/127\.0\.0\.2 is a loopback address/);
    expect(refused.received).toHaveLength(0);
    expect(svc.log).toMatch(/webhook attempt failed: The webhook address 127\.0\.0\.2 is a loopback address/);
  });

  it("replay from the delivery log sends the event again with the same webhook-id", async () => {
    const [d] = await deliveries(good.url());
    const r = await svc.call("POST", `/v1/webhooks/deliveries/${d.id}/replay`, { client: CLIENTS.full });
    expect(r.status, JSON.stringify(r.body)).toBe(202);
    await good.waitFor((got) => got.length === 2);
    expect(good.received[1]).toMatchObject({
      id: good.received[0]!.id,
      body: good.received[0]!.body,
      verified: true,
    });
    const after = await until(
      "the replay in the log",
      () => deliveries(good.url()),
      (ds) => ds[0]?.replays === 1 && ds[0]?.status === "DELIVERED",
    );
    expect(after[0].attempts.map((a: { trigger: string }) => a.trigger)).toEqual(["scheduled", "replay"]);
    // Another client's delivery id is not found; a malformed one is 422.
    expect(
      (await svc.call("POST", `/v1/webhooks/deliveries/${d.id}/replay`, { client: CLIENTS.other })).status,
    ).toBe(404);
    expect(
      (await svc.call("POST", "/v1/webhooks/deliveries/nope/replay", { client: CLIENTS.full })).status,
    ).toBe(422);
  });

  it("kill -9 between completion and delivery: the event is delivered after the restart", async () => {
    const created = await svc.create(CLIENTS.other, {
      source_url: files.url("/statement.pdf"),
      doc_type: "bank_statement",
      region: "GB",
    });
    expect(created.status).toBe(202);
    // The receiver holds the first attempt unanswered; the service dies while it waits.
    await holding.waitFor((got) => got.length === 1);
    await svc.stop("SIGKILL");
    await svc.start();
    await holding.waitFor((got) => got.some((g) => g.answered === 200));
    expect(holding.received.map((r) => r.id)).toEqual([`msg_${created.body.id}`, `msg_${created.body.id}`]);
    expect(holding.received.every((r) => r.verified)).toBe(true);
    const ds = await until(
      "the delivery after the restart",
      () => deliveries(holding.url(), CLIENTS.other),
      settled,
    );
    expect(ds[0]).toMatchObject({ status: "DELIVERED", webhook_id: `msg_${created.body.id}` });
  });

  it("docverify webhooks test sends a signed test event, and says why one is refused", async () => {
    const cliSecret = newSecret();
    const rx = await startReceiver({ secret: cliSecret });
    try {
      const env = {
        DOCVERIFY_ALLOWED_PRIVATE_ADDRESSES: "127.0.0.1",
        DOCVERIFY_ALLOWED_SOURCE_PORTS: String(rx.port),
      };
      const sent = await runNode(
        [ENTRY, "webhooks", "test", "--url", rx.url("/cli"), "--secret", cliSecret],
        { env },
      );
      expect(sent.code, sent.stderr + sent.stdout).toBe(0);
      expect(sent.stdout).toMatch(/^ok {3}http:\/\/127\.0\.0\.1:\d+\/cli/);
      expect(rx.received).toHaveLength(1);
      expect(rx.received[0]!.verified).toBe(true);
      expect(JSON.parse(rx.received[0]!.body).type).toBe("webhook.test");
      const url = `http://127.0.0.2:${rx.port}/cli`;
      const refusedRun = await runNode([ENTRY, "webhooks", "test", "--url", url, "--secret", cliSecret], {
        env,
      });
      expect(refusedRun.code).toBe(1);
      expect(refusedRun.stdout).toMatch(/FAIL .*127\.0\.0\.2 is a loopback address/);
      expect(rx.received).toHaveLength(1);
    } finally {
      await rx.close();
    }
  });
});
