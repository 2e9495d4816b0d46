import type { CheckResult, Finding } from "../core/check-result.js";
import { buildEvidence, type EvidenceGroup } from "../core/evidence.js";
import { DOC_TYPE_WORDS, type DocType } from "../core/verdict.js";
import type { Classification } from "./classify.js";
import { type Decision, type ScoreBreakdown, scoreBand } from "./score.js";

/** Everything the reasoning text is written from. */
export interface ReasoningInput {
  declaredDocType: DocType;
  classification: Classification;
  documentTypeMatch: boolean;
  /** True when the declared type was neither confirmed nor contradicted by the text. */
  typeUnconfirmed: boolean;
  /** True when the classifier was confident of its type (a declared `other` is then named by it). */
  typeRecognised?: boolean;
  breakdown: ScoreBreakdown;
  checks: CheckResult[];
  discovered: string[];
  /** True when the document had extractable text. */
  hasText: boolean;
  /** The tenant policy the score was computed under and its departures from the default rules. */
  policy?: { ref: { name: string; version: number }; departures: string[]; isDefault: boolean };
  /**
   * The evidence's headline groups (core/evidence.ts), numbered as on the page images; built from the
   * checks when the check step stored none.
   */
  groups?: readonly EvidenceGroup[];
}

/**
 * Bounds of verdict.reasoning (docs/evidence.md, "Reasoning"): it leads with at most `groups` headline
 * groups, each citing its strongest finding (so at most that many findings are cited, whatever the
 * document), clips every sentence taken from a check, and stays within `bytes` (UTF-8) in all. The full
 * list of findings is the evidence (GET /v1/detection/{id}/evidence).
 */
export const REASONING_LIMITS = {
  groups: 8,
  /** Characters of a finding's message and of its evidence in a cited line. */
  messageChars: 200,
  evidenceChars: 200,
  /** Characters of a check summary quoted in the limits paragraph. */
  summaryChars: 200,
  bytes: 4000,
} as const;

const MAX_VALUE_CHARS = 300;
const MAX_EVIDENCE_PHRASES = 5;

const BAND_WORDS = { low: "Low risk", moderate: "Moderate risk", high: "High risk" } as const;

/** "a" or "an" before plain words ("an electricity bill", "a utility bill", "an unidentified document"). */
export function withArticle(words: string): string {
  const an = /^[aeiou]/i.test(words) && !/^(?:uni(?!d)|use|usu|uti|eu|one)/i.test(words);
  return `${an ? "an" : "a"} ${words}`;
}

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;
const points = (p: number) => `${Math.round(p)} ${Math.round(p) === 1 ? "point" : "points"}`;
const sentence = (s: string) => {
  const t = s.trim();
  return /[.!?]$/.test(t) ? t : `${t}.`;
};

function formatValue(value: unknown): string {
  const s = typeof value === "string" ? value : JSON.stringify(value);
  const text = s ?? String(value);
  return text.length > MAX_VALUE_CHARS ? `${text.slice(0, MAX_VALUE_CHARS)}…` : text;
}

/** The evidence of a finding as "key: value; key: value". */
export function formatEvidence(evidence: Finding["evidence"]): string {
  if (!evidence) return "";
  return Object.entries(evidence)
    .map(([key, value]) => `${key}: ${formatValue(value)}`)
    .join("; ");
}

/** "text.arithmetic running_balance_mismatch (arithmetic, severity 9, page 2)". */
function decidingFinding(f: Decision["findings"][number]): string {
  return `${f.checkId} ${f.code} (${f.kind === "unknown" ? "" : `${f.kind}, `}severity ${f.severity}${f.page !== undefined ? `, page ${f.page}` : ""})`;
}

/** Why the score is where it is, in one clause: what decided it, or why nothing did. */
function decisionClause(input: ReasoningInput): string | undefined {
  const [first, ...more] = input.breakdown.decisions;
  if (!first) return undefined;
  const also = more.length > 0 ? ` (and ${plural(more.length, "further decision")})` : "";
  if (first.why === "proof") {
    const [f] = first.findings;
    if (!f) return undefined;
    const by =
      first.byPolicy && input.policy
        ? ` (deciding alone by policy ${input.policy.ref.name} v${input.policy.ref.version})`
        : "";
    return `decided by proof: ${decidingFinding(f)}${by}${also}`;
  }
  const [a, b] = first.findings;
  if (!a || !b) return undefined;
  return `decided by two independent kinds of evidence about the same value or region: ${decidingFinding(a)} and ${decidingFinding(b)}${also}`;
}

