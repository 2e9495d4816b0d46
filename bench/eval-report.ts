import { analyzeWithRules } from "../agent/rules-engine.js";
import type { CheckResult } from "../core/check-result.js";
import {
  computeMetrics,
  type DocOutcome,
  type EvalSet,
  formatMetrics,
  scoreOf,
  THRESHOLD,
} from "./eval-harness.js";

/**
 * The per-set report of `npm run eval`: the metrics table, the score distribution of genuine documents,
 * the genuine documents at or above the threshold with what flagged them, detection per tamper kind split
 * by whether the edit kept the arithmetic, FPR per producer family, the table check/code → documents on
 * genuine vs tampered, and the per-check false-positive budget on real genuine documents.
 */

/** Real genuine documents: every set but the synthetic one (the repo's own generator). */
export const REAL_SETS: readonly EvalSet[] = [
  "realworld-dev",
  "real-producer",
  "debian-manuals",
  "realworld-dev-scans",
];

/**
 * Per-check false-positive budget on real genuine documents: a check may flag at most `flagRate` of them
 * (any finding), and may be decisive — the score is ≥ 50 with it and < 50 without it — on at most
 * `decisiveRate`. Issue 12: every check gets a budget; phase 2 tunes the checks until no line says OVER.
 */
export const FP_BUDGET = { flagRate: 0.1, decisiveRate: 0.01 } as const;

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

/** "fonts.consistency(8): cell_mixed_fonts×12, value_font_differs×3" for the flagged checks of a document. */
export function flagSummary(d: DocOutcome): string {
  return flags(d)
    .sort((a, b) => b.severity - a.severity)
    .map((c) => {
      const codes = new Map<string, number>();
      for (const f of c.findings) codes.set(f.code, (codes.get(f.code) ?? 0) + 1);
      return `${c.checkId}(${c.severity}): ${[...codes].map(([k, n]) => (n > 1 ? `${k}×${n}` : k)).join(", ")}`;
    })
    .join("; ");
}

/** check/code → number of documents with at least one such finding, genuine vs tampered. */
export function codeTable(docs: readonly DocOutcome[]): string {
  const count = new Map<
    string,
    { genuine: Set<string>; tampered: Set<string>; findings: number; maxSeverity: number }
  >();
  for (const d of docs.filter((x) => !x.helper)) {
    for (const c of flags(d)) {
      for (const f of c.findings) {
        const key = `${c.checkId} ${f.code}`;
        const e = count.get(key) ?? { genuine: new Set(), tampered: new Set(), findings: 0, maxSeverity: 0 };
        (d.label === "genuine" ? e.genuine : e.tampered).add(d.id);
        if (d.label === "genuine") {
          e.findings++;
          e.maxSeverity = Math.max(e.maxSeverity, f.severity ?? c.severity);
        }
        count.set(key, e);
      }
    }
  }
  const g = genuineOf(docs).length;
  const t = docs.filter((d) => d.label === "tampered" && !d.helper).length;
  const rows = [...count]
    .sort((a, b) => b[1].genuine.size - a[1].genuine.size || b[1].tampered.size - a[1].tampered.size)
    .map(([key, e]) => [
      key,
      String(e.genuine.size),
      String(e.findings),
      e.genuine.size ? String(e.maxSeverity) : "-",
      String(e.tampered.size),
    ]);
  if (rows.length === 0) return "(no check flagged anything)";
  return table(
    [`check code`, `genuine docs (of ${g})`, "findings", "max sev", `tampered docs (of ${t})`],
    rows,
  );
}

/** Score of a document with one check's results left out (same engine, same constants). */
function scoreWithout(d: DocOutcome, checkId: string): number {
  if (!d.agentInput) return scoreOf(d);
  const checks = d.agentInput.checks.filter((c) => c.checkId !== checkId);
  return analyzeWithRules({ ...d.agentInput, checks }).verdict.fraudScore;
}

export interface BudgetLine {
  checkId: string;
  flagged: number;
  decisive: number;
  n: number;
  examples: string[];
}

/** Per check: on how many real genuine documents it flags, and on how many it alone lifts the score to ≥ 50. */
export function budgetLines(docs: readonly DocOutcome[]): BudgetLine[] {
  const genuine = genuineOf(docs).filter((d) => d.set !== undefined && REAL_SETS.includes(d.set));
  const ids = new Set(genuine.flatMap((d) => (d.agentInput?.checks ?? []).map((c) => c.checkId)));
  return [...ids]
    .map((checkId) => {
      const flaggedDocs = genuine.filter((d) => flags(d).some((c) => c.checkId === checkId));
      const decisive = flaggedDocs.filter(
        (d) => scoreOf(d) >= THRESHOLD && !d.authoritative && scoreWithout(d, checkId) < THRESHOLD,
      );
      return {
        checkId,
        flagged: flaggedDocs.length,
        decisive: decisive.length,
        n: genuine.length,
        examples: decisive.slice(0, 3).map((d) => d.id),
      };
    })
    .sort((a, b) => b.decisive - a.decisive || b.flagged - a.flagged);
}

export function formatBudget(lines: BudgetLine[]): string {
  if (lines.length === 0) return "(no real genuine documents were scored)";
  const n = lines[0]?.n ?? 0;
  const rows = lines.map((l) => {
    const fr = l.flagged / l.n;
    const dr = l.decisive / l.n;
    return [
      l.checkId,
      `${l.flagged}/${l.n} (${pct(fr)})`,
      fr > FP_BUDGET.flagRate ? "OVER" : "ok",
      `${l.decisive}/${l.n} (${pct(dr)})`,
      dr > FP_BUDGET.decisiveRate ? "OVER" : "ok",
      l.examples.join(", "),
    ];
  });
  return [
    `Per-check false-positive budget on ${n} real genuine documents (realworld-dev + real-producer genuine + Debian manuals + realworld-dev-scans, as run): flags on at most ${pct(FP_BUDGET.flagRate)}, decisive (score ≥ ${THRESHOLD} only with it) on at most ${pct(FP_BUDGET.decisiveRate)}`,
    table(["check", "flags on", "budget", "decisive on", "budget", "decisive examples"], rows),
  ].join("\n");
}

