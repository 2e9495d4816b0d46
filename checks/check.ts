import { createHash } from "node:crypto";
import type { CheckOutcome, CheckResult, Finding, Trust } from "../core/check-result.js";
import { type CodeTable, codeTableProblems, maxSeverityOf } from "../core/finding-levels.js";
import type { DocumentModel } from "../document/model.js";
import type { HistoryInput } from "./history-matches/gather.js";

/**
 * The contract between the check step and every check: the document is parsed once per check step
 * into a DocumentModel (document/), then each applicable Check reads it. Checks are pure with respect to
 * the outside world (no network, no object store, no clock but ctx.now).
 *
 * A check is written with defineCheck(): `codes` declares every finding code it reports (its highest level,
 * its kind of evidence, one line of what it means: core/finding-levels.ts), `inspect` is a function from the
 * document model to findings (or a skip), `summary` says in one sentence what the judged findings mean.
 * Turning that into a CheckResult — the skip and error shapes, each finding capped at its code's level and
 * stamped with its kind, the outcome and severity from the findings (judge), which optional parts appear —
 * is written once, here. How suspicious the document is, is not decided here: the agent's score
 * (agent/score.ts) weighs every check's findings together.
 */

export interface CheckContext {
  now: Date;
  /** Aborted when the check's time bound is reached. */
  signal?: AbortSignal;
  /** PEM bundle of trust anchors for signature.pdf (DOCVERIFY_TRUST_ANCHORS), read once by the runner. */
  trustAnchorsPem?: string;
  /** Why DOCVERIFY_TRUST_ANCHORS could not be read, when it is set but unreadable. */
  trustAnchorsError?: string;
  /** The tenant memory's inputs, gathered once by the check step (absent when the memory is off). */
  history?: HistoryInput;
}

/** What the check step runs. */
export interface Check {
  /** Stable id, e.g. `metadata.dates`. */
  id: string;
  /** Every finding code the check reports, with its level, kind and meaning. */
  codes: CodeTable;
  /** The check's version (checkVersion), recorded on its results and signed in attestations. */
  version?: string;
  appliesTo(doc: DocumentModel): boolean;
  run(doc: DocumentModel, ctx: CheckContext): Promise<CheckResult>;
  /**
   * The check reads only the page pixels, never the text (OCR'd or not), and its `appliesTo` does not depend
   * on the text: the check step runs it while tesseract reads, instead of after the OCR (checks/step.ts).
   */
  pixelsOnly?: boolean;
  /**
   * Work the check can do before the OCR's text exists (its pixels: decoding QR codes), started by the check
   * step while tesseract reads when `appliesTo` already holds; `run` uses what it left (memoised on the
   * model) and does the work itself when it was not prepared. Never throws; aborted with `signal`.
   */
  prepare?(doc: DocumentModel, signal?: AbortSignal): Promise<void>;
}

/**
 * Outcome and overall severity from findings: flag when any finding reaches `flagAt`; the check's severity
 * is its strongest finding's. Findings are not added up here: whether several of them, or findings of
 * several checks, make a document suspicious is the score's decision (agent/score.ts, corroboration).
 */
export function judge(
  findings: readonly Finding[],
  flagAt = 2,
): { outcome: "pass" | "flag"; severity: number } {
  const top = findings.reduce((max, f) => Math.max(max, f.severity ?? 0), 0);
  if (top < flagAt) return { outcome: "pass", severity: 0 };
  return { outcome: "flag", severity: Math.min(10, top) };
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
  /**
   * Every finding code the check reports (like ESLint's `meta.messages`): the highest level, the kind of
   * evidence, one line of meaning. A finding whose code is not declared is a bug: the check's outcome is then
   * `error` and the summary names the code.
   */
  codes: CodeTable;
  /**
   * The check's own version number (default 1): raise it when what the check finds changes without its
   * code table changing (a new threshold, a fixed reading), so attestations tell the two checks apart.
   */
  version?: number;
  appliesTo(doc: DocumentModel): boolean;
  /** Check.pixelsOnly: the check reads the page pixels only, so it may run while the OCR reads. */
  pixelsOnly?: boolean;
  /** Check.prepare: the part of the work that needs no text, started while the OCR reads. */
  prepare?(doc: DocumentModel, signal?: AbortSignal): Promise<void>;
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

/**
 * A finding as the check step stores it: severity capped at its code's level, its kind stamped. Throws for a
 * code the check did not declare.
 */
export function stamp(checkId: string, codes: CodeTable, f: Finding): Finding {
  const meta = codes[f.code];
  if (!meta) throw new UndeclaredCodeError(checkId, f.code);
  const severity = f.severity === undefined ? undefined : Math.min(f.severity, maxSeverityOf(meta));
  return { ...f, ...(severity === undefined ? {} : { severity }), kind: meta.kind };
}

export class UndeclaredCodeError extends Error {
  constructor(
    readonly checkId: string,
    readonly code: string,
  ) {
    super(`${checkId} reported the finding code "${code}", which its code table does not declare`);
    this.name = "UndeclaredCodeError";
  }
}

/**
 * A check's version: its own version number, then the first 12 hex digits of the SHA-256 of its code table
 * (codes, levels, kinds, meanings, in code order), e.g. `1.3f9c0a6b2d1e`. A change of either changes it, so an
 * attestation names the checks that ran (docs/decisions.md, "Signed attestations").
 */
export function checkVersion(version: number, codes: CodeTable): string {
  const table = Object.keys(codes)
    .sort()
    .map((code) => [code, codes[code]]);
  const digest = createHash("sha256").update(JSON.stringify(table)).digest("hex");
  return `${version}.${digest.slice(0, 12)}`;
}

export function defineCheck<R extends Inspection>(def: CheckDefinition<R>): Check {
  const problems = codeTableProblems(def.id, def.codes);
  if (problems.length > 0) throw new Error(`invalid code table: ${problems.join("; ")}`);
  return {
    id: def.id,
    codes: def.codes,
    version: checkVersion(def.version ?? 1, def.codes),
    appliesTo: (doc) => def.appliesTo(doc),
    ...(def.pixelsOnly ? { pixelsOnly: true } : {}),
    ...(def.prepare ? { prepare: def.prepare } : {}),
    async run(doc, ctx): Promise<CheckResult> {
      const raw = await def.inspect(doc, ctx);
      if ("unreadable" in raw) return result(def.id, "error", 0, raw.unreadable, []);
      let stamped: Finding[];
      try {
        stamped = raw.findings.map((f) => stamp(def.id, def.codes, f));
      } catch (err) {
        if (err instanceof UndeclaredCodeError) return result(def.id, "error", 0, `${err.message}.`, []);
        throw err;
      }
      if ("skipped" in raw) return result(def.id, "skip", 0, raw.skipped, stamped);
      const inspection = { ...raw, findings: stamped } as R;
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
