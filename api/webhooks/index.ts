import { type OpenAPIHono, createRoute } from "@hono/zod-openapi";
import { SCOPES } from "../../core/scopes.js";
import {
  DELIVERY_ID_RE,
  endpointOfDelivery,
  endpointsOf,
  listDeliveries,
  readDelivery,
  requestReplay,
} from "../../core/webhooks.js";
import { requireScopes } from "../auth/middleware.js";
import type { AppEnv } from "../deps.js";
import { ApiError, invalid } from "../errors.js";
import { bearer, bearerErrorsWithoutStore, errorJson, jsonResponse, validationJson } from "../schema.js";
import { CURSOR_MESSAGE } from "../detections/schema.js";
import {
  DeliveryIdParams,
  fromStatus,
  ListDeliveriesQuery,
  viewDelivery,
  viewEndpoint,
  WebhookDeliveryList,
  WebhookDeliveryView,
  WebhookEndpointList,
} from "./schema.js";

/**
 * The caller's webhook endpoints (from the clients file, never their secrets), their delivery log and
 * replays (issue 25; core/webhooks.ts). The operator's deliverer sends; the API only reads the log and
 * files replay requests, so API replicas never send an event.
 */

const encodeCursor = (lastId: string) => Buffer.from(JSON.stringify({ after: lastId })).toString("base64url");
function decodeCursor(cursor: string): string {
  try {
    const v = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8")) as { after?: unknown };
    if (typeof v.after === "string" && DELIVERY_ID_RE.test(v.after)) return v.after;
  } catch {
    // reported below
  }
  throw invalid(["query", "cursor"], CURSOR_MESSAGE, "value_error", cursor);
}

const endpointNotFound = () =>
  new ApiError(404, "not_found", "Webhook endpoint not found: GET /v1/webhooks lists yours");
const deliveryNotFound = () => new ApiError(404, "not_found", "Webhook delivery not found");

export const listWebhooksRoute = createRoute({
  method: "get",
  path: "/v1/webhooks",
  tags: ["webhooks"],
  summary: "List the caller's webhook endpoints",
  description:
    "The endpoints registered for the calling client in the deployment's clients file, with the events each " +
    "receives. Secrets are never returned.",
  operationId: "listWebhooks",
  security: bearer(SCOPES.get),
  middleware: [requireScopes([SCOPES.get])] as const,
  responses: {
    200: jsonResponse(WebhookEndpointList, "The caller's endpoints"),
    ...bearerErrorsWithoutStore(SCOPES.get),
  },
});

export const listDeliveriesRoute = createRoute({
  method: "get",
  path: "/v1/webhooks/deliveries",
  tags: ["webhooks"],
  summary: "An endpoint's delivery log, newest first",
  description:
    "Every delivery to one of the caller's endpoints with its recent attempts (outcome, HTTP status, duration). " +
    "Pages of at most `limit` (1-200, default 50); pass `next_cursor` as `cursor` for the next page.",
  operationId: "listWebhookDeliveries",
  security: bearer(SCOPES.get),
  middleware: [requireScopes([SCOPES.get])] as const,
  request: { query: ListDeliveriesQuery },
  responses: {
    200: jsonResponse(WebhookDeliveryList, "One page of deliveries"),
    ...bearerErrorsWithoutStore(SCOPES.get),
    404: errorJson("No such endpoint for the caller", [
      "Webhook endpoint not found: GET /v1/webhooks lists yours",
    ]),
    422: validationJson("A query parameter is invalid", [
      {
        loc: ["query", "endpoint_id"],
        msg: "Input should be an endpoint id such as ep_3f9a0c1d2e4b, as GET /v1/webhooks lists",
        type: "string_pattern_mismatch",
        input: "x",
      },
    ]),
  },
});

export const replayDeliveryRoute = createRoute({
  method: "post",
  path: "/v1/webhooks/deliveries/{delivery_id}/replay",
  tags: ["webhooks"],
  summary: "Send a delivery again",
  description:
    "Queues the delivery for a new run of its retry schedule, with the same webhook-id and body (receivers " +
    "deduplicate on webhook-id). Answers 202 at once; the attempt shows in the delivery log.",
  operationId: "replayWebhookDelivery",
  security: bearer(SCOPES.get),
  middleware: [requireScopes([SCOPES.get])] as const,
  request: { params: DeliveryIdParams },
  responses: {
    202: jsonResponse(WebhookDeliveryView, "The delivery, as it was when the replay was queued"),
    ...bearerErrorsWithoutStore(SCOPES.get),
    404: errorJson("No such delivery for the caller", ["Webhook delivery not found"]),
    422: validationJson("The delivery id is malformed", [
      {
        loc: ["path", "delivery_id"],
        msg: "Input should be a delivery id as GET /v1/webhooks/deliveries lists",
        type: "string_pattern_mismatch",
        input: "x",
      },
    ]),
  },
});

export function registerWebhookRoutes(app: OpenAPIHono<AppEnv>): void {
  app.openapi(listWebhooksRoute, (c) => {
    const id = c.var.principal.clientId;
    const items = endpointsOf(id, c.var.deps.clients.get(id)?.webhooks).map(viewEndpoint);
    return c.json({ items }, 200);
  });

  app.openapi(listDeliveriesRoute, async (c) => {
    const q = c.req.valid("query");
    const after = q.cursor === undefined ? undefined : decodeCursor(q.cursor);
    const clientId = c.var.principal.clientId;
    const deps = c.var.deps;
    // The log of an endpoint the client no longer has stays readable (its deliveries are the client's).
    const page = await listDeliveries(deps.objects, deps.bucket, clientId, q.endpoint_id, {
      ...(after ? { after } : {}),
      limit: q.limit,
      ...(q.status ? { state: fromStatus[q.status] } : {}),
    });
    for (const key of page.unreadable)
      deps.log.error({ key }, "a webhook delivery record is damaged; left out of the log");
    if (page.items.length === 0 && after === undefined) {
      const known = endpointsOf(clientId, deps.clients.get(clientId)?.webhooks).some(
        (e) => e.id === q.endpoint_id,
      );
      if (!known) throw endpointNotFound();
    }
    const last = page.items.at(-1);
    return c.json(
      {
        items: page.items.map(viewDelivery),
        next_cursor: page.more && last ? encodeCursor(last.id) : null,
      },
      200,
    );
  });

  app.openapi(replayDeliveryRoute, async (c) => {
    const { delivery_id } = c.req.valid("param");
    const clientId = c.var.principal.clientId;
    const deps = c.var.deps;
    const endpoint = endpointOfDelivery(delivery_id);
    const read = await readDelivery(deps.objects, deps.bucket, clientId, endpoint, delivery_id);
    if (read.kind !== "ok") throw deliveryNotFound();
    await requestReplay(deps.objects, deps.bucket, { clientId, endpointId: endpoint, id: delivery_id });
    deps.log.info(
      { delivery: delivery_id, clientId, requestId: c.var.requestId },
      "webhook replay requested",
    );
    return c.json(viewDelivery(read.value), 202);
  });
}