function opening(input: ReasoningInput): string {
  const { score, contributions } = input.breakdown;
  const band = BAND_WORDS[scoreBand(score)];
  const flagged = contributions.filter((c) => c.findings.length > 0);
  const findingCount = flagged.reduce((n, c) => n + c.findings.length, 0);
  const reasons: string[] = [];
  const top = [...flagged].sort((a, b) => b.points - a.points)[0];
  const strongest = top?.findings[0];
  const decision = decisionClause(input);
  if (decision) reasons.push(decision);
  else if (findingCount === 1 && top && strongest) {
    reasons.push(
      `${top.checkId} flagged 1 finding (severity ${strongest.severity}), which alone does not decide: it is neither proof nor corroborated by an independent kind of evidence about the same value`,
    );
  } else if (flagged.length > 0) {
    reasons.push(
      `${plural(flagged.length, "check")} flagged ${plural(findingCount, "finding")}` +
        (top && strongest ? `, the strongest from ${top.checkId} (severity ${strongest.severity})` : "") +
        ", but none is proof and no two independent kinds of evidence agree about the same value, so they do not decide",
    );
  }
  if (!input.documentTypeMatch) reasons.push("the document does not appear to be the type that was declared");
  if (reasons.length === 0) reasons.push("no check flagged anything suspicious");
  const errored = contributions.filter((c) => c.outcome === "error").length;
  const caveat = errored > 0 ? `, though ${plural(errored, "check")} could not be completed` : "";
  return `${band} (score ${score}/100): ${reasons.join(", and ")}${caveat}.`;
}

function typeParagraph(input: ReasoningInput): string {
  const { classification: c, declaredDocType } = input;
  const found = c.evidence
    .slice(0, MAX_EVIDENCE_PHRASES)
    .map((e) => `"${e}"`)
    .join(", ");
  const basis = found ? ` (found ${found}; classifier confidence ${c.confidence.toFixed(2)})` : "";
  if (declaredDocType === "other") {
    if (!input.hasText)
      return "No document type was declared, and the document has no extractable text to identify it by.";
    if (c.docType === "other")
      return "No document type was declared, and the text does not identify what kind of document this is.";
    if (input.typeRecognised === false) {
      return (
        `No document type was declared, and the text points only weakly to ${withArticle(c.plainWords)}${basis}, ` +
        "so the type could not be confirmed."
      );
    }
    return `No document type was declared; the text reads like ${withArticle(c.plainWords)}${basis}.`;
  }
  const declared = withArticle(DOC_TYPE_WORDS[declaredDocType]);
  if (!input.documentTypeMatch) {
    return (
      `The document was declared as ${declared}, but its text reads like ${withArticle(c.plainWords)}${basis}. ` +
      "A document that is not what it was declared to be deserves a look (for example a different document " +
      `submitted in place of the one requested), though it is not evidence of an alteration; this added ${points(input.breakdown.mismatchPoints)} to the score.`
    );
  }
  if (!input.typeUnconfirmed) {
    return `The document was declared as ${declared}, and its text agrees${basis}.`;
  }
  if (!input.hasText) {
    return `The document was declared as ${declared}; it has no extractable text, so its type could not be confirmed.`;
  }
  const weak =
    c.docType === "other"
      ? "the text does not clearly identify any known document type"
      : `the text points only weakly to ${withArticle(c.plainWords)}${basis}`;
  return `The document was declared as ${declared}; ${weak}, so the declared type could not be confirmed (nor ruled out).`;
}

function findingsParagraphs(input: ReasoningInput): string[] {
  const section = writeFindingsSection(input.breakdown, input.groups ?? groupsOf(input.checks));
  return section === undefined ? [] : [section];
}

/** The evidence's groups of the checks, when the check step stored none (numbered the same way). */
export function groupsOf(checks: readonly CheckResult[]): EvidenceGroup[] {
  return buildEvidence({ detection: "", checks }).groups;
}

