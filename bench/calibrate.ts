/**
 * Calibration of the rules engine's SCORING constants (agent/score.ts) on the labelled set:
 *
 *   node --import tsx bench/calibrate.ts --from cal.json [--holdout holdout.json]
 *
 * `cal.json` / `holdout.json` are written by `npm run eval -- --seed N --json FILE` (the check results
 * and text of every document). The search re-scores every document with each candidate set of constants
 * (no check is re-run) and keeps the candidate that, with a false-positive rate on genuine documents of at
 * most 3 % at score 50, detects the most of its weakest tamper kind, then has the highest AUC and F1.
 * It prints the chosen constants and the figures on the calibration set and, when given, the held-out set.
 */
import { readFile } from "node:fs/promises";
import { classifyDocument } from "../agent/classify.js";
import { decideDocType } from "../agent/rules-engine.js";
import { computeScore, findingProbability, SCORING, type ScoringConstants } from "../agent/score.js";
import { computeMetrics, type DocOutcome, formatMetrics } from "./eval-harness.js";

interface Prepared {
  doc: DocOutcome;
  type?: ReturnType<typeof decideDocType>;
}

async function load(file: string): Promise<Prepared[]> {
  const json = JSON.parse(await readFile(file, "utf8")) as { docs: DocOutcome[] };
  return json.docs.map((doc) => {
    if (!doc.agentInput || doc.authoritative) return { doc };
    const c = classifyDocument(doc.agentInput.text);
    return { doc, type: decideDocType(doc.agentInput.declaredDocType, c) };
  });
}

function rescore(set: Prepared[], k: ScoringConstants): DocOutcome[] {
  return set.map(({ doc, type }) => {
    if (!type || !doc.agentInput) return doc;
    return { ...doc, score: computeScore(doc.agentInput.checks, type, k).score };
  });
}

const FPR_MAX = 0.03;
/** The strongest severity the checks use for "worth a look" rather than "suspicious". */
const MILD_SEVERITY = 3;

const quantile = (xs: number[], q: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? (s[Math.min(s.length - 1, Math.max(0, Math.ceil(q * s.length) - 1))] as number) : 0;
};

/**
 * Higher is better: the weakest kind's detection rate, then AUC, then F1, then the margin around the
 * threshold (how far the 10th-percentile tampered score lies above 50 plus how far the 95th-percentile
 * genuine score lies below it, so ties go to constants that leave room on both sides); infeasible beyond
 * FPR_MAX.
 */
function objective(docs: DocOutcome[]): number[] {
  const m = computeMetrics(docs);
  if (!(m.fpr <= FPR_MAX)) return [-1, 0, 0, 0];
  const weakest = Math.min(...m.perKind.map((k) => k.rate));
  const tampered = docs.filter((d) => d.label === "tampered").map((d) => d.score ?? 100);
  const genuine = docs.filter((d) => d.label === "genuine").map((d) => d.score ?? 100);
  const margin = Math.min(quantile(tampered, 0.1) - 50, 50 - quantile(genuine, 0.95));
  return [weakest, m.auc, m.f1, margin];
}

const better = (a: number[], b: number[]) => {
  for (let i = 0; i < a.length; i++) {
    if ((a[i] as number) > (b[i] as number) + 1e-9) return true;
    if ((a[i] as number) < (b[i] as number) - 1e-9) return false;
  }
  return false;
};

/**
 * The grid: how severity maps to probability and how much further findings of one check count. The
 * uncertainty points (errored checks, unconfirmed type) are policy and the type-mismatch weight has no
 * evidence in this set (declared types are true), so they stay as they are.
 */
function* candidates(): Generator<ScoringConstants> {
  for (const probabilityScale of [0.85, 0.9, 0.95, 0.99])
    for (const severityExponent of [0.5, 0.6, 0.75, 1, 1.25, 1.5, 2])
      for (const sameCheckDecay of [0.3, 0.5, 0.7]) {
        const k = { ...SCORING, probabilityScale, severityExponent, sameCheckDecay };
        // The checks' severity scale: 1-3 is "worth a look", 4 and up "suspicious". One finding of
        // severity 3 alone must not make a document "likely tampered" (the generated genuine documents are
        // cleaner than real ones, so the data alone would push mild findings over the line).
        if (findingProbability(MILD_SEVERITY, k) >= 0.5) continue;
        // Nor may two mild findings (severity 2) of two different checks, which real documents do show.
        if (1 - (1 - findingProbability(2, k)) ** 2 >= 0.495) continue;
        yield k;
      }
}

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  const arg = (name: string) => {
    const i = argv.indexOf(name);
    return i >= 0 ? argv[i + 1] : undefined;
  };
  const from = arg("--from");
  if (!from) throw new Error("--from FILE is required (written by npm run eval -- --json FILE)");
  const cal = await load(from);
  let best: { k: ScoringConstants; score: number[] } | undefined;
  let tried = 0;
  for (const k of candidates()) {
    tried++;
    const score = objective(rescore(cal, k));
    if (!best || better(score, best.score)) best = { k, score };
  }
  if (!best) throw new Error("no candidate constants");
  const current = computeMetrics(rescore(cal, SCORING));
  process.stdout.write(`${formatMetrics(current, "calibration set, current SCORING")}\n\n`);
  process.stdout.write(
    `${formatMetrics(computeMetrics(rescore(cal, best.k)), `calibration set, best of ${tried} candidates`)}\n`,
  );
  const chosen = Object.fromEntries(
    Object.entries(best.k).filter(
      ([key, v]) => JSON.stringify(v) !== JSON.stringify(SCORING[key as keyof typeof SCORING]),
    ),
  );
  process.stdout.write(
    `changed constants: ${JSON.stringify(chosen)}\nobjective [weakest kind, AUC, F1, margin]: ${JSON.stringify(best.score)}\n`,
  );
  const holdout = arg("--holdout");
  if (holdout) {
    const set = await load(holdout);
    process.stdout.write(
      `\n${formatMetrics(computeMetrics(rescore(set, SCORING)), "held-out set, current SCORING")}\n`,
    );
    process.stdout.write(
      `\n${formatMetrics(computeMetrics(rescore(set, best.k)), "held-out set, chosen constants")}\n`,
    );
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`calibrate failed: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exitCode = 1;
});
