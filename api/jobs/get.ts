import { type OpenAPIHono, createRoute } from "@hono/zod-openapi";
import { SCOPES } from "../../core/scopes.js";
import { requireScopes } from "../auth/middleware.js";
import type { AppEnv } from "../deps.js";
import { bearer, bearerErrors, errorJson, jsonResponse, validationJson } from "../schema.js";
import { jobsUnavailable, loadOwnJob, projectJob } from "./access.js";
import { JobDetail, JobIdParams } from "./schema.js";

export const getJobRoute = createRoute({
  method: "get",
  path: "/jobs/{job_id}",
  tags: ["jobs"],
  summary: "Read a job's progress",
  description:
    "Counts of the job's detections by status (they grow while the bucket is listed), and once COMPLETED the " +
    "report's location. Another client's job answers 404.",
  operationId: "getJob",
  security: bearer(SCOPES.jobsGet),
  middleware: [requireScopes([SCOPES.jobsGet])] as const,
  request: { params: JobIdParams },
  responses: {
    200: jsonResponse(JobDetail, "The job"),
    ...bearerErrors(SCOPES.jobsGet),
    404: errorJson("No such job (or another client's)", ["Job not found"]),
    422: validationJson("The job id is not a UUID", [
      {
        loc: ["path", "job_id"],
        msg: "Input should be a job id (a UUID) as returned by POST /jobs",
        type: "string_pattern_mismatch",
        input: "abc",
      },
    ]),
    503: jobsUnavailable,
  },
});

export function registerGetJob(app: OpenAPIHono<AppEnv>): void {
  app.openapi(getJobRoute, async (c) => {
    const { job_id } = c.req.valid("param");
    const job = await loadOwnJob(c.var.deps, c.var.principal, job_id);
    return c.json(JobDetail.parse(projectJob(job)), 200);
  });
}
