import type { ErrorHandler } from "hono";
import { HTTPException } from "hono/http-exception";
import { isStoreError } from "../core/ports.js";
import type { AppEnv } from "./deps.js";
import { DamagedArchivedRecord, damagedRecord } from "./detections/access.js";
import { ApiError } from "./errors.js";

/** Turns HTTPExceptions raised inside Hono or zod-openapi into the contract's answers. */
function fromHttpException(e: HTTPException): ApiError {
  if (e.status === 415) {
    return new ApiError(422, "validation_error", [
      {
        loc: ["body"],
        msg: "The request body must be JSON sent with Content-Type: application/json",
        type: "model_attributes_type",
      },
    ]);
  }
  if (e.status === 400 && /json/i.test(e.message)) {
    return new ApiError(422, "validation_error", [
      { loc: ["body"], msg: `JSON decode error: ${e.message}`, type: "json_invalid" },
    ]);
  }
  if (e.status === 413) return new ApiError(413, "body_too_large", "The request body is too large.");
  return new ApiError(e.status, "http_error", e.message || "The request could not be processed.");
}

/**
 * app.onError: ApiError → its status and body; a damaged archived record → its 500 saying so
 * (api/detections/access.ts); anything else → a logged, generic 500 naming the request id.
 */
export const errorHandler: ErrorHandler<AppEnv> = (err, c) => {
  const e =
    err instanceof HTTPException
      ? fromHttpException(err)
      : err instanceof DamagedArchivedRecord
        ? damagedRecord(err.id, c.var.requestId)
        : isStoreError(err, "Unavailable")
          ? new ApiError(
              503,
              "store_unavailable",
              "The service's storage is unavailable; retry in a few seconds.",
              {
                headers: { "Retry-After": "5" },
                cause: err,
              },
            )
          : err;
  if (e instanceof ApiError) {
    if (e.status >= 500) c.var.deps.log.error({ err, requestId: c.var.requestId }, e.message);
    else if (e.status === 401 || e.status === 403) {
      c.var.deps.log.debug({ requestId: c.var.requestId, status: e.status, detail: e.detail }, "refused");
    }
    return c.json(e.body(), e.status, e.options.headers);
  }
  const requestId = c.var.requestId ?? "unknown";
  c.var.deps?.log.error({ err, requestId, method: c.req.method, path: c.req.path }, "unhandled error");
  return c.json({ detail: `Internal server error (request ${requestId}).` }, 500);
};
