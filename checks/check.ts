import type { CheckOutcome, CheckResult, Finding, Trust } from "../core/check-result.js";
import type { DocumentModel } from "../document/model.js";

/**
 * The contract between the check step and every check: the document is parsed once per check step
 * into a DocumentModel (document/), then each applicable Check reads it. Checks are pure with respect to
 * the outside world (no network, no object store, no clock but ctx.now).
 *
 * A check is written with defineCheck(): `inspect` is a function from the document model to findings
 * (or a skip), `summary` says in one sentence what the judged findings mean. Turning that into a
 * CheckResult — the skip and error shapes, the outcome and severity from the findings (judge), which
 * optional parts appear — is written once, here.
 */

export interface CheckContext {
  now: Date;
  /** Aborted when the check's time bound is reached. */
  signal?: AbortSignal;
  /** PEM bundle of trust anchors for signature.pdf (DOCVERIFY_TRUST_ANCHORS), read once by the runner. */
  trustAnchorsPem?: string;
  /** Why DOCVERIFY_TRUST_ANCHORS could not be read, when it is set but unreadable. */
  trustAnchorsError?: string;
}

/** What the check step runs. */
export interface Check {
  /** Stable id, e.g. `metadata.dates`. */
  id: string;
  appliesTo(doc: DocumentModel): boolean;
  run(doc: DocumentModel, ctx: CheckContext): Promise<CheckResult>;
}

/** Outcome and overall severity from findings: flag when any finding reaches `flagAt`. */
export function judge(
  findings: readonly Finding[],
  flagAt = 2,
): { outcome: "pass" | "flag"; severity: number } {
  const sev = findings.map((f) => f.severity ?? 0).sort((a, b) => b - a);
  const top = sev[0] ?? 0;
  if (top < flagAt) return { outcome: "pass", severity: 0 };
  // Several independent strong findings reinforce each other a little.
  const others = sev.slice(1).filter((s) => s >= 4).length;
  return { outcome: "flag", severity: Math.min(10, top + Math.min(2, others)) };
}

/** What a check found in a document it could read. */
export interface Inspection {
  findings: Finding[];
  /** Facts for DetectionDetail.discovered (e.g. `qr_present`). */
  discovered?: string[];
  /** Only signature.pdf: the check decides the detection alone. */
  authoritative?: { trust: Trust; directive: string };
}

/** The document offers nothing this check can judge: outcome `skip`, with the reason as the summary. */
export interface Skipped {
  skipped: string;
  findings: Finding[];
}

/** The check could not read what it needs (outcome `error`): no evidence either way. */
export interface Unreadable {
  unreadable: string;
}

export function skip(summary: string, findings: Finding[] = []): Skipped {
  return { skipped: summary, findings };
}

export function unreadable(summary: string): Unreadable {
  return { unreadable: summary };
}

/** An inspection with its judged outcome and severity, as the summary sees it. */
export type Judged<R extends Inspection> = R & { outcome: "pass" | "flag"; severity: number };

export interface CheckDefinition<R extends Inspection> {
  id: string;
  appliesTo(doc: DocumentModel): boolean;
  /** Reads the document model (and nothing else) into findings, or says why it skips. */
  inspect(
    doc: DocumentModel,
    ctx: CheckContext,
  ): R | Skipped | Unreadable | Promise<R | Skipped | Unreadable>;
  /** Outcome and severity from the inspection; default judge(findings). */
  judge?(inspection: R): { outcome: "pass" | "flag"; severity: number };
  /** One sentence a reviewer reads: what the judged findings mean for this document. */
  summary(judged: Judged<R>, doc: DocumentModel): string;
}

export function defineCheck<R extends Inspection>(def: CheckDefinition<R>): Check {
  return {
    id: def.id,
    appliesTo: (doc) => def.appliesTo(doc),
    async run(doc, ctx): Promise<CheckResult> {
      const inspection = await def.inspect(doc, ctx);
      if ("skipped" in inspection) return result(def.id, "skip", 0, inspection.skipped, inspection.findings);
      if ("unreadable" in inspection) return result(def.id, "error", 0, inspection.unreadable, []);
      const { outcome, severity } = def.judge ? def.judge(inspection) : judge(inspection.findings);
      const summary = def.summary({ ...inspection, outcome, severity }, doc);
      return {
        ...result(def.id, outcome, severity, summary, inspection.findings),
        ...(inspection.discovered?.length ? { discovered: inspection.discovered } : {}),
        ...(inspection.authoritative ? { authoritative: inspection.authoritative } : {}),
      };
    },
  };
}

function result(
  checkId: string,
  outcome: CheckOutcome,
  severity: number,
  summary: string,
  findings: Finding[],
): CheckResult {
  return { checkId, outcome, severity, summary, findings };
}

/** The codes of the findings that count (severity ≥ 2), each once, for a summary. */
export function flaggedCodes(findings: readonly Finding[], opts: { withPage?: boolean } = {}): string[] {
  return [
    ...new Set(
      findings
        .filter((f) => (f.severity ?? 0) >= 2)
        .map((f) => (opts.withPage ? `${f.code} on page ${f.page}` : f.code)),
    ),
  ];
}
