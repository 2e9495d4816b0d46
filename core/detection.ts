import { z } from "zod";
import { WebhookOutboxMark } from "./webhook-mark.js";
import { CheckOutcome, CheckResult, TRUST_LEVELS } from "./check-result.js";
import { EvidenceGroup } from "./evidence.js";
import { FAILURE_CODES, type FailureCode } from "./failure-codes.js";
import { PHASES } from "./phases.js";
import { PageGeometry } from "./page-geometry.js";
import { API_GROUP_VERSION, ObjectMeta } from "./resource.js";
import { DOC_TYPES, Verdict } from "./verdict.js";

export const DETECTION_KIND = "Detection";
export const DETECTION_PLURAL = "detections";

/** Where the document comes from: exactly one of url, uploadId, object. */
export const DetectionSource = z
  .object({
    url: z.string().optional(),
    uploadId: z.string().optional(),
    object: z.object({ bucket: z.string(), key: z.string() }).optional(),
  })
  .refine((s) => [s.url, s.uploadId, s.object].filter((v) => v !== undefined).length === 1, {
    message: "exactly one of url, uploadId or object must be set",
  });
export type DetectionSource = z.infer<typeof DetectionSource>;

export const PRIORITIES = ["interactive", "batch", "sample"] as const;
export type Priority = (typeof PRIORITIES)[number];

export const DetectionSpec = z.object({
  source: DetectionSource,
  docType: z.enum(DOC_TYPES),
  region: z.string().regex(/^[A-Z]{2}$/),
  submittedBy: z.string(),
  /** The tenant whose memory the detection joins (the client entry's `tenant`); absent: the client itself. */
  tenant: z.string().optional(),
  sample: z.boolean().default(false),
  batchId: z.string().optional(),
  priority: z.enum(PRIORITIES).default("interactive"),
  /**
   * The submitting client's detection policy (its `policy` in the clients file), by name; the operator
   * resolves it at admission into `status.policy` and a snapshot beside the step results (keys.policy).
   */
  policy: z.string().max(63).optional(),
});
export type DetectionSpec = z.infer<typeof DetectionSpec>;

export const Condition = z.object({
  type: z.string(),
  status: z.enum(["True", "False", "Unknown"]),
  reason: z.string(),
  message: z.string(),
  lastTransitionTime: z.string(),
  observedGeneration: z.number().int().optional(),
});
export type Condition = z.infer<typeof Condition>;

export const STEP_NAMES = ["prepare", "check", "agent"] as const;
export type StepName = (typeof STEP_NAMES)[number];

export const StepStatus = z.object({
  name: z.enum(STEP_NAMES),
  /** Name of the current attempt's workload: `<detection>-<step>-<attempt>`. */
  workload: z.string(),
  attempt: z.number().int().min(1),
  state: z.enum(["Pending", "Running", "Succeeded", "Failed"]),
  startedAt: z.string().optional(),
  finishedAt: z.string().optional(),
  /** When a failed attempt may be retried (backoff). */
  retryAt: z.string().optional(),
  message: z.string().optional(),
});
export type StepStatus = z.infer<typeof StepStatus>;

export const DocumentInfo = z.object({
  filename: z.string().nullable(),
  contentType: z.string(),
  sizeBytes: z.number().int().nonnegative(),
  /** Object key of the stored document in the service bucket. */
  key: z.string(),
  sha256: z.string(),
  /** The content type the caller declared (an upload's content_type); `contentType` is the sniffed one. */
  declaredContentType: z.string().optional(),
});
export type DocumentInfo = z.infer<typeof DocumentInfo>;

export const FailureInfo = z.object({
  code: z.enum(FAILURE_CODES as [FailureCode, ...FailureCode[]]),
  message: z.string(),
});
export type FailureInfo = z.infer<typeof FailureInfo>;

export const AuthoritativeInfo = z.object({
  checkId: z.string(),
  trust: z.enum(TRUST_LEVELS).nullable(),
  directive: z.string().nullable(),
});
export type AuthoritativeInfo = z.infer<typeof AuthoritativeInfo>;

/**
 * What the Detection's status keeps of one check: its id, outcome, severity and how many findings it made.
 * The check's full result (summary, findings with their evidence) stays in the object store
 * (`keys.result(detection, "check")`), so the status stays small whatever the document's size.
 */
export const CheckSummary = z.object({
  checkId: z.string(),
  outcome: CheckOutcome,
  severity: z.number().int().min(0).max(10),
  findingCount: z.number().int().nonnegative(),
});
export type CheckSummary = z.infer<typeof CheckSummary>;

/** The status's summary of check results. */
export const summarizeChecks = (checks: readonly CheckResult[]): CheckSummary[] =>
  checks.map((c) => ({
    checkId: c.checkId,
    outcome: c.outcome,
    severity: c.severity,
    findingCount: c.findings.length,
  }));

/**
 * The Detection status: only what the contract and `kubectl` need (docs/decisions.md, "Bounded status"). A
 * step's full result stays in the object store; the status is kept under the resource size guard
 * (core/resource-size.ts) for documents of any length.
 */
