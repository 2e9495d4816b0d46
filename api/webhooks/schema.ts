import { z } from "@hono/zod-openapi";
import {
  ATTEMPT_OUTCOMES,
  DELIVERY_ID_RE,
  ENDPOINT_ID_RE,
  WEBHOOK_EVENT_TYPES,
  type WebhookDelivery,
  type WebhookEndpoint,
} from "../../core/webhooks.js";
import { CURSOR_MESSAGE, CURSOR_RE, LIST_DEFAULT_LIMIT, LIST_MAX_LIMIT } from "../detections/schema.js";

export const WebhookEndpointView = z
  .object({
    id: z.string().openapi({ example: "ep_3f9a0c1d2e4b" }),
    url: z.string().openapi({ example: "https://loans.example.com/hooks/docverify" }),
    events: z.array(z.enum(WEBHOOK_EVENT_TYPES)),
    secret_rotation: z
      .boolean()
      .openapi({
        description: "True while a previous secret is still active (deliveries carry two signatures)",
      }),
  })
  .openapi("WebhookEndpoint");

export const WebhookEndpointList = z
  .object({ items: z.array(WebhookEndpointView) })
  .openapi("WebhookEndpointList");

export const viewEndpoint = (e: WebhookEndpoint): z.infer<typeof WebhookEndpointView> => ({
  id: e.id,
  url: e.url,
  events: [...e.events],
  secret_rotation: e.previous_secret !== undefined,
});

export const DELIVERY_STATUSES = ["PENDING", "DELIVERED", "FAILED"] as const;
const toStatus = { pending: "PENDING", delivered: "DELIVERED", failed: "FAILED" } as const;
export const fromStatus = { PENDING: "pending", DELIVERED: "delivered", FAILED: "failed" } as const;

export const WebhookAttemptView = z
  .object({
    at: z.string(),
    outcome: z.enum(ATTEMPT_OUTCOMES),
    http_status: z.number().int().nullable(),
    duration_ms: z.number(),
    message: z.string(),
    trigger: z.enum(["scheduled", "replay"]),
  })
  .openapi("WebhookAttempt");

export const WebhookDeliveryView = z
  .object({
    id: z.string().openapi({ example: "whd_8232712345678_1a2b3c4d_3f9a0c1d2e4b" }),
    endpoint_id: z.string(),
    url: z.string(),
    webhook_id: z.string().openapi({ description: "The webhook-id header of every attempt" }),
    event_type: z.string(),
    payload: z.record(z.string(), z.unknown()).openapi({ description: "The body every attempt sends" }),
    status: z.enum(DELIVERY_STATUSES),
    created_at: z.string(),
    attempt_count: z.number().int(),
    next_attempt_at: z.string().nullable(),
    delivered_at: z.string().nullable(),
    replays: z.number().int(),
    attempts: z.array(WebhookAttemptView).openapi({ description: "The most recent attempts, oldest first" }),
  })
  .openapi("WebhookDelivery");

export const WebhookDeliveryList = z
  .object({
    items: z.array(WebhookDeliveryView),
    next_cursor: z.string().nullable().openapi({ description: "Opaque; null on the last page" }),
  })
  .openapi("WebhookDeliveryList");

export function viewDelivery(d: WebhookDelivery): z.infer<typeof WebhookDeliveryView> {
  let payload: Record<string, unknown> = {};
  try {
    payload = JSON.parse(d.body) as Record<string, unknown>;
  } catch {
    // written by us as JSON; an unreadable body shows as {}
  }
  return {
    id: d.id,
    endpoint_id: d.endpointId,
    url: d.url,
    webhook_id: d.eventId,
    event_type: d.eventType,
    payload,
    status: toStatus[d.state],
    created_at: d.createdAt,
    attempt_count: d.attemptCount,
    next_attempt_at: d.nextAttemptAt ?? null,
    delivered_at: d.deliveredAt ?? null,
    replays: d.replays,
    attempts: d.attempts.map((a) => ({
      at: a.at,
      outcome: a.outcome,
      http_status: a.status ?? null,
      duration_ms: a.durationMs,
      message: a.message,
      trigger: a.trigger,
    })),
  };
}

const ENDPOINT_MESSAGE = "Input should be an endpoint id such as ep_3f9a0c1d2e4b, as GET /v1/webhooks lists";
export const DELIVERY_MESSAGE = "Input should be a delivery id as GET /v1/webhooks/deliveries lists";

export const ListDeliveriesQuery = z.object({
  endpoint_id: z
    .string()
    .regex(ENDPOINT_ID_RE, ENDPOINT_MESSAGE)
    .openapi({
      param: { name: "endpoint_id", in: "query" },
      pattern: ENDPOINT_ID_RE.source,
      example: "ep_3f9a0c1d2e4b",
    }),
  status: z
    .enum(DELIVERY_STATUSES)
    .optional()
    .openapi({ param: { name: "status", in: "query" } }),
  limit: z.coerce
    .number()
    .int()
    .min(1)
    .max(LIST_MAX_LIMIT)
    .default(LIST_DEFAULT_LIMIT)
    .openapi({ param: { name: "limit", in: "query" }, example: 50 }),
  cursor: z
    .string()
    .min(1)
    .max(512)
    .regex(CURSOR_RE, CURSOR_MESSAGE)
    .optional()
    .openapi({
      param: { name: "cursor", in: "query" },
      pattern: CURSOR_RE.source,
      description: "next_cursor of the previous page, as it was (opaque, base64url)",
    }),
});

export const DeliveryIdParams = z.object({
  delivery_id: z
    .string()
    .regex(DELIVERY_ID_RE, DELIVERY_MESSAGE)
    .openapi({ param: { name: "delivery_id", in: "path" }, pattern: DELIVERY_ID_RE.source }),
});
