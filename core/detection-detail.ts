import type { Trust } from "./check-result.js";
import type { Detection } from "./detection.js";
import { failure } from "./failure-codes.js";
import { type ApiStatus, phaseToApiStatus } from "./phases.js";

/**
 * The spec's DetectionDetail as plain data (snake_case, every field present, nullable ones null). The API's
 * zod schema (api/detections/schema.ts) describes the same shape for validation and OpenAPI; the job
 * reconciler writes it as the lines of a job's results.jsonl.
 */
export interface DetectionDetailData {
  id: string;
  status: ApiStatus;
  failure_code: string | null;
  failure_message: string | null;
  score: number | null;
  billable: boolean;
  created_at: string;
  completed_at: string | null;
  submitted_by: string | null;
  batch_id: string | null;
  filename: string | null;
  content_type: string | null;
  size_bytes: number | null;
  s3_key: string | null;
  discovered: string[] | null;
  authoritative: { check_id: string; trust: Trust | null; directive: string | null } | null;
  verdict: {
    fraud_score: number;
    document_type_match: boolean;
    actual_doc_type: string | null;
    reasoning: string | null;
    per_check: { check_id: string; importance: number | null; reasoning: string | null }[];
  } | null;
  agent_error: string | null;
  agent_run_id: string | null;
}

/** Detection resource → DetectionDetail: every spec field present, nullable ones null. */
export function projectDetection(d: Detection): DetectionDetailData {
  const s = d.status ?? {};
  const phase = s.phase ?? "Queued";
  const failed = phase === "Failed";
  const completed = phase === "Completed";
  const doc = s.document;
  // A Failed phase always reports a reason, even if the writer left none.
  const fail = failed ? (s.failure ?? failure("internal_error")) : null;
  const verdict = completed && s.verdict ? s.verdict : null;
  const score = completed && !s.authoritative ? (s.score ?? verdict?.fraudScore ?? null) : null;
  return {
    id: d.metadata.name,
    status: phaseToApiStatus(phase),
    failure_code: fail?.code ?? null,
    failure_message: fail?.message ?? null,
    score,
    billable: !d.spec.sample && !failed,
    created_at: d.metadata.creationTimestamp ?? new Date(0).toISOString(),
    completed_at: s.completedAt ?? null,
    submitted_by: d.spec.submittedBy ?? null,
    batch_id: d.spec.batchId ?? null,
    filename: doc?.filename ?? null,
    content_type: doc?.contentType ?? null,
    size_bytes: doc?.sizeBytes ?? null,
    s3_key: doc?.key ?? null,
    discovered: s.discovered ?? null,
    authoritative: s.authoritative
      ? {
          check_id: s.authoritative.checkId,
          trust: s.authoritative.trust,
          directive: s.authoritative.directive,
        }
      : null,
    verdict: verdict
      ? {
          fraud_score: verdict.fraudScore,
          document_type_match: verdict.documentTypeMatch,
          actual_doc_type: verdict.actualDocType,
          reasoning: verdict.reasoning,
          per_check: verdict.perCheck.map((p) => ({
            check_id: p.checkId,
            importance: p.importance,
            reasoning: p.reasoning,
          })),
        }
      : null,
    agent_error: s.agent?.error ?? null,
    agent_run_id: s.agent?.runId ?? null,
  };
}