const clipTo = (s: string, max: number) => {
  const t = s.replace(/\s+/g, " ").trim();
  return t.length > max ? `${t.slice(0, max - 1)}…` : t;
};

/**
 * The deterministic findings section: the headline groups of the flagged checks, strongest first (at
 * most REASONING_LIMITS.groups), each with where it is, its strongest finding's message and evidence, its
 * severity and the checks that found it; then what each check contributed to the score. Undefined when
 * nothing was flagged.
 */
export function writeFindingsSection(
  breakdown: ScoreBreakdown,
  groups: readonly EvidenceGroup[] = [],
): string | undefined {
  const flagged = breakdown.contributions.filter((c) => c.findings.length > 0);
  if (flagged.length === 0) return undefined;
  const total = flagged.reduce((n, c) => n + c.findings.length, 0);
  const flaggedIds = new Set(flagged.map((c) => c.checkId));
  // The strongest counted finding of each check and code, to quote under a group.
  const quoted = new Map<string, { finding: Finding; severity: number }>();
  for (const c of flagged)
    for (const f of c.findings) {
      const key = `${c.checkId}:${f.finding.code}`;
      if (!quoted.has(key)) quoted.set(key, f);
    }
  const cited = groups.filter((g) => g.checks.some((c) => flaggedIds.has(c.checkId)) && g.severity >= 1);
  const shown = cited.slice(0, REASONING_LIMITS.groups);
  const lines = [
    `Findings (${plural(total, "finding")} from ${plural(flagged.length, "check")}, in ${plural(cited.length, "group")}; the evidence lists every finding with its place on the page):`,
  ];
  for (const g of shown) {
    const lead = g.checks.find((c) => flaggedIds.has(c.checkId)) ?? g.checks[0];
    const q = lead ? quoted.get(`${lead.checkId}:${lead.code}`) : undefined;
    const message = q ? sentence(clipTo(q.finding.message, REASONING_LIMITS.messageChars)) : "";
    const evidence = q ? clipTo(formatEvidence(q.finding.evidence), REASONING_LIMITS.evidenceChars) : "";
    const by = [...new Set(g.checks.map((c) => `${c.checkId} ${c.code}`))].slice(0, 4).join(", ");
    const headline = sentence(g.headline);
    const repeats =
      message !== "" && headline.replace(/[.!?]$/, "").includes(message.replace(/[.!?]$/, "").slice(0, 60));
    lines.push(
      `${g.number}. ${headline}` +
        (message && !repeats ? ` ${message}` : "") +
        (evidence ? ` Evidence: ${evidence}.` : "") +
        ` Severity ${g.severity}/10 (${by}${g.findingCount > 1 ? `; ${g.findingCount} findings` : ""}).`,
    );
  }
  if (cited.length > shown.length) {
    const rest = cited.slice(shown.length);
    lines.push(
      `… and ${plural(rest.length, "further group")} (severity ${Math.max(...rest.map((g) => g.severity))} at most) in the evidence.`,
    );
  }
  lines.push(
    `Score: ${[...flagged]
      .sort((a, b) => b.points - a.points)
      .map((c) => `${c.checkId} contributed ${points(c.points)}`)
      .join("; ")}.`,
  );
  return lines.join("\n");
}

function limitsParagraph(input: ReasoningInput): string | undefined {
  const parts: string[] = [];
  const summary = (c: CheckResult) => clipTo(c.summary, REASONING_LIMITS.summaryChars);
  for (const check of input.checks) {
    if (check.outcome === "error") {
      parts.push(
        `The check ${check.checkId} could not be completed (${summary(check).replace(/[.!?]$/, "")}), so what it ` +
          "examines was not assessed; this adds a little uncertainty to the score.",
      );
    }
  }
  for (const check of input.checks) {
    if (check.outcome === "skip")
      parts.push(`The check ${check.checkId} did not apply: ${sentence(summary(check))}`);
  }
  if (!input.hasText) parts.push("The document has no extractable text, so its content could not be read.");
  return parts.length > 0 ? `Limits of this assessment: ${parts.join(" ")}` : undefined;
}

