import { type OpenAPIHono, createRoute } from "@hono/zod-openapi";
import { SCOPES } from "../../core/scopes.js";
import { requireScopes } from "../auth/middleware.js";
import type { AppEnv } from "../deps.js";
import { reviewToken, reviewUrl } from "../review/signing.js";
import { bearer, bearerErrors, errorJson, jsonResponse, validationJson } from "../schema.js";
import { findVisibleDetection } from "./access.js";
import { projectEvidence, readEvidence } from "./evidence-read.js";
import { DETECTION_ID_422, DetectionIdParams, EvidenceResult } from "./schema.js";

export const getEvidenceRoute = createRoute({
  method: "get",
  path: "/v1/detection/{detection_id}/evidence",
  tags: ["detections"],
  summary: "Read a detection's evidence: findings as data, groups, page images and a reviewer link",
  description:
    "For a COMPLETED detection: every finding with a stable id, its place on the page (in page units and as " +
    "fractions of the page, origin top left) and its changed value; the findings merged into numbered " +
    "groups with a one-line headline; the pages that carry findings with URLs of their rendered images " +
    "(boxes drawn and numbered by group; pages an incremental update changed also as first saved); and " +
    "`review_url`, a short-lived link to a self-contained reviewer page. Before completion, and after the " +
    "retention period, `findings`, `groups` and `pages` are null (like `verdict`). Same scope, 404 rules and " +
    "client isolation as GET /v1/detection/{detection_id}. The answer is bounded (docs/evidence.md).",
  operationId: "getDetectionEvidence",
  security: bearer(SCOPES.get),
  middleware: [requireScopes([SCOPES.get])] as const,
  request: { params: DetectionIdParams },
  responses: {
    200: jsonResponse(
      EvidenceResult,
      "The detection's evidence (nulls before completion and after retention)",
    ),
    ...bearerErrors(SCOPES.get),
    404: errorJson("No such detection (or another client's, or one being deleted)", ["Detection not found"]),
    422: validationJson("The detection id is malformed", [DETECTION_ID_422]),
  },
});

export function registerGetEvidence(app: OpenAPIHono<AppEnv>): void {
  app.openapi(getEvidenceRoute, async (c) => {
    const { detection_id } = c.req.valid("param");
    const deps = c.var.deps;
    const d = await findVisibleDetection(deps, c.var.principal, detection_id);
    const state = await readEvidence(deps, d);
    const base = deps.publicUrl.replace(/\/+$/, "");
    const id = encodeURIComponent(d.metadata.name);
    let review: { url: string; expiresAt: string } | undefined;
    if (d.status?.phase === "Completed") {
      const expires = Math.floor(deps.clock.now().getTime() / 1000) + deps.config.reviewLinkTtlSeconds;
      const token = reviewToken(d.metadata.name, d.spec.submittedBy, expires, deps.tokens.hmac);
      review = {
        url: reviewUrl(base, d.metadata.name, token),
        expiresAt: new Date(expires * 1000).toISOString(),
      };
    }
    const body = projectEvidence(d, state, {
      page: (n, version) =>
        `${base}/v1/detection/${id}/evidence/pages/${n}${version === "first-saved" ? "-first-saved" : ""}.png`,
      ...(review ? { review } : {}),
    });
    c.header("Cache-Control", "private, no-store");
    return c.json(EvidenceResult.parse(body), 200);
  });
}
