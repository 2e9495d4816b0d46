import type { Clock, ObjectStore, WebhookSender, WebhookSendResult } from "../core/ports.js";
import type { Logger } from "../core/step-context.js";
import {
  type DeliveryAttempt,
  dropPending,
  endpointOfDelivery,
  listPending,
  listReplays,
  markPending,
  MAX_KEPT_ATTEMPTS,
  queueEvent,
  readDelivery,
  signatureHeaders,
  type WebhookDelivery,
  type WebhookEndpointLookup,
  type WebhookEvent,
  type WebhookMarker,
  writeDelivery,
} from "../core/webhooks.js";
import type { WebhookSettings } from "../core/webhook-settings.js";

/** What the deliverer reports to Prometheus (operator/metrics.ts). */
export interface WebhookDeliveryMetrics {
  webhookAttempt(outcome: string, seconds: number): void;
  webhookFinished(state: "delivered" | "failed"): void;
  webhookCircuitOpened(): void;
}

export interface WebhookDelivererDeps {
  objects: ObjectStore;
  bucket: string;
  sender: WebhookSender;
  endpoints: WebhookEndpointLookup;
  settings: WebhookSettings;
  clock: Clock;
  log: Logger;
  metrics?: WebhookDeliveryMetrics;
  /** The service's public URL (DOCVERIFY_PUBLIC_URL, or standalone's bound address once known). */
  publicUrl?: () => string | undefined;
}

/** The outbox as the reconcilers see it: whether a client wants an event, and queueing it. */
export interface WebhookOutbox {
  /** True when one of the client's endpoints subscribes to `type`. */
  subscribed(clientId: string, type: string): boolean;
  /** Writes the event's deliveries (idempotent) and wakes the deliverer; returns how many. */
  queue(event: WebhookEvent): Promise<number>;
  /** The service's public URL, for the event's `url` (undefined: the path alone). */
  publicUrl(): string | undefined;
}

interface Due {
  marker: WebhookMarker;
  /** When to attempt, ms since the epoch. */
  at: number;
}

interface EndpointState {
  inFlight: number;
  consecutiveFailures: number;
  /** While set and in the future, the circuit is open: nothing is sent to the endpoint. */
  pausedUntil?: number;
  /** After a pause, one trial attempt at a time until one succeeds. */
  halfOpen?: boolean;
}

const MAX_SLEEP_MS = 60_000;

/**
 * The webhook deliverer: sends the outbox's deliveries (core/webhooks.ts) and keeps their log. It runs in
 * the operator of both runtimes (bin/build-operator.ts), so one process sends: the standalone service, or
 * the cluster's elected leader; the API only reads the log and files replay requests.
 *
 * - At least once: a delivery stays pending (with its marker) until an attempt is acknowledged with a
 *   2xx or the schedule is used up; every attempt carries the same `webhook-id` (the event's id) and
 *   body. An attempt cut short by a crash is sent again after the restart, which reads the markers.
 * - The schedule: the first attempt at once, then the configured delays (default 5 s, 5 min, 30 min, 2 h,
 *   5 h, 10 h, 10 h: about 27.6 h). A delivery whose schedule is used up has failed; a replay sends it again.
 * - Per endpoint, at most `endpointConcurrency` attempts in flight; after `circuitFailures` failed attempts
 *   in a row the circuit opens: the endpoint is paused for `circuitPauseMs` (its deliveries wait without
 *   using their schedule), then one trial attempt decides whether it closes again.
 * - Each attempt is signed at send time with the endpoint's current secrets (rotation) and sent to the
 *   URL the delivery was queued for, if the client still has that endpoint.
 */
