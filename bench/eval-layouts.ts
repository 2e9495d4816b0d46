import { analyzeWithRules } from "../agent/rules-engine.js";
import type { CheckResult } from "../core/check-result.js";
import { computeMetrics, type DocOutcome, formatMetrics, scoreOf, THRESHOLD } from "./eval-harness.js";

/**
 * The report of the generated-layout sets (fixtures/layouts/). The development set is reported like every
 * other set (bench/eval-report.ts) plus the tables below; the held-out set ONLY in aggregate — no document
 * id, file or per-document score is printed for it, so nobody tunes to a held-out document:
 *
 * - the metrics (FPR at 50, ROC AUC, detection per tamper kind on originals below 50), for the whole set and
 *   apart for the held-out layouts on development producers and for the held-out producers;
 * - FPR and detection per producer;
 * - the per-check false-positive table on its genuine documents: per check and per finding code, on how many
 *   documents it flags, and on how many it is decisive (the score is ≥ 50 with it and < 50 without it).
 */

const pct = (x: number) => (Number.isNaN(x) ? "n/a" : `${(100 * x).toFixed(1)} %`);
const genuineOf = (docs: readonly DocOutcome[]) => docs.filter((d) => d.label === "genuine" && !d.helper);
const flags = (d: DocOutcome): CheckResult[] =>
  (d.agentInput?.checks ?? []).filter((c) => c.outcome === "flag");

function table(head: string[], rows: string[][]): string {
  const w = head.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)));
  const line = (r: string[]) =>
    `| ${r.map((c, i) => (i === 0 ? c.padEnd(w[i] as number) : c.padStart(w[i] as number))).join(" | ")} |`;
  const sep = `+-${w.map((n) => "-".repeat(n)).join("-+-")}-+`;
  return [sep, line(head), sep, ...rows.map(line), sep].join("\n");
}

/** The checks without one check, or without one finding code (a check left with no finding passes). */
export function withoutFindings(
  checks: readonly CheckResult[],
  checkId: string,
  code?: string,
): CheckResult[] {
  return checks.flatMap((c) => {
    if (c.checkId !== checkId) return [c];
    if (code === undefined) return [];
    const findings = c.findings.filter((f) => f.code !== code);
    if (findings.length === c.findings.length) return [c];
    if (findings.length === 0) return [{ ...c, outcome: "pass" as const, severity: 0, findings }];
    const severity = Math.max(...findings.map((f) => f.severity ?? c.severity));
    return [{ ...c, findings, severity: Math.min(c.severity, severity) }];
  });
}

/** The score the same engine gives with some checks' findings left out. */
function rescore(d: DocOutcome, checks: CheckResult[]): number {
  if (!d.agentInput) return scoreOf(d);
  return analyzeWithRules({ ...d.agentInput, checks }).verdict.fraudScore;
}

export interface CheckFpRow {
  /** "check" or "check code". */
  key: string;
  flagged: number;
  decisive: number;
  maxSeverity: number;
}

/**
 * Per check and per (check, code): genuine documents it flags, and those where it is decisive. A document
 * decided by a signature (authoritative) or that failed a step is never attributed to a check.
 */
export function checkFpRows(docs: readonly DocOutcome[]): {
  n: number;
  fp: number;
  checks: CheckFpRow[];
  codes: CheckFpRow[];
} {
  const genuine = genuineOf(docs);
  const checks = new Map<string, CheckFpRow>();
  const codes = new Map<string, CheckFpRow>();
  for (const d of genuine) {
    const flagged = d.score !== null && scoreOf(d) >= THRESHOLD && !d.authoritative;
    const all = d.agentInput?.checks ?? [];
    for (const c of flags(d)) {
      const row = checks.get(c.checkId) ?? { key: c.checkId, flagged: 0, decisive: 0, maxSeverity: 0 };
      row.flagged++;
      row.maxSeverity = Math.max(row.maxSeverity, c.severity);
      if (flagged && rescore(d, withoutFindings(all, c.checkId)) < THRESHOLD) row.decisive++;
      checks.set(c.checkId, row);
      for (const code of new Set(c.findings.map((f) => f.code))) {
        const k = `${c.checkId} ${code}`;
        const r = codes.get(k) ?? { key: k, flagged: 0, decisive: 0, maxSeverity: 0 };
        r.flagged++;
        r.maxSeverity = Math.max(
          r.maxSeverity,
          ...c.findings.filter((f) => f.code === code).map((f) => f.severity ?? c.severity),
        );
        if (flagged && rescore(d, withoutFindings(all, c.checkId, code)) < THRESHOLD) r.decisive++;
        codes.set(k, r);
      }
    }
  }
  const order = (a: CheckFpRow, b: CheckFpRow) =>
    b.decisive - a.decisive || b.flagged - a.flagged || a.key.localeCompare(b.key);
  return {
    n: genuine.length,
    fp: genuine.filter((d) => scoreOf(d) >= THRESHOLD).length,
    checks: [...checks.values()].sort(order),
    codes: [...codes.values()].sort(order),
  };
}

