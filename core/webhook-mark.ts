import { z } from "zod";

/**
 * The outbox mark a terminal status carries (Detection and DetectionJob status `webhooks`, core/webhooks.ts):
 * written in the same status write that makes the resource terminal when the client has an endpoint for
 * the event, so the event is owed from that moment, whatever crashes next.
 */
export const WebhookOutboxMark = z.object({
  /** pending: the event is owed to the client's endpoints; queued: its deliveries are written. */
  state: z.enum(["pending", "queued"]),
  /** When it was queued. */
  queuedAt: z.string().optional(),
  /** Deliveries written (one per subscribed endpoint). */
  deliveries: z.number().int().nonnegative().optional(),
});
export type WebhookOutboxMark = z.infer<typeof WebhookOutboxMark>;
