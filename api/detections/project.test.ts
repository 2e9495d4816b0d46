import { describe, expect, it } from "vitest";
import type { Detection, DetectionStatus } from "../../core/detection.js";
import { FAILURE_MESSAGES } from "../../core/failure-codes.js";
import { project } from "./project.js";
import { DetectionDetail } from "./schema.js";

const SPEC_FIELDS = [
  "id",
  "status",
  "failure_code",
  "failure_message",
  "score",
  "billable",
  "created_at",
  "completed_at",
  "submitted_by",
  "batch_id",
  "filename",
  "content_type",
  "size_bytes",
  "s3_key",
  "discovered",
  "authoritative",
  "verdict",
  "agent_error",
  "agent_run_id",
].sort();

function detection(status?: DetectionStatus, spec: Partial<Detection["spec"]> = {}): Detection {
  return {
    apiVersion: "docverify.io/v1alpha1",
    kind: "Detection",
    metadata: { name: "det-01", creationTimestamp: "2030-01-01T00:00:00.000Z" },
    spec: {
      source: { url: "https://x.example/a.pdf" },
      docType: "invoice",
      region: "DE",
      submittedBy: "alice",
      sample: false,
      priority: "interactive",
      ...spec,
    },
    status,
  };
}

const document = {
  filename: "a.pdf",
  contentType: "application/pdf",
  sizeBytes: 1234,
  key: "documents/det-01/a.pdf",
  sha256: "ab",
};
const verdict = {
  fraudScore: 72,
  documentTypeMatch: false,
  actualDocType: "electricity bill",
  reasoning: "The creation date is after the modification date.",
  perCheck: [{ checkId: "metadata.dates", importance: 8, reasoning: "Modified before created." }],
};

describe("project", () => {
  it("a new detection: QUEUED, every field present, nullable ones null", () => {
    const out = project(detection());
    expect(Object.keys(out).sort()).toEqual(SPEC_FIELDS);
    expect(out).toEqual({
      id: "det-01",
      status: "QUEUED",
      failure_code: null,
      failure_message: null,
      score: null,
      billable: true,
      created_at: "2030-01-01T00:00:00.000Z",
      completed_at: null,
      submitted_by: "alice",
      batch_id: null,
      filename: null,
      content_type: null,
      size_bytes: null,
      s3_key: null,
      discovered: null,
      authoritative: null,
      verdict: null,
      agent_error: null,
      agent_run_id: null,
    });
    expect(DetectionDetail.parse(out)).toEqual(out);
  });

  it("running: document facts show, score and verdict stay null even if written early", () => {
    const out = project(
      detection({ phase: "Running", document, discovered: ["qr_present"], score: 50, verdict }),
    );
    expect(out).toMatchObject({
      status: "RUNNING",
      filename: "a.pdf",
      content_type: "application/pdf",
      size_bytes: 1234,
      s3_key: "documents/det-01/a.pdf",
      discovered: ["qr_present"],
      score: null,
      verdict: null,
    });
  });

  it("completed with a verdict: snake_case verdict and per_check, score, billable", () => {
    const out = project(
      detection({
        phase: "Completed",
        document,
        score: 72,
        verdict,
        completedAt: "2030-01-01T00:01:00.000Z",
        agent: { runId: "run-1" },
      }),
    );
    expect(out).toMatchObject({
      status: "COMPLETED",
      score: 72,
      billable: true,
      completed_at: "2030-01-01T00:01:00.000Z",
      agent_run_id: "run-1",
      agent_error: null,
      verdict: {
        fraud_score: 72,
        document_type_match: false,
        actual_doc_type: "electricity bill",
        reasoning: "The creation date is after the modification date.",
        per_check: [{ check_id: "metadata.dates", importance: 8, reasoning: "Modified before created." }],
      },
    });
    expect(DetectionDetail.parse(out)).toEqual(out);
  });

  it("completed after retention pruning: verdict null, score kept", () => {
    const out = project(
      detection({ phase: "Completed", score: 72, verdict: null, prunedAt: "2030-02-01T00:00:00Z" }),
    );
    expect(out.status).toBe("COMPLETED");
    expect(out.verdict).toBeNull();
    expect(out.score).toBe(72);
  });

  it("authoritative: score and verdict null, authoritative set, still billable", () => {
    const out = project(
      detection({
        phase: "Completed",
        score: 0,
        authoritative: {
          checkId: "signature.pdf",
          trust: "corroborated",
          directive: "Signed by ACME; unchanged.",
        },
      }),
    );
    expect(out.score).toBeNull();
    expect(out.verdict).toBeNull();
    expect(out.billable).toBe(true);
    expect(out.authoritative).toEqual({
      check_id: "signature.pdf",
      trust: "corroborated",
      directive: "Signed by ACME; unchanged.",
    });
  });

  it("failed: failure code and message, not billable, agent_error shown", () => {
    const out = project(
      detection({
        phase: "Failed",
        failure: { code: "agent_failed", message: FAILURE_MESSAGES.agent_failed },
        agent: { runId: "run-2", error: "The LLM endpoint answered 500 three times." },
      }),
    );
    expect(out).toMatchObject({
      status: "FAILED",
      failure_code: "agent_failed",
      failure_message: FAILURE_MESSAGES.agent_failed,
      billable: false,
      agent_error: "The LLM endpoint answered 500 three times.",
      agent_run_id: "run-2",
      score: null,
    });
  });

  it("failed without a recorded reason still reports one", () => {
    const out = project(detection({ phase: "Failed" }));
    expect(out.failure_code).toBe("internal_error");
    expect(out.failure_message).toBe(FAILURE_MESSAGES.internal_error);
  });

  it("a failure left on a non-failed detection is not shown", () => {
    const out = project(detection({ phase: "Running", failure: { code: "check_failed", message: "x" } }));
    expect(out.failure_code).toBeNull();
    expect(out.failure_message).toBeNull();
  });

  it("sample runs are never billable; batch id is shown", () => {
    expect(project(detection({ phase: "Completed", score: 3, verdict }, { sample: true })).billable).toBe(
      false,
    );
    expect(project(detection(undefined, { batchId: "job-1" })).batch_id).toBe("job-1");
  });
});
