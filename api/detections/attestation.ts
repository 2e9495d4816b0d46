import { createRoute, type OpenAPIHono, z } from "@hono/zod-openapi";
import { buildAttestationPayload } from "../../core/attestation.js";
import { SCOPES } from "../../core/scopes.js";
import { readStepResult } from "../../core/step-results.js";
import { requireScopes } from "../auth/middleware.js";
import type { AppEnv } from "../deps.js";
import { ApiError } from "../errors.js";
import { bearer, bearerErrors, errorJson, jsonResponse, validationJson } from "../schema.js";
import { findVisibleDetection } from "./access.js";
import { DETECTION_ID_422, DetectionIdParams } from "./schema.js";

export const Attestation = z
  .object({
    attestation: z.string().openapi({
      description:
        "A compact JWS (RFC 7515), alg EdDSA (Ed25519), `kid` in its protected header naming a key of " +
        "GET /.well-known/jwks.json. Its payload (JSON): format, detection_id, client_id, document_sha256 " +
        "(64 lowercase hex of the submitted bytes), document_size, content_type, doc_type, region, service " +
        "{name, version}, checks [{id, version, outcome, severity}], findings [{check_id, code, severity, page, " +
        "bbox}], policy {name, version} or null, verdict {fraud_score, risk_level, document_type_match, " +
        "actual_doc_type}, completed_at. Signed with the same key, the same detection always gives the same JWS.",
      example: "eyJhbGciOiJFZERTQSIsImtpZCI6Ii4uLiJ9.eyJmb3JtYXQiOjEsLi4ufQ.c2lnbmF0dXJl",
    }),
  })
  .openapi("Attestation");

/** The 409 of a detection that is not COMPLETED (yet, or ever: FAILED). */
export const notAttestable = (id: string, status: string) =>
  new ApiError(
    409,
    "attestation_not_ready",
    status === "FAILED"
      ? `Detection ${id} is FAILED: it has no result to attest.`
      : `Detection ${id} is ${status}: an attestation is available once it is COMPLETED.`,
  );

/** The 410 of a completed detection whose results are gone (retention). */
export const attestationGone = (id: string, reason: string) =>
  new ApiError(410, "attestation_unavailable", `Detection ${id} can no longer be attested: ${reason}.`);

export const getAttestationRoute = createRoute({
  method: "get",
  path: "/v1/detection/{detection_id}/attestation",
  tags: ["detections"],
  summary: "A signed attestation of a completed detection",
  description:
    "A JWS, signed with the deployment's attestation key, over the document's SHA-256, the service version, " +
    "each check's id and version, the findings, the policy and the verdict. Verify it with the keys of " +
    "GET /.well-known/jwks.json (or `docverify verify FILE ATTESTATION --jwks URL`). Another client's " +
    "detection answers 404, like GET /v1/detection/{detection_id}; one not yet COMPLETED (or FAILED) 409.",
  operationId: "getAttestation",
  security: bearer(SCOPES.get),
  middleware: [requireScopes([SCOPES.get])] as const,
  request: { params: DetectionIdParams },
  responses: {
    200: jsonResponse(Attestation, "The attestation"),
    ...bearerErrors(SCOPES.get),
    503: errorJson("The service's storage is unavailable, or the deployment has no attestation signing key", [
      "The service's storage is unavailable; retry in a few seconds.",
      "This deployment has no attestation signing key (DOCVERIFY_ATTESTATION_KEY_FILE); ask its operators to configure one.",
    ]),
    404: errorJson("No such detection (or another client's, or one being deleted)", ["Detection not found"]),
    409: errorJson("The detection is not COMPLETED: QUEUED or RUNNING (poll it), or FAILED", [
      "Detection det-01jd5x9q3m8w2v7k4c6b0n1r2t is QUEUED: an attestation is available once it is COMPLETED.",
      "Detection det-01jd5x9q3m8w2v7k4c6b0n1r2t is RUNNING: an attestation is available once it is COMPLETED.",
      "Detection det-01jd5x9q3m8w2v7k4c6b0n1r2t is FAILED: it has no result to attest.",
    ]),
    410: errorJson("The detection's verdict or check results were removed after the retention period", [
      "Detection det-01jd5x9q3m8w2v7k4c6b0n1r2t can no longer be attested: its verdict was removed after the retention period.",
      "Detection det-01jd5x9q3m8w2v7k4c6b0n1r2t can no longer be attested: its check results are no longer stored.",
    ]),
    422: validationJson("The detection id is malformed", [DETECTION_ID_422]),
  },
});

export function registerGetAttestation(app: OpenAPIHono<AppEnv>): void {
  app.openapi(getAttestationRoute, async (c) => {
    const { detection_id } = c.req.valid("param");
    const deps = c.var.deps;
    const d = await findVisibleDetection(deps, c.var.principal, detection_id);
    let checks: Parameters<typeof buildAttestationPayload>[1];
    if (d.status?.phase === "Completed" && !d.status.prunedAt) {
      const read = await readStepResult(deps.objects, deps.bucket, detection_id, "check");
      if (read.kind === "invalid") {
        deps.log.warn(
          { detection: detection_id, key: read.key, problem: read.reason },
          "the stored check results are unreadable; the detection cannot be attested",
        );
      }
      checks = read.kind === "ok" ? read.value.checks : undefined;
    }
    if (!deps.attestation) {
      throw new ApiError(
        503,
        "attestations_not_configured",
        "This deployment has no attestation signing key (DOCVERIFY_ATTESTATION_KEY_FILE); ask its operators to configure one.",
      );
    }
    const built = buildAttestationPayload(d, checks, deps.attestation.serviceVersion);
    if ("refused" in built) {
      const r = built.refused;
      throw r.kind === "not_completed"
        ? notAttestable(detection_id, r.status)
        : attestationGone(detection_id, r.reason);
    }
    const attestation = await deps.attestation.sign(built.ok);
    c.header("Cache-Control", "private, no-store");
    return c.json({ attestation }, 200);
  });
}
