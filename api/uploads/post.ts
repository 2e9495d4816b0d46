import { type OpenAPIHono, createRoute } from "@hono/zod-openapi";
import { monotonicFactory } from "ulid";
import { keys } from "../../core/detection.js";
import { SCOPES } from "../../core/scopes.js";
import { requireScopes } from "../auth/middleware.js";
import type { AppEnv } from "../deps.js";
import { bearer, bearerErrorsWithoutStore, bodyTooLarge, jsonResponse, validationJson } from "../schema.js";
import { jsonBody } from "../validation.js";
import { writeReservation } from "./reservation.js";
import { signedUploadUrl } from "./signing.js";
import { createUploadBody, UploadCreated } from "./schema.js";

const nextUlid = monotonicFactory();
const MAX_BODY_BYTES = 64 * 1024;
export const newUploadId = (now: number) => `upl-${nextUlid(now).toLowerCase()}`;

/** The route of a deployment whose largest document is `maxDocumentBytes`. */
export const createUploadRoute = (maxDocumentBytes: number) =>
  createRoute({
    method: "post",
    path: "/v1/uploads",
    tags: ["uploads"],
    summary: "Reserve an upload for one document",
    description:
      "Returns a self-authorising, expiring `upload_url`: PUT the document's bytes to it (no bearer token), then " +
      "create a detection with the `upload_id`. A second PUT replaces the document until a detection is created " +
      "from the upload; an upload starts one detection only. With `size_bytes` the PUT must deliver exactly that " +
      "many bytes. Unknown body fields are rejected. An upload that starts no detection is deleted after " +
      "`expires_in` seconds; one that did goes with its detection (DELETE or the retention period).",
    operationId: "createUpload",
    security: bearer(SCOPES.create),
    middleware: [
      requireScopes([SCOPES.create]),
      jsonBody({ maxBytes: MAX_BODY_BYTES, optional: true }),
    ] as const,
    request: {
      body: {
        content: { "application/json": { schema: createUploadBody(maxDocumentBytes) } },
        required: false,
      },
    },
    responses: {
      201: jsonResponse(UploadCreated, "The upload is reserved"),
      ...bearerErrorsWithoutStore(SCOPES.create),
      413: bodyTooLarge(MAX_BODY_BYTES),
      422: validationJson("Validation error", [
        {
          loc: ["body", "size_bytes"],
          msg: `Input should be less than or equal to ${maxDocumentBytes} (this deployment's maximum document size)`,
          type: "less_than_equal",
          input: maxDocumentBytes + 1,
          ctx: { le: maxDocumentBytes },
        },
      ]),
    },
  });

export function registerCreateUpload(app: OpenAPIHono<AppEnv>, maxDocumentBytes: number): void {
  app.openapi(createUploadRoute(maxDocumentBytes), async (c) => {
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
      size_bytes: body.size_bytes ?? null,
      expires_at: new Date(expires * 1000).toISOString(),
      size: 0,
    });
    const uploadUrl = objects.presignPut
      ? await objects.presignPut(bucket, keys.upload(id), ttl)
      : signedUploadUrl(publicUrl, id, expires, tokens.hmac);
    return c.json({ upload_id: id, upload_url: uploadUrl, expires_in: ttl }, 201);
  });
}
