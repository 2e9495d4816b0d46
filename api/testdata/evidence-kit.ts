import sharp from "sharp";
import type { CheckResult } from "../../core/check-result.js";
import { type Detection, keys } from "../../core/detection.js";
import { buildEvidence, type EvidenceManifest, pagesWithFindings } from "../../core/evidence.js";
import type { PageGeometry } from "../../core/page-geometry.js";
import { call, type Harness } from "./app-kit.js";

/**
 * Detections with evidence for the API's tests: a detection created through the API, moved to COMPLETED
 * as the operator would, with an evidence manifest and page images stored where the check step stores them.
 */

/** Findings of two checks on one statement page: a covered and replaced value, and the sums it broke. */
export function sampleChecks(hostile = "£5,018.52"): CheckResult[] {
  return [
    {
      checkId: "layout.overlay",
      outcome: "flag",
      severity: 9,
      summary: "A white box hides a value and another is printed over it.",
      findings: [
        {
          code: "text_covered_and_replaced",
          message: `On page 1, a white box is drawn over "£4,018.52" and "${hostile}" is printed on top of it.`,
          page: 1,
          bbox: [480, 400, 540, 412],
          evidence: { hidden: ["£4,018.52"], shown: [hostile] },
          severity: 9,
        },
      ],
    },
    {
      checkId: "text.arithmetic",
      outcome: "flag",
      severity: 9,
      summary: "The closing balance does not follow from the transactions.",
      findings: [
        {
          code: "closing_balance_mismatch",
          message: "On page 1, the closing balance is £5,018.52, but the last transaction leaves £4,018.52.",
          page: 1,
          bbox: [482, 401, 539, 411],
          evidence: { printed: hostile, expected: "£4,018.52" },
          severity: 9,
        },
      ],
    },
    { checkId: "file.type", outcome: "pass", severity: 0, summary: "Name and content agree.", findings: [] },
  ];
}

export const LETTER: PageGeometry = { number: 1, view: [0, 0, 612, 792], rotate: 0, units: "pt" };

/** A white PNG of the given size. */
export const whitePng = (width = 85, height = 110) =>
  sharp({ create: { width, height, channels: 3, background: "#ffffff" } })
    .png()
    .toBuffer();

/** Stores the evidence of `checks` with images of `imaged`, then moves the detection to COMPLETED (score 88). */
export async function completeWithEvidence(
  h: Harness,
  id: string,
  checks: CheckResult[] = sampleChecks(),
  opts: {
    imaged?: number[];
    firstSaved?: number[];
    manifest?: (m: EvidenceManifest) => EvidenceManifest;
  } = {},
): Promise<EvidenceManifest> {
  const pages = pagesWithFindings(checks).map((p) => p.page);
  const geometry = new Map(pages.map((n) => [n, { ...LETTER, number: n }]));
  const built = buildEvidence({ detection: id, checks, geometry });
  const imaged = new Set(opts.imaged ?? pages);
  const firstSaved = new Set(opts.firstSaved ?? []);
  const png = await whitePng();
  for (const n of imaged) await h.deps.objects.put(h.deps.bucket, keys.evidencePage(id, n), png);
  for (const n of firstSaved)
    await h.deps.objects.put(h.deps.bucket, keys.evidencePage(id, n, "first-saved"), png);
  let manifest: EvidenceManifest = {
    version: 1,
    detection: id,
    contentType: "application/pdf",
    pageCount: 3,
    findingsTotal: built.findingsTotal,
    findings: built.findings,
    groupsTotal: built.groupsTotal,
    groups: built.groups,
    pages: pages.map((n) => ({
      number: n,
      width: 612,
      height: 792,
      rotate: 0,
      geometry: geometry.get(n) ?? null,
      findingCount: checks.reduce((k, c) => k + c.findings.filter((f) => f.page === n).length, 0),
      groups: [...new Set((built.marks.get(n) ?? []).map((m) => m.group))],
      image: imaged.has(n)
        ? { key: keys.evidencePage(id, n), widthPx: 85, heightPx: 110, bytes: png.length }
        : null,
      firstSaved: firstSaved.has(n)
        ? {
            key: keys.evidencePage(id, n, "first-saved"),
            widthPx: 85,
            heightPx: 110,
            bytes: png.length,
            revision: 1,
          }
        : null,
      notRendered: imaged.has(n) ? null : "page_cap",
    })),
    checks: built.checks,
    render: {
      dpi: 110,
      maxSidePx: 2000,
      maxImages: 20,
      maxBytes: 16 << 20,
      images: imaged.size,
      bytes: 0,
      ms: 5,
      notes: [],
    },
  };
  if (opts.manifest) manifest = opts.manifest(manifest);
  await h.deps.objects.put(h.deps.bucket, keys.evidence(id), JSON.stringify(manifest));
  // Completed last, as in the service: the check step stored the evidence before the agent ran.
  const stored = (await h.store.get(id)) as Detection;
  await h.store.updateStatus({
    ...stored,
    status: {
      ...stored.status,
      phase: "Completed",
      score: 88,
      completedAt: h.clock.now().toISOString(),
      document: {
        filename: "statement.pdf",
        contentType: "application/pdf",
        sizeBytes: 1000,
        key: keys.document(id, "statement.pdf"),
        sha256: "0",
      },
      verdict: {
        fraudScore: 88,
        documentTypeMatch: true,
        actualDocType: "bank_statement",
        reasoning: "High risk (score 88/100): 2 checks flagged 2 findings.",
        perCheck: checks.map((c) => ({
          checkId: c.checkId,
          importance: c.outcome === "flag" ? 9 : 0,
          reasoning: c.summary,
        })),
      },
    },
  });
  return manifest;
}

/** Creates a detection for `client` through the API (source_url) and returns its id. */
export async function createDetection(h: Harness, token: string): Promise<string> {
  const r = await call(h, "POST", "/v1/detection", {
    token,
    body: { source_url: "https://example.com/statement.pdf", doc_type: "bank_statement", region: "GB" },
  });
  if (r.status !== 202) throw new Error(`create: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body.id as string;
}
