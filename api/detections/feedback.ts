import { createRoute, type OpenAPIHono, z } from "@hono/zod-openapi";
import type { CheckStepResult } from "../../core/detection.js";
import {
  FEEDBACK,
  FEEDBACK_LABELS,
  FEEDBACK_NOTE_MAX,
  FEEDBACK_REVIEWER_MAX,
  type FeedbackRecord,
  feedbackKeys,
} from "../../core/feedback.js";
import { SCOPES } from "../../core/scopes.js";
import { readStepResult } from "../../core/step-results.js";
import { writeStored } from "../../core/stored.js";
import { requireScopes } from "../auth/middleware.js";
import type { AppEnv } from "../deps.js";
import { bearer, bearerErrors, errorJson, validationJson } from "../schema.js";
import { jsonBody } from "../validation.js";
import { findVisibleDetection } from "./access.js";
import { DETECTION_ID_422, DetectionIdParams } from "./schema.js";

/** The JSON body of PUT /v1/detection/{detection_id}/feedback. */
export const FeedbackBody = z
  .strictObject({
    label: z.enum(FEEDBACK_LABELS).openapi({
      description:
        "The reviewer's verdict: `confirmed_fraud` (the document was tampered with or forged), `genuine`, or " +
        "`unsure` (kept, but not counted by the calibration report).",
      example: "genuine",
    }),
    note: z
      .string()
      .max(FEEDBACK_NOTE_MAX)
      .optional()
      .openapi({
        description: `Free text for the tenant's records, at most ${FEEDBACK_NOTE_MAX} characters.`,
      }),
    reviewer: z
      .string()
      .min(1)
      .max(FEEDBACK_REVIEWER_MAX)
      .optional()
      .openapi({
        description: `Who reviewed (at most ${FEEDBACK_REVIEWER_MAX} characters); the calling client's id when absent.`,
        example: "j.smith",
      }),
  })
  .openapi("DetectionFeedback");

const MAX_BODY_BYTES = 8 * 1024;

export const putFeedbackRoute = createRoute({
  method: "put",
  path: "/v1/detection/{detection_id}/feedback",
  tags: ["detections"],
  summary: "Record a reviewer's verdict on a detection",
  description:
    "Keeps the reviewer's label (and note) with the detection, live or archived, replacing an earlier one; " +
    "`docverify calibration-report` reads the labels of a client's detections to propose severity " +
    "overrides (docs/tuning.md). Another client's detection answers 404, like GET /v1/detection/{detection_id}.",
  operationId: "putDetectionFeedback",
  security: bearer(SCOPES.feedback),
  middleware: [requireScopes([SCOPES.feedback]), jsonBody({ maxBytes: MAX_BODY_BYTES })] as const,
  request: {
    params: DetectionIdParams,
    body: { content: { "application/json": { schema: FeedbackBody } }, required: true },
  },
  responses: {
    204: { description: "Recorded" },
    ...bearerErrors(SCOPES.feedback),
    404: errorJson("No such detection (or another client's, or one being deleted)", ["Detection not found"]),
    413: errorJson(`The JSON body is larger than ${MAX_BODY_BYTES / 1024} KiB`, [
      `The request body is larger than the limit of ${MAX_BODY_BYTES} bytes.`,
    ]),
    422: validationJson("The detection id is malformed, or the body is not a feedback", [
      DETECTION_ID_422,
      {
        loc: ["body", "label"],
        msg: 'Invalid option: expected one of "confirmed_fraud"|"genuine"|"unsure"',
        type: "enum",
        input: "fraud",
      },
    ]),
  },
});

/** The check codes that fired in a detection's stored check results (before any policy). */
function firedCodes(checks: CheckStepResult["checks"] | undefined): FeedbackRecord["fired"] {
  const out: FeedbackRecord["fired"] = [];
  for (const c of checks ?? [])
    for (const f of c.findings)
      if ((f.severity ?? 0) >= 1) out.push({ check: c.checkId, code: f.code, severity: f.severity ?? 0 });
  return out;
}

export function registerPutFeedback(app: OpenAPIHono<AppEnv>): void {
  app.openapi(putFeedbackRoute, async (c) => {
    const { detection_id } = c.req.valid("param");
    const body = c.req.valid("json");
    const deps = c.var.deps;
    const { clientId } = c.var.principal;
    const d = await findVisibleDetection(deps, c.var.principal, detection_id);
    const read = await readStepResult(deps.objects, deps.bucket, detection_id, "check");
    const record: FeedbackRecord = {
      version: 1,
      detection: detection_id,
      clientId,
      label: body.label,
      ...(body.note !== undefined ? { note: body.note } : {}),
      reviewer: body.reviewer ?? clientId,
      at: deps.clock.now().toISOString(),
      score: d.status?.score ?? null,
      policy: d.status?.policy ?? d.status?.verdict?.policy ?? null,
      docType: d.spec.docType,
      fired: firedCodes(read.kind === "ok" ? read.value.checks : undefined),
    };
    await writeStored(deps.objects, deps.bucket, FEEDBACK, record, detection_id);
    await deps.objects.put(deps.bucket, feedbackKeys.marker(clientId, detection_id), Buffer.alloc(0));
    deps.log.info(
      { detection: detection_id, client: clientId, label: body.label },
      "reviewer feedback recorded",
    );
    return c.body(null, 204);
  });
}