export function createWebhookDeliverer(deps: WebhookDelivererDeps) {
  const { objects, bucket, sender, settings, clock, log } = deps;
  const due = new Map<string, Due>();
  const endpoints = new Map<string, EndpointState>();
  const inFlight = new Map<string, Promise<void>>();
  let timer: NodeJS.Timeout | undefined;
  let replayTimer: NodeJS.Timeout | undefined;
  let running = false;
  let pumping = false;
  let pumpAgain = false;

  const endpointKey = (m: WebhookMarker) => `${m.clientId}\n${m.endpointId}`;
  const stateOf = (m: WebhookMarker): EndpointState => {
    const k = endpointKey(m);
    let s = endpoints.get(k);
    if (!s) {
      s = { inFlight: 0, consecutiveFailures: 0 };
      endpoints.set(k, s);
    }
    return s;
  };

  function schedule(marker: WebhookMarker, at: number): void {
    const known = due.get(marker.id);
    if (!known || at < known.at) due.set(marker.id, { marker, at });
    wake();
  }

  /** Runs a pump soon (coalesced). */
  function wake(): void {
    if (!running) return;
    if (timer) clearTimeout(timer);
    timer = setTimeout(() => void pump(), 0);
  }

  /** Starts every attempt that is due and allowed, then sleeps until the next one is. */
  async function pump(): Promise<void> {
    if (!running) return;
    if (pumping) {
      pumpAgain = true;
      return;
    }
    pumping = true;
    try {
      do {
        pumpAgain = false;
        const now = clock.now().getTime();
        let next = Number.POSITIVE_INFINITY;
        const ordered = [...due.values()].sort((a, b) => a.at - b.at);
        for (const d of ordered) {
          if (inFlight.size >= settings.totalConcurrency) break;
          if (inFlight.has(d.marker.id)) continue;
          const ep = stateOf(d.marker);
          let at = d.at;
          if (ep.pausedUntil !== undefined && ep.pausedUntil > now) at = Math.max(at, ep.pausedUntil);
          if (at > now) {
            next = Math.min(next, at);
            continue;
          }
          const limit = ep.halfOpen ? 1 : settings.endpointConcurrency;
          if (ep.inFlight >= limit) continue; // woken when one of them ends
          due.delete(d.marker.id);
          ep.inFlight++;
          const p = attempt(d.marker)
            .catch((err: unknown) => {
              // The object store failed (a transient error): try again after the first delay.
              log.error({ err, delivery: d.marker.id }, "a webhook attempt could not be recorded; retrying");
              schedule(d.marker, clock.now().getTime() + (settings.retryDelaysMs[0] ?? 5000));
            })
            .finally(() => {
              ep.inFlight--;
              inFlight.delete(d.marker.id);
              wake();
            });
          inFlight.set(d.marker.id, p);
        }
        if (running && next !== Number.POSITIVE_INFINITY) {
          if (timer) clearTimeout(timer);
          timer = setTimeout(
            () => void pump(),
            Math.min(MAX_SLEEP_MS, Math.max(0, next - clock.now().getTime())),
          );
        }
      } while (pumpAgain && running);
    } finally {
      pumping = false;
    }
  }

  /** One attempt of one delivery, and its record. */
  async function attempt(marker: WebhookMarker): Promise<void> {
    const read = await readDelivery(objects, bucket, marker.clientId, marker.endpointId, marker.id);
    if (read.kind === "missing") {
      // A marker whose delivery was never written (a crash while queueing): the reconciler queues the
      // event again from the status it left pending, with a new marker.
      await dropPending(objects, bucket, marker);
      return;
    }
    if (read.kind === "invalid") {
      log.error(
        { delivery: marker.id, key: read.key, problem: read.reason },
        "a webhook delivery record is damaged; it is not sent",
      );
      await dropPending(objects, bucket, marker);
      return;
    }
    const d = read.value;
    if (d.state !== "pending") {
      await dropPending(objects, bucket, marker);
      return;
    }
    const now = clock.now();
    const nextAt = d.nextAttemptAt ? Date.parse(d.nextAttemptAt) : now.getTime();
    if (nextAt > now.getTime()) {
      schedule(marker, nextAt);
      return;
    }
    const trigger: DeliveryAttempt["trigger"] = d.replayPending ? "replay" : "scheduled";
    const endpoint = deps.endpoints(d.clientId).find((e) => e.id === d.endpointId);
    const dlog = log.child({
      delivery: d.id,
      webhookId: d.eventId,
      endpoint: d.endpointId,
      client: d.clientId,
    });
    let result:
      | WebhookSendResult
      | { outcome: "endpoint_removed"; message: string; durationMs: number; status?: number };
    if (!endpoint) {
      result = {
        outcome: "endpoint_removed",
        message: "The client no longer has this endpoint in the clients file; the delivery is not sent.",
        durationMs: 0,
      };
    } else {
      const headers = signatureHeaders(endpoint, d.eventId, now, d.body);
      result = await sender.send({ url: d.url, headers, body: d.body });
    }
    deps.metrics?.webhookAttempt(result.outcome, result.durationMs / 1000);
    const ep = stateOf(marker);
    const entry: DeliveryAttempt = {
      at: now.toISOString(),
      outcome: result.outcome,
      ...(result.status !== undefined ? { status: result.status } : {}),
      durationMs: result.durationMs,
      message: result.message,
      trigger,
    };
    const next: WebhookDelivery = {
      ...d,
      attemptCount: d.attemptCount + 1,
      scheduledAttempts: d.scheduledAttempts + 1,
      attempts: [...d.attempts, entry].slice(-MAX_KEPT_ATTEMPTS),
      replayPending: false,
    };
    if (result.outcome === "delivered") {
      ep.consecutiveFailures = 0;
      ep.halfOpen = false;
      ep.pausedUntil = undefined;
      next.state = "delivered";
      next.deliveredAt = clock.now().toISOString();
      delete next.nextAttemptAt;
      await writeDelivery(objects, bucket, next);
      await dropPending(objects, bucket, marker);
      deps.metrics?.webhookFinished("delivered");
      dlog.info(
        { status: result.status, attempt: next.attemptCount, ms: result.durationMs },
        "webhook delivered",
      );
      return;
    }
    const refused = result.outcome === "refused" || result.outcome === "redirect";
    dlog[refused ? "error" : "warn"](
      { outcome: result.outcome, status: result.status, attempt: next.attemptCount, url: d.url },
      `webhook attempt failed: ${result.message}`,
    );
    if (result.outcome !== "endpoint_removed") {
      ep.consecutiveFailures++;
      if (ep.halfOpen || ep.consecutiveFailures >= settings.circuitFailures) {
        ep.pausedUntil = clock.now().getTime() + settings.circuitPauseMs;
        ep.halfOpen = true;
        deps.metrics?.webhookCircuitOpened();
        dlog.warn(
          { failures: ep.consecutiveFailures, pauseMs: settings.circuitPauseMs },
          "webhook endpoint paused after failed attempts in a row (circuit open)",
        );
      }
    }
    const delay = settings.retryDelaysMs[next.scheduledAttempts - 1];
    if (delay === undefined || result.outcome === "endpoint_removed") {
      next.state = "failed";
      delete next.nextAttemptAt;
      await writeDelivery(objects, bucket, next);
      await dropPending(objects, bucket, marker);
      deps.metrics?.webhookFinished("failed");
      dlog.error(
        { attempts: next.attemptCount },
        "webhook delivery failed: no attempts left (a replay sends it again)",
      );
      return;
    }
    const at = clock.now().getTime() + delay;
    next.nextAttemptAt = new Date(at).toISOString();
    await writeDelivery(objects, bucket, next);
    schedule(marker, at);
  }

  /** Handles the replay requests the API filed: each delivery gets a new run of its schedule. */
  async function pollReplays(): Promise<void> {
    for await (const { key, read } of listReplays(objects, bucket)) {
      if (!running) return;
      if (read.kind === "ok") {
        const m = read.value;
        if (!inFlight.has(m.id)) {
          const got = await readDelivery(objects, bucket, m.clientId, m.endpointId, m.id);
          if (got.kind === "ok") {
            const now = clock.now().toISOString();
            await writeDelivery(objects, bucket, {
              ...got.value,
              state: "pending",
              scheduledAttempts: 0,
              replays: got.value.replays + 1,
              replayPending: true,
              nextAttemptAt: now,
            });
            await markPending(objects, bucket, m);
            // A replay is the client's request: it is not held back by an open circuit.
            const ep = stateOf(m);
            ep.pausedUntil = undefined;
            due.delete(m.id);
            schedule(m, clock.now().getTime());
            log.info({ delivery: m.id, client: m.clientId, endpoint: m.endpointId }, "webhook replay queued");
          }
        } else {
          continue; // in flight now: handled on a later poll
        }
      }
      await objects.delete(bucket, key);
    }
  }

  function loopReplays(): void {
    if (!running) return;
    replayTimer = setTimeout(() => {
      pollReplays()
        .catch((err: unknown) => log.error({ err }, "reading webhook replay requests failed; trying again"))
        .finally(loopReplays);
    }, settings.replayPollMs);
  }

  const outbox: WebhookOutbox = {
    publicUrl: () => deps.publicUrl?.(),
    subscribed: (clientId, type) =>
      deps.endpoints(clientId).some((e) => (e.events as readonly string[]).includes(type)),
    async queue(event) {
      const targets = deps
        .endpoints(event.clientId)
        .filter((e) => (e.events as readonly string[]).includes(event.type));
      const queued = await queueEvent(objects, bucket, event, targets, clock.now());
      for (const d of queued)
        if (d.state === "pending")
          schedule({ clientId: d.clientId, endpointId: d.endpointId, id: d.id }, clock.now().getTime());
      return queued.length;
    },
  };

  return {
    outbox,
    /** Deliveries waiting for an attempt (the backlog), in flight included. */
    backlog: () => due.size + inFlight.size,
    async start(): Promise<void> {
      running = true;
      let n = 0;
      for await (const read of listPending(objects, bucket)) {
        if (read.kind !== "ok") {
          log.error({ key: read.key }, "a pending webhook marker is damaged; removing it");
          await objects.delete(bucket, read.key);
          continue;
        }
        if (endpointOfDelivery(read.value.id) !== read.value.endpointId) continue;
        schedule(read.value, clock.now().getTime());
        n++;
      }
      if (n > 0) log.info({ pending: n }, "webhook deliveries pending from before the start");
      loopReplays();
      wake();
    },
    async stop(): Promise<void> {
      running = false;
      if (timer) clearTimeout(timer);
      if (replayTimer) clearTimeout(replayTimer);
      await Promise.allSettled([...inFlight.values()]);
      await sender.close();
    },
  };
}

export type WebhookDeliverer = ReturnType<typeof createWebhookDeliverer>;
