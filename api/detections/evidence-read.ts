import { type Detection, keys } from "../../core/detection.js";
import { buildEvidence, type EvidenceManifest, pagesWithFindings } from "../../core/evidence.js";
import { phaseToApiStatus } from "../../core/phases.js";
import { ObjectNotFoundError } from "../../core/ports.js";
import { EVIDENCE_MANIFEST, readStepResult } from "../../core/step-results.js";
import { readStored } from "../../core/stored.js";
import type { ApiDeps } from "../deps.js";
import type { EvidenceResult } from "./schema.js";

/**
 * What a detection's evidence is, for the evidence endpoint, its page images and the reviewer page:
 * `pending` before it is COMPLETED, `pruned` after the retention period (the files are gone), `missing`
 * when a completed detection has no stored evidence and no check results to build it from, and `ready`
 * with the manifest the check step stored (docs/evidence.md). A detection checked before the check step
 * rendered evidence gets it built from its stored check results, without page images.
 */
export type EvidenceState =
  | { kind: "pending" | "pruned" | "missing" }
  | { kind: "ready"; manifest: EvidenceManifest };

export async function readEvidence(deps: ApiDeps, d: Detection): Promise<EvidenceState> {
  const s = d.status ?? {};
  if (s.phase !== "Completed") return { kind: "pending" };
  if (s.prunedAt) return { kind: "pruned" };
  const id = d.metadata.name;
  const stored = await readStored(deps.objects, deps.bucket, EVIDENCE_MANIFEST, id);
  if (stored.kind === "ok") return { kind: "ready", manifest: stored.value };
  if (stored.kind === "invalid") {
    deps.log.warn(
      { detection: id, key: stored.key, problem: stored.reason },
      "the stored evidence is unreadable; building it again",
    );
  }
  const read = await readStepResult(deps.objects, deps.bucket, id, "check");
  if (read.kind === "invalid") {
    deps.log.warn(
      { detection: id, key: read.key, problem: read.reason },
      "the stored check results are unreadable",
    );
  }
  const result = read.kind === "ok" ? read.value : undefined;
  if (!result) return { kind: "missing" };
  const built = buildEvidence({ detection: id, checks: result.checks });
  return {
    kind: "ready",
    manifest: {
      version: 1,
      detection: id,
      contentType: s.document?.contentType ?? null,
      pageCount: null,
      findingsTotal: built.findingsTotal,
      findings: built.findings,
      groupsTotal: built.groupsTotal,
      groups: built.groups,
      pages: pagesWithFindings(result.checks)
        .map(({ page }) => ({
          number: page,
          width: null,
          height: null,
          rotate: 0,
          geometry: null,
          findingCount: result.checks.reduce(
            (n, c) => n + c.findings.filter((f) => f.page === page).length,
            0,
          ),
          groups: [...new Set(built.groups.filter((g) => g.pages.includes(page)).map((g) => g.number))],
          image: null,
          firstSaved: null,
          notRendered: "unavailable" as const,
        }))
        .sort((a, b) => a.number - b.number),
      checks: built.checks,
      render: null,
    },
  };
}

export interface EvidenceLinks {
  /** URL of a page image (submitted or as first saved). */
  page(page: number, version: "submitted" | "first-saved"): string;
  review?: { url: string; expiresAt: string };
}

/** The evidence as the API answers it (snake_case, URLs added). */
export function projectEvidence(d: Detection, state: EvidenceState, links: EvidenceLinks): EvidenceResult {
  const base = {
    id: d.metadata.name,
    status: phaseToApiStatus(d.status?.phase ?? "Queued"),
    review_url: links.review?.url ?? null,
    review_url_expires_at: links.review?.expiresAt ?? null,
  };
  if (state.kind !== "ready") {
    return {
      ...base,
      findings: null,
      findings_total: null,
      groups: null,
      groups_total: null,
      pages: null,
      checks: null,
      render: null,
    };
  }
  const m = state.manifest;
  return {
    ...base,
    findings: m.findings.map((f) => ({
      id: f.id,
      check_id: f.checkId,
      code: f.code,
      severity: f.severity,
      message: f.message,
      page: f.page,
      bbox: f.bbox,
      bbox_fraction: f.bboxFraction,
      evidence: f.evidence,
      before: f.before,
      after: f.after,
      group: f.group,
    })),
    findings_total: m.findingsTotal,
    groups: m.groups.map((g) => ({
      number: g.number,
      id: g.id,
      headline: g.headline,
      severity: g.severity,
      pages: g.pages,
      regions: g.regions.map((r) => ({ page: r.page, bbox: r.bbox, bbox_fraction: r.bboxFraction })),
      before: g.before,
      after: g.after,
      finding_ids: g.findingIds,
      finding_count: g.findingCount,
      checks: g.checks.map((c) => ({ check_id: c.checkId, code: c.code, severity: c.severity })),
    })),
    groups_total: m.groupsTotal,
    pages: {
      count: m.pageCount,
      items: m.pages.map((p) => ({
        number: p.number,
        width: p.width,
        height: p.height,
        rotate: p.rotate,
        finding_count: p.findingCount,
        groups: p.groups,
        image_url: p.image ? links.page(p.number, "submitted") : null,
        image_width: p.image?.widthPx ?? null,
        image_height: p.image?.heightPx ?? null,
        first_saved_url: p.firstSaved ? links.page(p.number, "first-saved") : null,
        first_saved_revision: p.firstSaved?.revision ?? null,
        not_rendered: p.notRendered,
      })),
    },
    checks: m.checks.map((c) => ({
      check_id: c.checkId,
      outcome: c.outcome,
      severity: c.severity,
      summary: c.summary,
      finding_count: c.findingCount,
    })),
    render: m.render
      ? {
          dpi: m.render.dpi,
          max_side_px: m.render.maxSidePx,
          max_images: m.render.maxImages,
          max_bytes: m.render.maxBytes,
          images: m.render.images,
          bytes: m.render.bytes,
          notes: m.render.notes,
        }
      : null,
  };
}

/**
 * The stored PNG of a page image, or undefined when the detection has none: not COMPLETED, pruned, or the
 * page was not rendered. Read at its key straight away (no need to read the manifest for it).
 */
export async function readPageImage(
  deps: ApiDeps,
  d: Detection,
  page: number,
  version: "submitted" | "first-saved",
): Promise<Buffer | undefined> {
  const s = d.status ?? {};
  if (s.phase !== "Completed" || s.prunedAt) return undefined;
  try {
    return await deps.objects.get(deps.bucket, keys.evidencePage(d.metadata.name, page, version));
  } catch (err) {
    if (err instanceof ObjectNotFoundError) return undefined;
    throw err;
  }
}
