import { z } from "zod";
import type { CheckResult } from "./check-result.js";
import type { Detection } from "./detection.js";
import { type ApiStatus, phaseToApiStatus } from "./phases.js";
import { scoreBandOf } from "./verdict.js";

/**
 * The signed attestation of a completed detection (issue 26, scope 3; docs/decisions.md, "Signed
 * attestations"): what the service found in which document, with which checks, under which policy. The
 * payload is built from stored facts only (the status and the stored check results, never the clock), so
 * signing it twice gives the same payload; with Ed25519 (deterministic signatures) the same compact JWS.
 */

/** The JWS algorithm of attestations: EdDSA over Ed25519 (RFC 8037). */
export const ATTESTATION_ALG = "EdDSA";
/** The JWS `typ` header of an attestation. */
export const ATTESTATION_TYP = "docverify-attestation+jwt";
/** The payload's format version; a new field that changes a verifier's reading bumps it. */
export const ATTESTATION_FORMAT = 1;

const Sha256Hex = z.string().regex(/^[0-9a-f]{64}$/);

export const AttestedFinding = z.object({
  check_id: z.string(),
  code: z.string(),
  severity: z.number().int().min(0).max(10).nullable(),
  page: z.number().int().positive().nullable(),
  bbox: z.array(z.number()).length(4).nullable(),
});
export type AttestedFinding = z.infer<typeof AttestedFinding>;

export const AttestationPayload = z.object({
  format: z.literal(ATTESTATION_FORMAT),
  detection_id: z.string(),
  client_id: z.string(),
  document_sha256: Sha256Hex,
  document_size: z.number().int().nonnegative(),
  content_type: z.string(),
  doc_type: z.string(),
  region: z.string(),
  service: z.object({ name: z.literal("docverify"), version: z.string() }),
  checks: z.array(
    z.object({
      id: z.string(),
      /** The check's version (checks/check.ts, `checkVersion`); null on results stored before versions. */
      version: z.string().nullable(),
      outcome: z.string(),
      severity: z.number().int().min(0).max(10),
    }),
  ),
  findings: z.array(AttestedFinding),
  policy: z.object({ name: z.string(), version: z.number().int() }).nullable(),
  verdict: z.object({
    fraud_score: z.number().int().min(0).max(100),
    risk_level: z.enum(["low", "moderate", "high"]),
    document_type_match: z.boolean(),
    actual_doc_type: z.string().nullable(),
  }),
  completed_at: z.string(),
});
export type AttestationPayload = z.infer<typeof AttestationPayload>;

/** Why a detection cannot be attested (yet, or any more). */
export type AttestationRefusal =
  | { kind: "not_completed"; status: ApiStatus }
  | { kind: "unavailable"; reason: string };

/** The findings of check results, in the order the check step stored them. */
export function attestedFindings(checks: readonly CheckResult[]): AttestedFinding[] {
  return checks.flatMap((c) =>
    c.findings.map((f) => ({
      check_id: c.checkId,
      code: f.code,
      severity: f.severity ?? null,
      page: f.page ?? null,
      bbox: f.bbox ?? null,
    })),
  );
}

/**
 * The payload of a detection's attestation, or why there is none: a detection that is not COMPLETED is
 * refused (`not_completed`), one whose verdict or check results are gone (retention) is `unavailable`.
 */
export function buildAttestationPayload(
  d: Detection,
  checks: readonly CheckResult[] | undefined,
  serviceVersion: string,
): { ok: AttestationPayload } | { refused: AttestationRefusal } {
  const s = d.status ?? {};
  if (s.phase !== "Completed") {
    return { refused: { kind: "not_completed", status: phaseToApiStatus(s.phase) } };
  }
  if (s.prunedAt || !s.verdict) {
    return { refused: { kind: "unavailable", reason: "its verdict was removed after the retention period" } };
  }
  if (!checks) {
    return { refused: { kind: "unavailable", reason: "its check results are no longer stored" } };
  }
  const doc = s.document;
  if (!doc || !/^[0-9a-f]{64}$/.test(doc.sha256)) {
    return { refused: { kind: "unavailable", reason: "its document's SHA-256 was not recorded" } };
  }
  const v = s.verdict;
  const payload: AttestationPayload = {
    format: ATTESTATION_FORMAT,
    detection_id: d.metadata.name,
    client_id: d.spec.submittedBy,
    document_sha256: doc.sha256,
    document_size: doc.sizeBytes,
    content_type: doc.contentType,
    doc_type: d.spec.docType,
    region: d.spec.region,
    service: { name: "docverify", version: serviceVersion },
    checks: checks.map((c) => ({
      id: c.checkId,
      version: c.version ?? null,
      outcome: c.outcome,
      severity: c.severity,
    })),
    findings: attestedFindings(checks),
    policy: v.policy ? { name: v.policy.name, version: v.policy.version } : null,
    verdict: {
      fraud_score: v.fraudScore,
      risk_level: scoreBandOf(v.fraudScore),
      document_type_match: v.documentTypeMatch,
      actual_doc_type: v.actualDocType,
    },
    completed_at: s.completedAt ?? "",
  };
  return { ok: AttestationPayload.parse(payload) };
}

/** The members of a JWK that are private (RFC 7517/7518/8037): none of them is ever published. */
export const PRIVATE_JWK_MEMBERS = ["d", "p", "q", "dp", "dq", "qi", "oth", "k"] as const;

/** A JWK without its private members. */
export function publicJwkOf<T extends Record<string, unknown>>(jwk: T): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(jwk)) {
    if (!(PRIVATE_JWK_MEMBERS as readonly string[]).includes(k)) out[k] = v;
  }
  return out;
}
