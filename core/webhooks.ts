import { createHash } from "node:crypto";
import { Webhook } from "standardwebhooks";
import { z } from "zod";
import { archiveClientSegment } from "./archive.js";
import type { ObjectStore } from "./ports.js";
import { defineStored, readStored, readStoredAt, type StoredRead, writeStored } from "./stored.js";

/**
 * Webhooks (issue 25): what a client registers, what an event says, and the outbox and delivery log in the
 * object store, the same in both runtimes (the local directory standalone, S3 in the cluster).
 *
 * - A client's endpoints are in the clients file (`webhooks` on its entry). An endpoint's id is a digest of
 *   the client and the URL, so it is stable across reloads and changes when the URL does.
 * - An event is written to the outbox by the reconciler that made the detection or job terminal: the
 *   terminal status write carries `webhooks.state: "pending"` (the outbox entry, in the same write), and the
 *   next pass writes one delivery per subscribed endpoint here and marks the status `queued`. A crash
 *   anywhere between leaves a pending status (queued again, idempotently) or a pending delivery (sent).
 * - Deliveries are sent by the operator's webhook deliverer only (operator/webhook-deliverer.ts): one
 *   process in standalone, the elected leader in the cluster, so an event is never sent twice at once.
 *   The API reads the delivery log and files replay requests, which the deliverer picks up.
 *
 * Object keys (bucket = the service's bucket; `<c>` = the client's archive segment):
 *   webhooks/deliveries/<c>/<endpoint>/<delivery>.json   the delivery and its attempts (the log)
 *   webhooks/pending/<c>/<endpoint>/<delivery>           an undelivered delivery (the outbox)
 *   webhooks/replays/<c>/<endpoint>/<delivery>           a replay asked for by the client
 */

export const WEBHOOK_EVENT_TYPES = [
  "detection.completed",
  "detection.failed",
  "job.completed",
  "job.failed",
] as const;
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];
/** The event `docverify webhooks test` sends; never subscribed to, always sent to the endpoint tested. */
export const TEST_EVENT_TYPE = "webhook.test";

/** `whsec_` and the base64 of at least 24 random bytes (the Standard Webhooks secret format). */
export const WEBHOOK_SECRET_RE = /^whsec_[A-Za-z0-9+/]{32,}={0,2}$/;
const Secret = z
  .string()
  .regex(WEBHOOK_SECRET_RE, "a webhook secret is whsec_ followed by the base64 of at least 24 random bytes");

