import { type OpenAPIHono, createRoute } from "@hono/zod-openapi";
import { SCOPES } from "../../core/scopes.js";
import { requireScopes } from "../auth/middleware.js";
import type { AppEnv } from "../deps.js";
import { BEARER, ErrorResponse, errorResponses, jsonResponse } from "../schema.js";
import { loadOwnJob, projectJob } from "./access.js";
import { JobDetail, JobIdParams } from "./schema.js";

export const getJobRoute = createRoute({
  method: "get",
  path: "/jobs/{job_id}",
  tags: ["jobs"],
  summary: "Read a job's progress",
  description:
    "Counts of the job's detections by status (they grow while the bucket is listed), and once COMPLETED the " +
    "report's location. Another client's job answers 404.",
  security: BEARER,
  middleware: [requireScopes([SCOPES.jobsGet])] as const,
  request: { params: JobIdParams },
  responses: {
    200: jsonResponse(JobDetail, "The job"),
    ...errorResponses,
    404: jsonResponse(ErrorResponse, "No such job"),
    503: jsonResponse(ErrorResponse, "Batch jobs are not enabled in this deployment"),
  },
});

export function registerGetJob(app: OpenAPIHono<AppEnv>): void {
  app.openapi(getJobRoute, async (c) => {
    const { job_id } = c.req.valid("param");
    const job = await loadOwnJob(c.var.deps, c.var.principal, job_id);
    return c.json(JobDetail.parse(projectJob(job)), 200);
  });
}
