/**
 * The tenant-policy scenarios both runtimes' e2e suites run (issue 26, docs/tuning.md): the calibration
 * history (documents, labels, the over-eager policy) and the assertions on the calibration report and on the
 * policy dry run. e2e/standalone-calibration.test.ts, e2e/standalone-policy-dryrun.test.ts and
 * e2e/cluster/policy.test.ts share them, so both runtimes are held to the same expectations.
 */
import { expect } from "vitest";
import { FIXTURE_DOC_TYPES, makeDocument, makeMetadataTamperedPdf } from "../fixtures/documents.js";

/** Makes re-saved genuine documents decide alone: false positives the calibration report should undo. */
export const EAGER = {
  name: "eager",
  version: 1,
  severity: [
    { check: "metadata.dates", code: "long_modification_gap", severity: 8, decidesAlone: true },
    { check: "metadata.dates", code: "modified_before_created", severity: 8, decidesAlone: true },
  ],
};

/**
 * The tenant's history: genuine documents, genuine documents its issuers re-saved months later (a long
 * modification gap, which the eager policy makes decide alone: false positives), and two kinds of metadata
 * tampering (backdated, and re-produced by an editor that left the old XMP: confirmed fraud).
 */
export type Kind = "genuine" | "resaved" | "backdated" | "reproduced";
const KINDS: Kind[] = ["genuine", "resaved", "backdated", "reproduced"];
export const labelOf = (k: Kind) => (k === "genuine" || k === "resaved" ? "genuine" : "confirmed_fraud");
const types = FIXTURE_DOC_TYPES.filter((t) => t !== "id_document");

async function documentOf(kind: Kind, seed: number, docType: (typeof types)[number]) {
  switch (kind) {
    case "genuine":
      return makeDocument({ seed, docType, region: "GB" });
    case "resaved":
      return makeMetadataTamperedPdf(seed, "late_modification", { docType });
    case "backdated":
      return makeMetadataTamperedPdf(seed, "modified_before_created", { docType });
    case "reproduced":
      return makeMetadataTamperedPdf(seed, "info_xmp_mismatch", { docType });
  }
}

export interface LabelledDoc {
  path: string;
  docType: string;
  kind: Kind;
}

/** The 40 history and 40 further documents (seeded), and the bodies to serve them from, by path. */
export async function calibrationDocuments(): Promise<{
  sets: Record<"history" | "further", LabelledDoc[]>;
  served: Record<string, Uint8Array>;
}> {
  const sets: Record<"history" | "further", LabelledDoc[]> = { history: [], further: [] };
  const served: Record<string, Uint8Array> = {};
  for (const [set, base] of [
    ["history", 2800],
    ["further", 2900],
  ] as const) {
    for (let i = 0; i < 40; i++) {
      const kind = KINDS[i % 4]!;
      const docType = types[Math.floor(i / 4) % types.length]!;
      const p = `/${set}-${i}.pdf`;
      served[p] = await documentOf(kind, base + i, docType);
      sets[set].push({ path: p, docType, kind });
    }
  }
  return { sets, served };
}

// biome-ignore lint/suspicious/noExplicitAny: the report as `docverify calibration-report --json` prints it
export type CalibrationReport = any;

/** What the report on the 40-document history must say: eager's false positives, a lower proposal for the gap. */
export function expectCalibrationReport(report: CalibrationReport): void {
  const seen = JSON.stringify({
    codes: report.codes,
    current: report.current,
    proposal: report.proposal,
    expected: report.expected,
  });
  expect(report.labelled).toEqual({ genuine: 20, fraud: 20 });
  expect(report.policy).toEqual({ name: "eager", version: 1 });
  // The eager policy makes re-saved genuine documents decide alone: false positives now.
  expect(report.current.falsePositives, seen).toBeGreaterThan(0);
  const gap = report.codes.find(
    (c: { check: string; code: string }) =>
      c.check === "metadata.dates" && c.code === "long_modification_gap",
  );
  expect(gap, seen).toMatchObject({ firedGenuine: 10, eligible: true });
  const proposed = report.proposal.severity.find((o: { code: string }) => o.code === "long_modification_gap");
  expect(proposed?.severity, seen).toBeLessThan(8);
  expect(report.expected.fpr).toBeLessThan(report.current.falsePositives / report.current.genuine);
}

/** EAGER with the report's proposed overrides in place of its own, as `version`. */
export function proposedPolicy(report: CalibrationReport, version: number) {
  const replaced = new Set(
    report.proposal.severity.map((o: { check: string; code: string }) => `${o.check} ${o.code}`),
  );
  return {
    ...EAGER,
    version,
    severity: [
      ...EAGER.severity.filter((o) => !replaced.has(`${o.check} ${o.code}`)),
      ...report.proposal.severity,
    ],
  };
}

/**
 * The FPR and detection rate observed on the further labelled detections lie within the report's
 * cross-validated intervals; prints the figures (`runtime` names the suite).
 */
export function expectWithinIntervals(
  runtime: string,
  report: CalibrationReport,
  further: { score: number; label: string }[],
): void {
  const [lo, hi] = report.expected.fprInterval as [number, number];
  const [dlo, dhi] = report.expected.detectionInterval as [number, number];
  const genuine = further.filter((f) => f.label === "genuine");
  const fraud = further.filter((f) => f.label === "confirmed_fraud");
  const fpr = genuine.filter((f) => f.score >= 50).length / genuine.length;
  const detection = fraud.filter((f) => f.score >= 50).length / fraud.length;
  process.stdout.write(
    `calibration e2e (${runtime}): current FPR ${report.current.falsePositives}/${report.current.genuine}; predicted FPR ${report.expected.fpr} [${lo}, ${hi}], observed ${fpr}; predicted detection ${report.expected.detection} [${dlo}, ${dhi}], observed ${detection}\n`,
  );
  expect(fpr).toBeGreaterThanOrEqual(lo);
  expect(fpr).toBeLessThanOrEqual(hi);
  expect(detection).toBeGreaterThanOrEqual(dlo);
  expect(detection).toBeLessThanOrEqual(dhi);
}

export interface DryRunOutput {
  rows: { id: string; oldScore: number; newScore: number; crossed: string | null; note?: string }[];
  summary: { total: number; rescored: number; crossedUp: number; crossedDown: number; changed: number };
}

/**
 * The dry run (`docverify policy dry-run --json`) over `before` (the client's last detections, oldest
 * first, with their recorded scores) re-scored every one and changed some; returns its predicted scores in
 * the order of `before`, to compare with re-scoring the same documents for real.
 */
export function expectDryRun(dry: DryRunOutput, before: { id: string; score: number | null }[]): number[] {
  expect(dry.summary.total).toBe(before.length);
  expect(dry.summary.rescored).toBe(before.length);
  expect(dry.summary.changed).toBeGreaterThan(0);
  const byId = new Map(dry.rows.map((r) => [r.id, r]));
  for (const b of before) expect(byId.get(b.id)?.oldScore, b.id).toBe(b.score);
  return before.map((b) => byId.get(b.id)?.newScore as number);
}