/** One endpoint of a client, as the clients file has it. */
export const WebhookEndpointConfig = z.object({
  url: z
    .string()
    .url()
    .refine((u) => /^https?:\/\//i.test(u), "a webhook URL is http or https")
    .refine((u) => {
      const p = new URL(u);
      return p.username === "" && p.password === "";
    }, "a webhook URL carries no user name or password"),
  events: z.array(z.enum(WEBHOOK_EVENT_TYPES)).min(1),
  /** Signs every delivery. */
  secret: Secret,
  /**
   * The secret being rotated out: deliveries are signed with both while it is set, so a receiver that
   * still verifies with it keeps accepting them (Standard Webhooks: several signatures in one header).
   */
  previous_secret: Secret.optional(),
});
export type WebhookEndpointConfig = z.infer<typeof WebhookEndpointConfig>;

export const WebhookEndpoints = z
  .array(WebhookEndpointConfig)
  .default([])
  .refine((list) => new Set(list.map((e) => e.url)).size === list.length, {
    message: "each webhook URL of a client is listed once",
  });

/** An endpoint's id: `ep_` + 12 hex digits of sha256(client, url). */
export const ENDPOINT_ID_RE = /^ep_[0-9a-f]{12}$/;
export const endpointId = (clientId: string, url: string): string =>
  `ep_${createHash("sha256").update(`${clientId}\n${url}`).digest("hex").slice(0, 12)}`;

/** A client's endpoint with its id. */
export interface WebhookEndpoint extends WebhookEndpointConfig {
  id: string;
  clientId: string;
}

/** Where the deliverer and the API learn a client's endpoints (the clients file, as reloaded). */
export type WebhookEndpointLookup = (clientId: string) => readonly WebhookEndpoint[];

export const endpointsOf = (
  clientId: string,
  configs: readonly WebhookEndpointConfig[] | undefined,
): WebhookEndpoint[] => (configs ?? []).map((c) => ({ ...c, id: endpointId(clientId, c.url), clientId }));

/**
 * Signs one attempt with every active secret (the Standard Webhooks `webhook-signature` header: the
 * signatures separated by spaces), using the standardwebhooks library.
 */
export function signatureHeaders(
  endpoint: Pick<WebhookEndpointConfig, "secret" | "previous_secret">,
  messageId: string,
  at: Date,
  body: string,
): Record<string, string> {
  const secrets = [endpoint.secret, ...(endpoint.previous_secret ? [endpoint.previous_secret] : [])];
  const signatures = secrets.map((s) => new Webhook(s).sign(messageId, at, body));
  return {
    "webhook-id": messageId,
    "webhook-timestamp": String(Math.floor(at.getTime() / 1000)),
    "webhook-signature": signatures.join(" "),
  };
}

// ---------------------------------------------------------------------------------------------
// Events
// ---------------------------------------------------------------------------------------------

/** What happened, in the few fields a receiver needs to fetch the rest (never the document or verdict). */
export interface WebhookEvent {
  /** The `webhook-id` of every attempt of every delivery of this event: `msg_<resource name>`. */
  id: string;
  type: WebhookEventType | typeof TEST_EVENT_TYPE;
  clientId: string;
  /** When it happened (the resource's completedAt): the delivery log's order. */
  at: string;
  data: {
    id: string;
    status: "COMPLETED" | "FAILED";
    score?: number | null;
    failure_code?: string | null;
    url: string;
  };
}

/** The body every attempt sends, byte for byte. */
export const eventBody = (e: WebhookEvent): string =>
  JSON.stringify({ type: e.type, timestamp: e.at, data: e.data });

/** `https://host/v1/detection/det-…`, or the path alone when the service's public URL is unknown. */
const resourceUrl = (base: string | undefined, path: string) =>
  base ? `${base.replace(/\/+$/, "")}${path}` : path;

export function detectionEvent(
  d: { name: string; clientId: string },
  status: {
    phase: "Completed" | "Failed";
    completedAt?: string;
    score?: number | null;
    failureCode?: string;
  },
  publicUrl: string | undefined,
  now: Date,
): WebhookEvent {
  const completed = status.phase === "Completed";
  return {
    id: `msg_${d.name}`,
    type: completed ? "detection.completed" : "detection.failed",
    clientId: d.clientId,
    at: status.completedAt ?? now.toISOString(),
    data: {
      id: d.name,
      status: completed ? "COMPLETED" : "FAILED",
      score: status.score ?? null,
      ...(completed ? {} : { failure_code: status.failureCode ?? null }),
      url: resourceUrl(publicUrl, `/v1/detection/${d.name}`),
    },
  };
}

export function jobEvent(
  j: { name: string; clientId: string },
  status: { phase: "Completed" | "Failed"; completedAt?: string; failureCode?: string },
  publicUrl: string | undefined,
  now: Date,
): WebhookEvent {
  const completed = status.phase === "Completed";
  return {
    id: `msg_${j.name}`,
    type: completed ? "job.completed" : "job.failed",
    clientId: j.clientId,
    at: status.completedAt ?? now.toISOString(),
    data: {
      id: j.name,
      status: completed ? "COMPLETED" : "FAILED",
      ...(completed ? {} : { failure_code: status.failureCode ?? null }),
      url: resourceUrl(publicUrl, `/jobs/${j.name}`),
    },
  };
}

export { WebhookOutboxMark } from "./webhook-mark.js";

export const eventTypeOf = (kind: "detection" | "job", phase: "Completed" | "Failed"): WebhookEventType =>
  `${kind}.${phase === "Completed" ? "completed" : "failed"}`;

// ---------------------------------------------------------------------------------------------
// Deliveries: the outbox and the log
// ---------------------------------------------------------------------------------------------

export const ATTEMPT_OUTCOMES = [
  "delivered",
  "http_error",
  "redirect",
  "refused",
  "timeout",
  "unreachable",
  "too_large",
  "endpoint_removed",
] as const;
export type AttemptOutcome = (typeof ATTEMPT_OUTCOMES)[number];

export const DeliveryAttempt = z.object({
  at: z.string(),
  outcome: z.enum(ATTEMPT_OUTCOMES),
  /** The receiver's HTTP status, when it answered. */
  status: z.number().int().optional(),
  durationMs: z.number().nonnegative(),
  message: z.string(),
  /** scheduled (the retry schedule) or replay (asked for by the client). */
  trigger: z.enum(["scheduled", "replay"]),
});
export type DeliveryAttempt = z.infer<typeof DeliveryAttempt>;

/** Attempts kept in a delivery's record (the newest); `attemptCount` counts them all. */
export const MAX_KEPT_ATTEMPTS = 30;

export const WebhookDelivery = z.object({
  id: z.string(),
  clientId: z.string(),
  endpointId: z.string(),
  /** The endpoint's URL when the event was queued. */
  url: z.string(),
  eventId: z.string(),
  eventType: z.string(),
  createdAt: z.string(),
  /** The exact body of every attempt. */
  body: z.string(),
  state: z.enum(["pending", "delivered", "failed"]),
  /** Attempts of the current run of the schedule (a replay starts a new run). */
  scheduledAttempts: z.number().int().nonnegative(),
  attemptCount: z.number().int().nonnegative(),
  attempts: z.array(DeliveryAttempt),
  nextAttemptAt: z.string().optional(),
  deliveredAt: z.string().optional(),
  replays: z.number().int().nonnegative(),
  /** True while the next attempt is a replay's. */
  replayPending: z.boolean().optional(),
});
export type WebhookDelivery = z.infer<typeof WebhookDelivery>;

/** `whd_` + 13 digits (newest first) + 8 hex of the event + the endpoint id's 12 hex. */
export const DELIVERY_ID_RE = /^whd_\d{13}_[0-9a-f]{8}_[0-9a-f]{12}$/;

/** The delivery of `event` to `endpoint`: deterministic, so queueing an event twice writes one delivery. */
export function deliveryId(event: Pick<WebhookEvent, "id" | "at">, endpointIdValue: string): string {
  const ms = Math.max(0, Math.min(9_999_999_999_999, Date.parse(event.at) || 0));
  const order = String(9_999_999_999_999 - ms).padStart(13, "0");
  const ev = createHash("sha256").update(event.id).digest("hex").slice(0, 8);
  return `whd_${order}_${ev}_${endpointIdValue.slice(3)}`;
}

/** The endpoint id a delivery id names. */
export const endpointOfDelivery = (id: string): string => `ep_${id.slice(-12)}`;

const seg = archiveClientSegment;
export const webhookKeys = {
  delivery: (clientId: string, endpoint: string, id: string) =>
    `webhooks/deliveries/${seg(clientId)}/${endpoint}/${id}.json`,
  deliveries: (clientId: string, endpoint: string) => `webhooks/deliveries/${seg(clientId)}/${endpoint}/`,
  pending: (clientId: string, endpoint: string, id: string) =>
    `webhooks/pending/${seg(clientId)}/${endpoint}/${id}`,
  pendingPrefix: "webhooks/pending/",
  replay: (clientId: string, endpoint: string, id: string) =>
    `webhooks/replays/${seg(clientId)}/${endpoint}/${id}`,
  replayPrefix: "webhooks/replays/",
};

export const WEBHOOK_DELIVERY = defineStored({
  what: "a webhook delivery",
  key: (clientId: string, endpoint: string, id: string) => webhookKeys.delivery(clientId, endpoint, id),
  schema: WebhookDelivery,
});

/** A marker object (pending, replay): who it is for. */
export const WebhookMarker = z.object({ clientId: z.string(), endpointId: z.string(), id: z.string() });
export type WebhookMarker = z.infer<typeof WebhookMarker>;
const PENDING_MARKER = defineStored({
  what: "a pending webhook delivery's marker",
  key: (clientId: string, endpoint: string, id: string) => webhookKeys.pending(clientId, endpoint, id),
  schema: WebhookMarker,
});
const REPLAY_MARKER = defineStored({
  what: "a webhook replay request",
  key: (clientId: string, endpoint: string, id: string) => webhookKeys.replay(clientId, endpoint, id),
  schema: WebhookMarker,
});

export const readDelivery = (
  objects: ObjectStore,
  bucket: string,
  clientId: string,
  endpoint: string,
  id: string,
): Promise<StoredRead<WebhookDelivery>> =>
  readStored(objects, bucket, WEBHOOK_DELIVERY, clientId, endpoint, id);

export const writeDelivery = (objects: ObjectStore, bucket: string, d: WebhookDelivery) =>
  writeStored(objects, bucket, WEBHOOK_DELIVERY, d, d.clientId, d.endpointId, d.id);

/**
 * Writes the outbox entries of `event`: one delivery per endpoint, each with its pending marker. Idempotent:
 * a delivery already written is kept as it is (its marker is written again, which the deliverer drops
 * when the delivery is finished). The marker goes first, so a crash between the two leaves a marker the
 * next call completes, never a delivery nobody sends.
 */
export async function queueEvent(
  objects: ObjectStore,
  bucket: string,
  event: WebhookEvent,
  endpoints: readonly WebhookEndpoint[],
  now: Date,
): Promise<WebhookDelivery[]> {
  const queued: WebhookDelivery[] = [];
  for (const ep of endpoints) {
    const id = deliveryId(event, ep.id);
    await markPending(objects, bucket, { clientId: event.clientId, endpointId: ep.id, id });
    const existing = await readDelivery(objects, bucket, event.clientId, ep.id, id);
    if (existing.kind === "ok") {
      queued.push(existing.value);
      continue;
    }
    const delivery: WebhookDelivery = {
      id,
      clientId: event.clientId,
      endpointId: ep.id,
      url: ep.url,
      eventId: event.id,
      eventType: event.type,
      createdAt: now.toISOString(),
      body: eventBody(event),
      state: "pending",
      scheduledAttempts: 0,
      attemptCount: 0,
      attempts: [],
      nextAttemptAt: now.toISOString(),
      replays: 0,
    };
    await writeDelivery(objects, bucket, delivery);
    queued.push(delivery);
  }
  return queued;
}

/** Writes a delivery's pending marker (queueing, a replay). */
export const markPending = (objects: ObjectStore, bucket: string, m: WebhookMarker) =>
  writeStored(objects, bucket, PENDING_MARKER, m, m.clientId, m.endpointId, m.id);

/** Removes a finished delivery's pending marker. */
export const dropPending = (objects: ObjectStore, bucket: string, m: WebhookMarker) =>
  objects.delete(bucket, webhookKeys.pending(m.clientId, m.endpointId, m.id));

/** Every pending marker (the deliverer reads them when it starts). */
export async function* listPending(
  objects: ObjectStore,
  bucket: string,
): AsyncIterable<StoredRead<WebhookMarker>> {
  for await (const o of objects.list(bucket, webhookKeys.pendingPrefix))
    yield await readStoredAt(objects, bucket, PENDING_MARKER, o.key);
}

/** Files a replay request for the deliverer (the API's side of a replay). */
export const requestReplay = (objects: ObjectStore, bucket: string, m: WebhookMarker) =>
  writeStored(objects, bucket, REPLAY_MARKER, m, m.clientId, m.endpointId, m.id);

/** The replay requests waiting, oldest key first, and a way to remove one once handled. */
export async function* listReplays(
  objects: ObjectStore,
  bucket: string,
): AsyncIterable<{ key: string; read: StoredRead<WebhookMarker> }> {
  for await (const o of objects.list(bucket, webhookKeys.replayPrefix))
    yield { key: o.key, read: await readStoredAt(objects, bucket, REPLAY_MARKER, o.key) };
}

/**
 * One page of an endpoint's delivery log, newest first: at most `limit` deliveries after the delivery
 * `after` (the cursor), optionally only those in `state`; `more` when another page follows.
 */
export async function listDeliveries(
  objects: ObjectStore,
  bucket: string,
  clientId: string,
  endpoint: string,
  opts: { after?: string; limit: number; state?: WebhookDelivery["state"] },
): Promise<{ items: WebhookDelivery[]; more: boolean; unreadable: string[] }> {
  const prefix = webhookKeys.deliveries(clientId, endpoint);
  const items: WebhookDelivery[] = [];
  const unreadable: string[] = [];
  const startAfter = opts.after === undefined ? undefined : `${prefix}${opts.after}.json`;
  for await (const o of objects.list(bucket, prefix, {
    ...(startAfter ? { startAfter } : {}),
    pageSize: Math.min(1000, opts.limit + 1),
  })) {
    const read = await readStoredAt(objects, bucket, WEBHOOK_DELIVERY, o.key);
    if (read.kind !== "ok") {
      unreadable.push(o.key);
      continue;
    }
    if (opts.state !== undefined && read.value.state !== opts.state) continue;
    if (items.length === opts.limit) return { items, more: true, unreadable };
    items.push(read.value);
  }
  return { items, more: false, unreadable };
}