export function formatCheckFp(docs: readonly DocOutcome[], title: string): string {
  const t = checkFpRows(docs);
  if (t.n === 0) return `${title}: no genuine documents`;
  const rows = (list: CheckFpRow[]) =>
    list.map((r) => [
      r.key,
      `${r.flagged} (${pct(r.flagged / t.n)})`,
      `${r.decisive} (${pct(r.decisive / t.n)})`,
      String(r.maxSeverity),
    ]);
  return [
    `${title}: ${t.fp} of ${t.n} genuine documents score ${THRESHOLD} or more. Flags = documents the check (code) flags; decisive = documents at ≥ ${THRESHOLD} that fall below ${THRESHOLD} without it.`,
    t.checks.length
      ? table(["check", "flags", "decisive", "max sev"], rows(t.checks))
      : "(no check flagged anything)",
    t.codes.length ? table(["check code", "flags", "decisive", "max sev"], rows(t.codes)) : "",
  ]
    .filter(Boolean)
    .join("\n");
}

/** FPR and detection (non-exempt kinds, on originals below 50) per producer. */
export function formatPerProducer(docs: readonly DocOutcome[]): string {
  const producers = [...new Set(docs.filter((d) => d.family).map((d) => d.family as string))].sort();
  const rows = producers.map((p) => {
    const g = genuineOf(docs).filter((d) => d.family === p);
    const fp = g.filter((d) => scoreOf(d) >= THRESHOLD).length;
    const t = docs.filter((d) => d.family === p && d.label === "tampered" && !d.exempt && !d.helper);
    const eligible = t.filter((d) => d.originalScore === undefined || d.originalScore < THRESHOLD);
    const det = eligible.filter((d) => scoreOf(d) >= THRESHOLD).length;
    const scores = g.map(scoreOf).sort((a, b) => a - b);
    const median = scores.length ? (scores[Math.floor(scores.length / 2)] as number) : Number.NaN;
    return [
      p,
      `${fp}/${g.length} (${pct(g.length ? fp / g.length : Number.NaN)})`,
      Number.isNaN(median) ? "-" : String(median),
      `${det}/${eligible.length} (${pct(eligible.length ? det / eligible.length : Number.NaN)})`,
    ];
  });
  return table(
    ["producer", `genuine ≥ ${THRESHOLD} (FPR)`, "median genuine score", "tampered detected (non-exempt)"],
    rows,
  );
}

/** Detection per kind split by whether the edit kept the arithmetic, counts only. */
function formatArithmetic(docs: readonly DocOutcome[]): string | undefined {
  const t = docs.filter((d) => d.label === "tampered" && d.arithmetic && !d.helper);
  if (t.length === 0) return undefined;
  const cell = (of: DocOutcome[]) => {
    const e = of.filter((d) => d.originalScore === undefined || d.originalScore < THRESHOLD);
    return e.length ? `${e.filter((d) => scoreOf(d) >= THRESHOLD).length}/${e.length}` : "-";
  };
  const kinds = [...new Set(t.map((d) => d.tamper as string))];
  return table(
    ["tamper kind", "arithmetic kept", "arithmetic broken"],
    kinds.map((k) => [
      k,
      cell(t.filter((d) => d.tamper === k && d.arithmetic === "kept")),
      cell(t.filter((d) => d.tamper === k && d.arithmetic === "broken")),
    ]),
  );
}

function distribution(docs: readonly DocOutcome[]): string {
  const g = genuineOf(docs).map(scoreOf);
  if (g.length === 0) return "";
  const at = (lo: number, hi: number) => g.filter((s) => s >= lo && s < hi).length;
  return `genuine scores: ≥ ${THRESHOLD}: ${at(THRESHOLD, 1000)} of ${g.length}; 30-${THRESHOLD - 1}: ${at(30, THRESHOLD)}; < 30: ${at(0, 30)}; mean ${(g.reduce((a, b) => a + b, 0) / g.length).toFixed(1)}`;
}

/** The held-out group of an outcome: held-out layouts on development producers, or a held-out producer. */
export const HELDOUT_GROUPS = ["held-out layouts on development producers", "held-out producers"] as const;

/** The held-out set's whole report: aggregates only. */
export function formatHeldout(docs: readonly DocOutcome[], note: string): string {
  const parts: string[] = [
    formatMetrics(computeMetrics(docs), `== set layouts-heldout (aggregates only; ${note})`),
    distribution(docs),
  ];
  for (const group of HELDOUT_GROUPS) {
    const of = docs.filter((d) => d.group === group);
    if (of.length) parts.push(formatMetrics(computeMetrics(of), `-- ${group}`), distribution(of));
  }
  parts.push("FPR and detection per producer (held-out):", formatPerProducer(docs));
  const arithmetic = formatArithmetic(docs);
  if (arithmetic)
    parts.push("Detection per kind by whether the edit kept the arithmetic (held-out):", arithmetic);
  parts.push(formatCheckFp(docs, "Per-check false positives on the held-out genuine documents"));
  for (const group of HELDOUT_GROUPS) {
    const of = docs.filter((d) => d.group === group);
    if (of.length) parts.push(formatCheckFp(of, `Per-check false positives, ${group}`));
  }
  return parts.filter(Boolean).join("\n");
}

/** The extra tables of the development set (its documents may be named: bench/eval-report.ts does). */
export function formatLayoutsDevExtras(docs: readonly DocOutcome[]): string {
  return [
    "FPR and detection per producer (development):",
    formatPerProducer(docs),
    formatCheckFp(docs, "Per-check false positives on the development genuine documents"),
  ].join("\n");
}
