import type { CheckResult, Finding } from "../core/check-result.js";
import type { DocumentModel } from "../document/model.js";

/**
 * The contract between the check step and every check: the document is parsed once per check step
 * into a DocumentModel (document/), then each applicable Check reads it. Checks are pure with respect to
 * the outside world (no network, no object store, no clock but ctx.now).
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
