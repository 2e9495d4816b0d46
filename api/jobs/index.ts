import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../deps.js";
import { registerGetJob } from "./get.js";
import { registerCreateJob } from "./post.js";

/** POST /jobs and GET /jobs/{job_id}; bearer authentication for /jobs is set up in app.ts. */
export function registerJobRoutes(app: OpenAPIHono<AppEnv>): void {
  registerCreateJob(app);
  registerGetJob(app);
}
