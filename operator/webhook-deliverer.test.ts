import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import pino from "pino";
import { Webhook } from "standardwebhooks";
import { afterEach, describe, expect, it } from "vitest";
import { systemClock } from "../core/ports.js";
import type { WebhookSettings } from "../core/webhook-settings.js";
import {
  detectionEvent,
  endpointsOf,
  listDeliveries,
  requestReplay,
  type WebhookEndpointConfig,
} from "../core/webhooks.js";
import { createWebhookSender } from "../platform/http/webhook-sender.js";
import { createLocalObjectStore } from "../platform/local/object-store.js";
import { newSecret, startReceiver } from "./testdata/webhook-receiver.js";
import { createWebhookDeliverer } from "./webhook-deliverer.js";

const BUCKET = "docverify";
const CLIENT = "acme-bank";
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const SETTINGS: WebhookSettings = {
  retryDelaysMs: [20, 20, 20, 20, 20, 20, 20, 20],
  timeoutMs: 5000,
  maxResponseBytes: 1024,
  endpointConcurrency: 2,
  totalConcurrency: 8,
  circuitFailures: 10,
  circuitPauseMs: 50,
  replayPollMs: 50,
};

/** A deliverer over a real local object store and the real sender, its log lines kept. */
async function world(
  endpoints: WebhookEndpointConfig[],
  opts: {
    settings?: Partial<WebhookSettings>;
    allowPrivate?: boolean;
    allowAddresses?: string[];
    ports: number[];
  },
) {
  const dir = await mkdtemp(path.join(os.tmpdir(), "docverify-webhooks-"));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  const objects = createLocalObjectStore(dir);
  await objects.ensureBucket(BUCKET);
  const lines: Record<string, unknown>[] = [];
  const log = pino({ level: "info" }, { write: (s: string) => lines.push(JSON.parse(s)) });
  const settings = { ...SETTINGS, ...opts.settings };
  const counts = { circuits: 0, attempts: [] as string[] };
  const make = () =>
    createWebhookDeliverer({
      objects,
      bucket: BUCKET,
      sender: createWebhookSender({
        allowPrivate: opts.allowPrivate ?? true,
        allowAddresses: opts.allowAddresses ?? [],
        allowedPorts: opts.ports.map((p) => [p, p] as const),
        timeoutMs: settings.timeoutMs,
        maxResponseBytes: settings.maxResponseBytes,
      }),
      endpoints: (id) => (id === CLIENT ? endpointsOf(id, endpoints) : []),
      settings,
      clock: systemClock,
      log,
      metrics: {
        webhookAttempt: (o) => counts.attempts.push(o),
        webhookFinished: () => undefined,
        webhookCircuitOpened: () => counts.circuits++,
      },
      publicUrl: () => "https://verify.example.com",
    });
  const deliverer = make();
  await deliverer.start();
  cleanups.push(() => deliverer.stop());
  return { objects, deliverer, lines, counts, make };
}

const event = (n: number) =>
  detectionEvent(
    { name: `det-01jd5x9q3m8w2v7k4c6b0n1r${String(n).padStart(2, "0")}`, clientId: CLIENT },
    { phase: "Completed", completedAt: new Date(Date.UTC(2026, 0, 1, 0, 0, n)).toISOString(), score: 12 },
    "https://verify.example.com",
    new Date(),
  );

