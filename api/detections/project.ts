import type { Detection } from "../../core/detection.js";
import { failure } from "../../core/failure-codes.js";
import { phaseToApiStatus } from "../../core/phases.js";
import type { DetectionDetail } from "./schema.js";

/** Detection resource → the API's DetectionDetail: every spec field present, nullable ones null. */
export function project(d: Detection): DetectionDetail {
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
