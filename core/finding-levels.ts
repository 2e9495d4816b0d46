/**
 * The severity scale every check grades its findings on, as named levels, and the kinds of evidence a finding
 * can be (docs/calibration.md, "Levels and corroboration").
 *
 * A finding keeps its integer `severity` 0-10 (the contract's scale and what the reviewer sees); its level is
 * the band the severity falls in. Each check declares the codes it reports in a table (`codes` of
 * defineCheck, checks/check.ts): per code the highest level it may reach, the kind of evidence it is, and one
 * line of what it means. The check step caps every finding at its code's level and stamps its kind on it, so
 * the scoring (agent/score.ts) can tell appearance from proof and find two independent kinds about one value.
 */

export const FINDING_LEVELS = ["note", "anomaly", "specific", "proof"] as const;
export type FindingLevel = (typeof FINDING_LEVELS)[number];

/** The severities of each level (inclusive). 0 is "no evidence" and has no level. */
export const LEVEL_SEVERITY: Readonly<Record<FindingLevel, readonly [number, number]>> = {
  /** Ordinary on genuine documents; worth a line in the evidence, barely moves the score. */
  note: [1, 2],
  /** Genuine documents show it now and then; counts with other evidence, never decides alone. */
  anomaly: [3, 4],
  /** Evidence of an edit or of a rewrite after issue that still has innocent explanations; decides with a second kind. */
  specific: [5, 7],
  /** Proof-grade: figures that do not add up on a confident reading, a revision that changed a printed value, a failing signature or check digit. */
  proof: [8, 10],
};

/** The level of a severity (undefined for 0: no evidence). */
export function levelOf(severity: number): FindingLevel | undefined {
  const s = Math.round(severity);
  if (s <= 0) return undefined;
  if (s <= 2) return "note";
  if (s <= 4) return "anomaly";
  if (s <= 7) return "specific";
  return "proof";
}

/**
 * What a finding is evidence of. Two findings about the same value or region corroborate each other when
 * they are independent: different kinds, or the same non-appearance kind found by two different checks
 * (two pixel methods), and at least one of them is not about appearance.
 */
export const EVIDENCE_KINDS = [
  /** How text looks: its face, size, colour, weight, glyph shapes. */
  "appearance",
  /** What the file says of who made it and when: producer names and chains, metadata dates. */
  "provenance",
  /** A printed fact that is odd on its own: an impossible date, transactions out of order, a date in the future. */
  "plausibility",
  /** How an image was captured: camera, scanner, screenshot, re-encoding. */
  "capture",
  /** What the bytes prove: revisions, objects and fonts added later, rewrites under a producer's seal, hidden text. */
  "structure",
  /** Figures that do not add up. */
  "arithmetic",
  /** A check digit or format of an identifier that fails. */
  "identifier",
  /** Two statements of one fact in the document disagree: a QR code and the print, the MRZ and the printed zone. */
  "consistency",
  /** A digital signature and what it covers. */
  "signature",
  /** Traces in the pixels: compression history, noise, cloned or pasted glyphs. */
  "pixels",
  /** What earlier submissions of the same tenant show. */
  "history",
  /** The file's type, name and container. */
  "container",
  /** A tenant's policy rule that held (core/policy.ts): counts at the level the policy gives it. */
  "policy",
] as const;
export type EvidenceKind = (typeof EVIDENCE_KINDS)[number];

/**
 * Kinds about appearance only (EVALUATION.md rule 3): each is ordinary somewhere in the real world, so a code
 * of these kinds is an anomaly at most, and two of them never corroborate each other.
 */
export const APPEARANCE_KINDS: ReadonlySet<EvidenceKind> = new Set<EvidenceKind>([
  "appearance",
  "provenance",
  "plausibility",
  "capture",
  "container",
]);

export const isAppearanceKind = (kind: EvidenceKind | undefined): boolean =>
  kind !== undefined && APPEARANCE_KINDS.has(kind);

/** One finding code as a check declares it. */
export interface CodeMeta {
  /** The highest level a finding of this code may reach (the check may grade it lower). */
  level: FindingLevel;
  kind: EvidenceKind;
  /** One line: what the finding means, for the calibration table and the reviewer. */
  means: string;
}

export type CodeTable<C extends string = string> = Readonly<Record<C, CodeMeta>>;

/** The highest severity a code allows: its level's top, and never above anomaly for an appearance kind. */
export function maxSeverityOf(meta: CodeMeta): number {
  const top = LEVEL_SEVERITY[meta.level][1];
  return isAppearanceKind(meta.kind) ? Math.min(top, LEVEL_SEVERITY.anomaly[1]) : top;
}

/** Problems with a check's code table (an appearance code declared above anomaly, a missing sentence). */
export function codeTableProblems(checkId: string, table: CodeTable): string[] {
  const problems: string[] = [];
  for (const [code, meta] of Object.entries(table)) {
    if (!/^[a-z][a-z0-9_]*$/.test(code)) problems.push(`${checkId}: code "${code}" is not snake_case`);
    if (!FINDING_LEVELS.includes(meta.level))
      problems.push(`${checkId}.${code}: unknown level ${meta.level}`);
    if (!EVIDENCE_KINDS.includes(meta.kind)) problems.push(`${checkId}.${code}: unknown kind ${meta.kind}`);
    if (isAppearanceKind(meta.kind) && (meta.level === "specific" || meta.level === "proof"))
      problems.push(
        `${checkId}.${code}: a ${meta.kind} finding is about appearance only and may not be declared above "anomaly"`,
      );
    if (meta.means.trim().length < 10) problems.push(`${checkId}.${code}: "means" must say what it means`);
  }
  return problems;
}