function distribution(docs: readonly DocOutcome[]): string {
  const g = genuineOf(docs).map(scoreOf);
  if (g.length === 0) return "";
  const at = (lo: number, hi: number) => g.filter((s) => s >= lo && s < hi).length;
  const mean = g.reduce((a, b) => a + b, 0) / g.length;
  return `genuine scores: ≥ ${THRESHOLD}: ${at(THRESHOLD, 1000)} of ${g.length}; 30-${THRESHOLD - 1}: ${at(30, THRESHOLD)}; < 30: ${at(0, 30)}; mean ${mean.toFixed(1)}, max ${Math.max(...g)}`;
}

function perFamily(docs: readonly DocOutcome[]): string | undefined {
  const fams = [...new Set(docs.filter((d) => d.family).map((d) => d.family as string))];
  if (fams.length === 0) return undefined;
  const rows = fams.map((f) => {
    const g = genuineOf(docs).filter((d) => d.family === f);
    const fp = g.filter((d) => scoreOf(d) >= THRESHOLD).length;
    const t = docs.filter((d) => d.family === f && d.label === "tampered" && !d.exempt);
    const eligible = t.filter((d) => d.originalScore === undefined || d.originalScore < THRESHOLD);
    const det = eligible.filter((d) => scoreOf(d) >= THRESHOLD).length;
    return [
      f,
      `${fp}/${g.length} (${pct(g.length ? fp / g.length : Number.NaN)})`,
      `${det}/${eligible.length} (${pct(eligible.length ? det / eligible.length : Number.NaN)})`,
    ];
  });
  return table(["producer family", `genuine ≥ ${THRESHOLD}`, "tampered detected (non-exempt kinds)"], rows);
}

function perKindArithmetic(docs: readonly DocOutcome[]): string | undefined {
  const t = docs.filter((d) => d.label === "tampered" && d.arithmetic && !d.helper);
  if (t.length === 0) return undefined;
  const kinds = [...new Set(t.map((d) => d.tamper as string))];
  const cell = (of: DocOutcome[]) => {
    const e = of.filter((d) => d.originalScore === undefined || d.originalScore < THRESHOLD);
    const det = e.filter((d) => scoreOf(d) >= THRESHOLD).length;
    return e.length ? `${det}/${e.length}` : "-";
  };
  const rows = kinds.map((k) => [
    k,
    cell(t.filter((d) => d.tamper === k && d.arithmetic === "kept")),
    cell(t.filter((d) => d.tamper === k && d.arithmetic === "broken")),
  ]);
  return [
    "Detection per kind by whether the edit kept the arithmetic (kept: only the edit's traces can catch it):",
    table(["tamper kind", "arithmetic kept", "arithmetic broken"], rows),
  ].join("\n");
}

function flaggedGenuine(docs: readonly DocOutcome[], limit: number): string | undefined {
  const fp = genuineOf(docs)
    .filter((d) => scoreOf(d) >= THRESHOLD)
    .sort((a, b) => scoreOf(b) - scoreOf(a));
  if (fp.length === 0) return undefined;
  const lines = fp
    .slice(0, limit)
    .map(
      (d) =>
        `  ${String(scoreOf(d)).padStart(3)} ${d.id}${d.failure ? ` [${d.failure}]` : ""}: ${flagSummary(d)}`,
    );
  if (fp.length > limit) lines.push(`  … and ${fp.length - limit} more (--verbose lists all)`);
  return [`Genuine documents at ${THRESHOLD} or above (false positives), highest first:`, ...lines].join(
    "\n",
  );
}

function missedTampered(docs: readonly DocOutcome[], limit: number): string | undefined {
  const missed = docs
    .filter(
      (d) =>
        d.label === "tampered" && !d.helper && (d.originalScore === undefined || d.originalScore < THRESHOLD),
    )
    .filter((d) => scoreOf(d) < THRESHOLD);
  if (missed.length === 0) return undefined;
  const lines = missed
    .slice(0, limit)
    .map(
      (d) =>
        `  ${String(scoreOf(d)).padStart(3)} ${d.id} [${d.variant}]: ${flagSummary(d) || "nothing flagged"}`,
    );
  if (missed.length > limit) lines.push(`  … and ${missed.length - limit} more (--verbose lists all)`);
  return [`Tampered documents below ${THRESHOLD} (missed):`, ...lines].join("\n");
}

/** The whole report of one set. */
export function formatSet(
  set: EvalSet,
  docs: readonly DocOutcome[],
  o: { verbose?: boolean; note?: string } = {},
): string {
  const limit = o.verbose ? 10_000 : 25;
  const small = set === "debian-manuals";
  const parts = [
    formatMetrics(computeMetrics(docs), `== set ${set}${o.note ? ` (${o.note})` : ""}`),
    distribution(docs),
    small
      ? genuineOf(docs)
          .map(
            (d) =>
              `  ${String(scoreOf(d)).padStart(3)} ${d.id} (${d.source ?? ""}): ${flagSummary(d) || "nothing flagged"}`,
          )
          .join("\n")
      : flaggedGenuine(docs, limit),
    missedTampered(docs, limit),
    perFamily(docs),
    perKindArithmetic(docs),
    `Check/code → documents with such a finding (${set}):`,
    codeTable(docs),
  ];
  return parts.filter((p): p is string => Boolean(p)).join("\n");
}