describe("the webhook deliverer (real receiver on loopback, real object store)", () => {
  it("delivers an event once, signed so the standardwebhooks verifier accepts it, with the small body", async () => {
    const secret = newSecret();
    const rx = await startReceiver({ secret });
    cleanups.push(rx.close);
    const w = await world([{ url: rx.url(), events: ["detection.completed"], secret }], { ports: [rx.port] });
    expect(await w.deliverer.outbox.queue(event(1))).toBe(1);
    await rx.waitFor((got) => got.length === 1);
    const [got] = rx.received;
    expect(got?.verified).toBe(true);
    expect(got?.id).toBe(`msg_${event(1).data.id}`);
    expect(JSON.parse(got!.body)).toEqual({
      type: "detection.completed",
      timestamp: "2026-01-01T00:00:01.000Z",
      data: {
        id: event(1).data.id,
        status: "COMPLETED",
        score: 12,
        url: `https://verify.example.com/v1/detection/${event(1).data.id}`,
      },
    });
    // Queued again (a reconcile pass repeated after a crash): the same delivery, not sent twice.
    await w.deliverer.outbox.queue(event(1));
    const ep = endpointsOf(CLIENT, [{ url: rx.url(), events: ["detection.completed"], secret }])[0]!;
    const until = async () => {
      for (;;) {
        const page = await listDeliveries(w.objects, BUCKET, CLIENT, ep.id, { limit: 10 });
        if (page.items[0]?.state === "delivered") return page;
        await new Promise((r) => setTimeout(r, 20));
      }
    };
    const page = await until();
    expect(page.items).toHaveLength(1);
    expect(page.items[0]).toMatchObject({ state: "delivered", attemptCount: 1 });
    await w.deliverer.stop();
    expect(rx.received).toHaveLength(1);
  });

  it("signs with both secrets while one is rotated out: a receiver holding either verifies", async () => {
    const oldSecret = newSecret();
    const newer = newSecret();
    const rx = await startReceiver({ secret: oldSecret });
    cleanups.push(rx.close);
    await world(
      [{ url: rx.url(), events: ["detection.completed"], secret: newer, previous_secret: oldSecret }],
      {
        ports: [rx.port],
      },
    ).then((w) => w.deliverer.outbox.queue(event(2)));
    await rx.waitFor((got) => got.length === 1);
    const got = rx.received[0]!;
    expect(got.verified).toBe(true);
    expect(got.signature.split(" ")).toHaveLength(2);
    expect(() =>
      new Webhook(newer).verify(got.body, {
        "webhook-id": got.id,
        "webhook-timestamp": got.timestamp,
        "webhook-signature": got.signature,
      }),
    ).not.toThrow();
  });

  it("a receiver that fails 5 times then recovers gets the event, with one webhook-id on every attempt", async () => {
    const secret = newSecret();
    const rx = await startReceiver({ secret, behaviour: (n) => (n < 5 ? 503 : 200) });
    cleanups.push(rx.close);
    const w = await world([{ url: rx.url(), events: ["detection.completed"], secret }], { ports: [rx.port] });
    await w.deliverer.outbox.queue(event(3));
    await rx.waitFor((got) => got.some((g) => g.answered === 200));
    expect(rx.received).toHaveLength(6);
    expect(new Set(rx.received.map((r) => r.id))).toEqual(new Set([`msg_${event(3).data.id}`]));
    expect(rx.received.every((r) => r.verified)).toBe(true);
    expect(rx.received.map((r) => r.answered)).toEqual([503, 503, 503, 503, 503, 200]);
    expect(w.counts.attempts.slice(0, 5)).toEqual(Array(5).fill("http_error"));
  });

  it("keeps at most endpointConcurrency attempts in flight per endpoint", async () => {
    const secret = newSecret();
    let most = 0;
    const rx = await startReceiver({
      secret,
      behaviour: (_n, req) => {
        // Requests received and not yet answered, this one included.
        const open = rx.received.filter((r) => r.answered === undefined && r !== req).length + 1;
        most = Math.max(most, open);
        return { status: 200, delayMs: 500 };
      },
    });
    cleanups.push(rx.close);
    const w = await world([{ url: rx.url(), events: ["detection.completed"], secret }], {
      ports: [rx.port],
      settings: { endpointConcurrency: 2 },
    });
    for (let i = 10; i < 18; i++) await w.deliverer.outbox.queue(event(i));
    await rx.waitFor((got) => got.filter((g) => g.answered === 200).length === 8);
    expect(most).toBe(2);
  });

  it("opens the circuit after failures in a row, pauses, then a trial attempt delivers", async () => {
    const secret = newSecret();
    const rx = await startReceiver({ secret, behaviour: (n) => (n < 3 ? 500 : 200) });
    cleanups.push(rx.close);
    const w = await world([{ url: rx.url(), events: ["detection.completed"], secret }], {
      ports: [rx.port],
      settings: { circuitFailures: 3, circuitPauseMs: 100 },
    });
    await w.deliverer.outbox.queue(event(4));
    await rx.waitFor((got) => got.some((g) => g.answered === 200));
    expect(w.counts.circuits).toBe(1);
    expect(w.lines.some((l) => String(l.msg).includes("circuit open"))).toBe(true);
  });

  it("does not follow a redirect: the attempt fails and is logged, the target is never asked", async () => {
    const secret = newSecret();
    const target = await startReceiver({ secret });
    cleanups.push(target.close);
    const rx = await startReceiver({ secret, behaviour: () => ({ redirect: target.url("/elsewhere") }) });
    cleanups.push(rx.close);
    const w = await world([{ url: rx.url(), events: ["detection.completed"], secret }], {
      ports: [rx.port, target.port],
      settings: { retryDelaysMs: [10, 10] },
    });
    await w.deliverer.outbox.queue(event(5));
    await rx.waitFor((got) => got.length === 3);
    const ep = endpointsOf(CLIENT, [{ url: rx.url(), events: ["detection.completed"], secret }])[0]!;
    for (;;) {
      const page = await listDeliveries(w.objects, BUCKET, CLIENT, ep.id, { limit: 1 });
      if (page.items[0]?.state === "failed") {
        expect(page.items[0].attempts.map((a) => a.outcome)).toEqual(["redirect", "redirect", "redirect"]);
        expect(page.items[0].attempts[0]?.message).toMatch(/redirects are not followed/);
        break;
      }
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(target.received).toHaveLength(0);
    expect(w.lines.some((l) => l.outcome === "redirect" && l.level === 50)).toBe(true);
  });

  it("refuses a private address without the override (an allowed loopback address stays reachable)", async () => {
    const secret = newSecret();
    const allowed = await startReceiver({ secret });
    cleanups.push(allowed.close);
    const refused = await startReceiver({ secret, host: "127.0.0.2" });
    cleanups.push(refused.close);
    const w = await world(
      [
        { url: allowed.url(), events: ["detection.completed"], secret },
        { url: refused.url(), events: ["detection.completed"], secret },
      ],
      {
        ports: [allowed.port, refused.port],
        allowPrivate: false,
        allowAddresses: ["127.0.0.1"],
        settings: { retryDelaysMs: [] },
      },
    );
    await w.deliverer.outbox.queue(event(6));
    await allowed.waitFor((got) => got.length === 1);
    const ep = endpointsOf(CLIENT, [{ url: refused.url(), events: ["detection.completed"], secret }])[0]!;
    for (;;) {
      const page = await listDeliveries(w.objects, BUCKET, CLIENT, ep.id, { limit: 1 });
      if (page.items[0]?.state === "failed") {
        expect(page.items[0].attempts[0]).toMatchObject({ outcome: "refused" });
        expect(page.items[0].attempts[0]?.message).toMatch(/127\.0\.0\.2 is a loopback address/);
        break;
      }
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(refused.received).toHaveLength(0);
    expect(w.lines.some((l) => l.outcome === "refused" && String(l.msg).includes("loopback"))).toBe(true);
  });

  it("a delivery cut short by a crash is sent again by the next deliverer, with the same webhook-id", async () => {
    const secret = newSecret();
    const rx = await startReceiver({ secret, behaviour: (n) => (n === 0 ? "hold" : 200) });
    cleanups.push(rx.close);
    const w = await world([{ url: rx.url(), events: ["detection.completed"], secret }], { ports: [rx.port] });
    await w.deliverer.outbox.queue(event(7));
    await rx.waitFor((got) => got.length === 1);
    // The first deliverer never hears back (its process would be gone); a new one starts on the same store.
    const second = w.make();
    await second.start();
    cleanups.push(() => second.stop());
    await rx.waitFor((got) => got.some((g) => g.answered === 200));
    expect(rx.received.map((r) => r.id)).toEqual([`msg_${event(7).data.id}`, `msg_${event(7).data.id}`]);
  });

  it("replays a delivered delivery from the log: same webhook-id and body, a replay attempt logged", async () => {
    const secret = newSecret();
    const rx = await startReceiver({ secret });
    cleanups.push(rx.close);
    const w = await world([{ url: rx.url(), events: ["detection.completed"], secret }], { ports: [rx.port] });
    await w.deliverer.outbox.queue(event(8));
    await rx.waitFor((got) => got.length === 1);
    const ep = endpointsOf(CLIENT, [{ url: rx.url(), events: ["detection.completed"], secret }])[0]!;
    let id = "";
    for (;;) {
      const page = await listDeliveries(w.objects, BUCKET, CLIENT, ep.id, { limit: 1 });
      if (page.items[0]?.state === "delivered") {
        id = page.items[0].id;
        break;
      }
      await new Promise((r) => setTimeout(r, 20));
    }
    await requestReplay(w.objects, BUCKET, { clientId: CLIENT, endpointId: ep.id, id });
    await rx.waitFor((got) => got.length === 2);
    expect(rx.received[1]).toMatchObject({
      id: rx.received[0]!.id,
      body: rx.received[0]!.body,
      verified: true,
    });
    for (;;) {
      const page = await listDeliveries(w.objects, BUCKET, CLIENT, ep.id, { limit: 1 });
      const d = page.items[0]!;
      if (d.state === "delivered" && d.replays === 1 && d.attemptCount === 2) {
        expect(d.attempts.map((a) => a.trigger)).toEqual(["scheduled", "replay"]);
        break;
      }
      await new Promise((r) => setTimeout(r, 20));
    }
  });
});
