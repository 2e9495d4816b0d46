import { createHash } from "node:crypto";
import { z } from "zod";
import { labelValue } from "./resource.js";
import { defineStored } from "./stored.js";

/**
 * A reviewer's verdict on a detection (issue 26, docs/tuning.md): `PUT /v1/detection/{id}/feedback` keeps
 * it beside the detection's step results (`runs/<id>/feedback.json`, so it lives as long as the detection's
 * results, live or archived, and goes with them at DELETE or retention), with an empty marker per client
 * (`feedback-index/<client>/<id>`) so `docverify calibration-report` lists a tenant's labelled detections
 * without walking every run. The record also keeps which check codes had fired and the score then, so the
 * per-code counts of the report do not depend on re-reading the check results.
 */
export const FEEDBACK_LABELS = ["confirmed_fraud", "genuine", "unsure"] as const;
export type FeedbackLabel = (typeof FEEDBACK_LABELS)[number];

/** Longest note a reviewer may leave (characters). */
export const FEEDBACK_NOTE_MAX = 2000;
/** Longest reviewer name (characters). */
export const FEEDBACK_REVIEWER_MAX = 200;

export const FeedbackRecord = z.object({
  version: z.literal(1),
  detection: z.string(),
  clientId: z.string(),
  label: z.enum(FEEDBACK_LABELS),
  note: z.string().max(FEEDBACK_NOTE_MAX).optional(),
  reviewer: z.string().max(FEEDBACK_REVIEWER_MAX),
  at: z.string(),
  /** The detection's score and policy when the feedback was given. */
  score: z.number().int().nullable(),
  policy: z.object({ name: z.string(), version: z.number().int() }).nullable(),
  docType: z.string(),
  /** The check codes that had fired (severity ≥ 1), before any policy. */
  fired: z.array(z.object({ check: z.string(), code: z.string(), severity: z.number().int() })),
});
export type FeedbackRecord = z.infer<typeof FeedbackRecord>;

const segment = (clientId: string) =>
  labelValue(clientId, (s) => createHash("sha256").update(s).digest("hex"));

export const feedbackKeys = {
  record: (detection: string) => `runs/${detection}/feedback.json`,
  marker: (clientId: string, detection: string) => `feedback-index/${segment(clientId)}/${detection}`,
  markerPrefix: (clientId: string) => `feedback-index/${segment(clientId)}/`,
} as const;

export const FEEDBACK = defineStored({
  what: "the reviewer's feedback",
  key: (detection: string) => feedbackKeys.record(detection),
  schema: FeedbackRecord,
});
