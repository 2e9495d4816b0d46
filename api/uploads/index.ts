import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../deps.js";
import { registerCreateUpload } from "./post.js";
import { registerPutUpload } from "./put.js";

export function registerUploadRoutes(app: OpenAPIHono<AppEnv>): void {
  registerCreateUpload(app);
  registerPutUpload(app);
}
