import { type OpenAPIHono, createRoute } from "@hono/zod-openapi";
import { monotonicFactory } from "ulid";
import { keys } from "../../core/detection.js";
import { SCOPES } from "../../core/scopes.js";
import { requireScopes } from "../auth/middleware.js";
import type { AppEnv } from "../deps.js";
import { BEARER, errorResponses, jsonResponse } from "../schema.js";
import { jsonBody } from "../validation.js";
import { signedUploadUrl } from "./signing.js";
import { writeReservation } from "./reservation.js";
import { CreateUploadBody, UploadCreated } from "./schema.js";

const nextUlid = monotonicFactory();
export const newUploadId = (now: number) => `upl-${nextUlid(now).toLowerCase()}`;

export const createUploadRoute = createRoute({
  method: "post",
  path: "/v1/uploads",
  tags: ["uploads"],
  summary: "Reserve an upload for one document",
  description:
    "Returns a self-authorising, expiring `upload_url`: PUT the document's bytes to it (no bearer token), then " +
    "create a detection with the `upload_id`. A second PUT replaces the document. Unknown body fields are rejected.",
  security: BEARER,
  middleware: [requireScopes([SCOPES.create]), jsonBody({ maxBytes: 64 * 1024, optional: true })] as const,
  request: { body: { content: { "application/json": { schema: CreateUploadBody } }, required: false } },
  responses: {
    201: jsonResponse(UploadCreated, "The upload is reserved"),
    ...errorResponses,
  },
});

export function registerCreateUpload(app: OpenAPIHono<AppEnv>): void {
  app.openapi(createUploadRoute, async (c) => {
    const { objects, bucket, config, clock, tokens, publicUrl } = c.var.deps;
    const body = c.req.valid("json");
    const now = clock.now();
    const id = newUploadId(now.getTime());
    const ttl = config.uploadTtlSeconds;
    const expires = Math.floor(now.getTime() / 1000) + ttl;
    await writeReservation(objects, bucket, id, {
      client_id: c.var.principal.clientId,
      filename: body.filename ?? null,
      content_type: body.content_type ?? null,
      expires_at: new Date(expires * 1000).toISOString(),
      size: 0,
    });
    const uploadUrl = objects.presignPut
      ? await objects.presignPut(bucket, keys.upload(id), ttl)
      : signedUploadUrl(publicUrl, id, expires, tokens.hmac);
    return c.json({ upload_id: id, upload_url: uploadUrl, expires_in: ttl }, 201);
  });
}
