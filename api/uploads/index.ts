import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../deps.js";
import { registerCreateUpload } from "./post.js";
import { registerPutUpload } from "./put.js";

/** `maxDocumentBytes`: the deployment's DOCVERIFY_MAX_DOCUMENT_BYTES, documented as size_bytes' maximum. */
export function registerUploadRoutes(app: OpenAPIHono<AppEnv>, opts: { maxDocumentBytes: number }): void {
  registerCreateUpload(app, opts.maxDocumentBytes);
  registerPutUpload(app);
}