export const DetectionStatus = z.object({
  phase: z.enum(PHASES).optional(),
  observedGeneration: z.number().int().optional(),
  conditions: z.array(Condition).optional(),
  document: DocumentInfo.optional(),
  steps: z.array(StepStatus).optional(),
  discovered: z.array(z.string()).optional(),
  /** One summary per check; the full results are in the check step's result object. */
  checks: z.array(CheckSummary).optional(),
  authoritative: AuthoritativeInfo.optional(),
  score: z.number().int().nullable().optional(),
  verdict: Verdict.nullable().optional(),
  verdictExpiresAt: z.string().optional(),
  /** Set once the retention sweeper pruned the verdict and the stored files. */
  prunedAt: z.string().optional(),
  failure: FailureInfo.optional(),
  agent: z.object({ runId: z.string().optional(), error: z.string().optional() }).optional(),
  billable: z.boolean().optional(),
  /**
   * The policy the detection is scored under, resolved at admission (the default rules: `default` v1); its
   * content is kept in `keys.policy(detection)` so the agent step and a later re-score read the same one.
   */
  policy: z.object({ name: z.string(), version: z.number().int().min(1) }).optional(),
  admittedAt: z.string().optional(),
  startedAt: z.string().optional(),
  completedAt: z.string().optional(),
  /** The webhook outbox mark (core/webhook-mark.ts): an event owed to the client's endpoints. */
  webhooks: WebhookOutboxMark.optional(),
});
export type DetectionStatus = z.infer<typeof DetectionStatus>;

export const Detection = z.object({
  apiVersion: z.literal(API_GROUP_VERSION),
  kind: z.literal(DETECTION_KIND),
  metadata: ObjectMeta,
  spec: DetectionSpec,
  status: DetectionStatus.optional(),
});
export type Detection = z.infer<typeof Detection>;

/** Input handed to every step process in the environment variable DOCVERIFY_STEP_INPUT (JSON). */
export const StepInput = z.object({
  detection: z.string(),
  uid: z.string().optional(),
  step: z.enum(STEP_NAMES),
  attempt: z.number().int().min(1),
  spec: DetectionSpec,
  /** Known after prepare. */
  document: DocumentInfo.optional(),
  /** The policy resolved at admission (status.policy); the agent step reads its snapshot (keys.policy). */
  policy: z.object({ name: z.string(), version: z.number().int().min(1) }).optional(),
});
export type StepInput = z.infer<typeof StepInput>;

/** What a step writes to the object store (full result) at `resultKey(detection, step)`. */
export const PrepareResult = z.object({
  step: z.literal("prepare"),
  document: DocumentInfo.optional(),
  failure: FailureInfo.optional(),
});
export type PrepareResult = z.infer<typeof PrepareResult>;

export const CheckStepResult = z.object({
  step: z.literal("check"),
  checks: z.array(CheckResult),
  discovered: z.array(z.string()),
  authoritative: AuthoritativeInfo.optional(),
  /** Object key of the extracted text (page markers `--- page N ---`). */
  textKey: z.string().optional(),
  /** What the file names as its producer and creator (a tenant policy's producer lists read them). */
  facts: z.object({ producer: z.string().optional(), creator: z.string().optional() }).optional(),
  /** The reviewer's evidence (docs/evidence.md): its manifest's key and the headline groups. */
  evidence: z
    .object({
      key: z.string(),
      findingsTotal: z.number().int().nonnegative(),
      groupsTotal: z.number().int().nonnegative(),
      groups: z.array(EvidenceGroup),
      /** Geometry of the pages with findings (the score needs it to tell a page-wide box from a value's). */
      geometry: z.array(PageGeometry).optional(),
    })
    .optional(),
  failure: FailureInfo.optional(),
});
export type CheckStepResult = z.infer<typeof CheckStepResult>;

export const AgentStepResult = z.object({
  step: z.literal("agent"),
  runId: z.string(),
  engine: z.string(),
  verdict: Verdict.optional(),
  /** Why the agent failed (one sentence); with failure agent_failed. */
  error: z.string().optional(),
  failure: FailureInfo.optional(),
});
export type AgentStepResult = z.infer<typeof AgentStepResult>;

/** The ≤ 4 KB summary a step prints as its last stdout line / termination message. */
export const StepSummary = z.object({
  ok: z.boolean(),
  step: z.enum(STEP_NAMES),
  resultKey: z.string().optional(),
  failure: FailureInfo.optional(),
  error: z.string().optional(),
});
export type StepSummary = z.infer<typeof StepSummary>;

/** Object keys the service uses in its own bucket. */
export const keys = {
  document: (detection: string, filename: string | null) =>
    `documents/${detection}/${sanitizeFilename(filename ?? "document")}`,
  documentPrefix: (detection: string) => `documents/${detection}/`,
  result: (detection: string, step: StepName) => `runs/${detection}/${step}.json`,
  text: (detection: string) => `runs/${detection}/text.txt`,
  /** The policy the detection was admitted under (a snapshot: core/policy.ts's DetectionPolicySpec). */
  policy: (detection: string) => `runs/${detection}/policy.json`,
  runPrefix: (detection: string) => `runs/${detection}/`,
  /** The reviewer's evidence (docs/evidence.md): the manifest and the rendered page images. */
  evidence: (detection: string) => `evidence/${detection}/evidence.json`,
  evidencePage: (detection: string, page: number, version: "submitted" | "first-saved" = "submitted") =>
    `evidence/${detection}/pages/${page}${version === "first-saved" ? "-first-saved" : ""}.png`,
  evidencePrefix: (detection: string) => `evidence/${detection}/`,
  upload: (uploadId: string) => `uploads/${uploadId}/document`,
  uploadMeta: (uploadId: string) => `uploads/${uploadId}/meta.json`,
  uploadPrefix: (uploadId: string) => `uploads/${uploadId}/`,
} as const;

export function sanitizeFilename(name: string): string {
  const base = name.split(/[\\/]/).pop() ?? "document";
  const clean = base
    .replace(/[^A-Za-z0-9._-]+/g, "_")
    .replace(/^\.+/, "")
    .slice(0, 120);
  return clean || "document";
}

export function workloadName(detection: string, step: StepName, attempt: number): string {
  return `${detection}-${step}-${attempt}`;
}