/** The policy paragraph: which policy, and every way it departs from the default rules. */
function policyParagraph(input: ReasoningInput): string | undefined {
  const p = input.policy;
  if (!p || (p.isDefault && p.departures.length === 0)) return undefined;
  const head = `Scored under policy ${p.ref.name} v${p.ref.version}`;
  if (p.departures.length === 0) return `${head}, which changes nothing for this document.`;
  return `${head}, which departs from the default rules: ${p.departures.join(" ")}`;
}

function passesAndFacts(input: ReasoningInput): string | undefined {
  const passed = input.checks.filter((c) => c.outcome === "pass").map((c) => c.checkId);
  const parts: string[] = [];
  if (passed.length > 0) parts.push(`Checks that found nothing suspicious: ${passed.join(", ")}.`);
  if (input.discovered.length > 0) parts.push(`Also noted in the document: ${input.discovered.join(", ")}.`);
  return parts.length > 0 ? parts.join(" ") : undefined;
}

const CLOSING =
  "A higher score means a higher likelihood of fraud but does not prove it, and a low score does not prove " +
  "authenticity; high-risk cases must be reviewed by a person before any decision is made.";

/**
 * The full reasoning text a human reviewer reads: plain text, paragraphs separated by blank lines, at
 * most REASONING_LIMITS.bytes.
 */
export function writeReasoning(input: ReasoningInput): string {
  return capReasoning([
    opening(input),
    policyParagraph(input),
    typeParagraph(input),
    ...findingsParagraphs(input),
    passesAndFacts(input),
    limitsParagraph(input),
    CLOSING,
  ]);
}

const bytesOf = (s: string) => Buffer.byteLength(s, "utf8");

/** `text` cut to at most `max` UTF-8 bytes, ending in "…" when cut (never inside a character). */
export function clipBytes(text: string, max: number): string {
  if (bytesOf(text) <= max) return text;
  let end = Math.min(text.length, max);
  while (end > 0 && bytesOf(text.slice(0, end)) > max - 3) end--;
  if (/[\uD800-\uDBFF]$/.test(text.slice(0, end))) end--;
  return `${text.slice(0, end)}…`;
}

/**
 * Joins the paragraphs within REASONING_LIMITS.bytes: when they do not fit, the findings section loses
 * group lines from its end, then the middle paragraphs are clipped; the opening and the closing note stay.
 */
export function capReasoning(parts: (string | undefined)[], max: number = REASONING_LIMITS.bytes): string {
  const paragraphs = parts.filter((p): p is string => p !== undefined && p !== "");
  const join = () => paragraphs.join("\n\n");
  let text = join();
  if (bytesOf(text) <= max) return text;
  const f = paragraphs.findIndex((p) => p.startsWith("Findings ("));
  if (f >= 0) {
    const lines = (paragraphs[f] as string).split("\n");
    const score = lines.pop() as string;
    let dropped = 0;
    while (bytesOf(text) > max && lines.length > 2) {
      const last = lines.pop() as string;
      if (/^… and /.test(last)) continue;
      dropped++;
      paragraphs[f] = [...lines, `… and ${plural(dropped, "further group")} in the evidence.`, score].join(
        "\n",
      );
      text = join();
    }
  }
  for (let i = paragraphs.length - 2; i >= 1 && bytesOf(text) > max; i--) {
    const over = bytesOf(text) - max;
    const p = paragraphs[i] as string;
    paragraphs[i] = clipBytes(p, Math.max(80, bytesOf(p) - over));
    text = join();
  }
  return clipBytes(text, max);
}

/** The short reasoning of one check for per_check: its summary plus its top findings. */
export function checkReasoning(check: CheckResult, maxFindings = 3): string {
  const summary = sentence(check.summary);
  if (check.outcome === "skip") return `Skipped: ${summary}`;
  if (check.outcome === "error") return `Could not be completed: ${summary}`;
  if (check.outcome === "pass" || check.findings.length === 0) return summary;
  const top = [...check.findings]
    .sort((a, b) => (b.severity ?? check.severity) - (a.severity ?? check.severity))
    .slice(0, maxFindings)
    .map((f) =>
      sentence(f.page !== undefined ? `${f.message.replace(/[.!?]$/, "")} (page ${f.page})` : f.message),
    );
  const more = check.findings.length - top.length;
  return `${summary} ${top.join(" ")}${more > 0 ? ` (and ${plural(more, "more finding")})` : ""}`;
}
