/**
 * `npm run bench:policy` (also printed by `npm run bench`): what a tenant policy adds to a detection's
 * analysis (issue 26; target ≤ 5 ms p95). The same check results are analysed by the rules engine under the
 * default rules and under a large policy (120 severity overrides, 60 producer patterns of which 20 regular
 * expressions, 30 nested rules, bands), interleaved, and the per-detection difference is reported with the
 * time of applyPolicy alone. Asserts nothing. The snapshot read the agent step adds (one small object from
 * the store) is not in these figures: it is one GET of a few KB.
 */
import { performance } from "node:perf_hooks";
import { applyPolicy } from "../agent/policy.js";
import { analyzeWithRules } from "../agent/rules-engine.js";
import type { CheckResult, Finding } from "../core/check-result.js";
import { EVIDENCE_KINDS } from "../core/finding-levels.js";
import { parsePolicy } from "../core/policy.js";
import { Rng } from "../fixtures/random.js";

const ITERATIONS = Number(process.env.BENCH_POLICY_ITERATIONS ?? 2000);

function checksOf(seed: number): CheckResult[] {
  const rng = new Rng(seed);
  const ids = [
    "metadata.dates",
    "metadata.producer",
    "fonts.consistency",
    "layout.overlay",
    "text.arithmetic",
    "text.identifiers",
    "pdf.revisions",
    "pdf.structure",
    "qr.codes",
    "file.type",
    "signature.pdf",
    "image.metadata",
    "pixels.noise",
    "pixels.glyphs",
    "pixels.compression",
  ];
  return ids.map((checkId, c) => {
    const n = rng.int(0, 3);
    const findings: Finding[] = Array.from({ length: n }, (_, i) => ({
      code: `code_${c}_${i}`,
      message: `Finding ${i} of ${checkId}.`,
      severity: rng.int(1, 9),
      kind: EVIDENCE_KINDS[rng.int(0, EVIDENCE_KINDS.length - 1)],
      page: rng.int(1, 3),
      bbox: [rng.int(50, 400), rng.int(50, 700), rng.int(410, 560), rng.int(710, 780)],
    }));
    const top = findings.reduce((m, f) => Math.max(m, f.severity ?? 0), 0);
    return {
      checkId,
      outcome: findings.length ? "flag" : "pass",
      severity: findings.length ? top : 0,
      summary: `${checkId}: ${findings.length} finding(s).`,
      findings,
    } as CheckResult;
  });
}

const big = parsePolicy({
  name: "bench",
  version: 7,
  severity: Array.from({ length: 120 }, (_, i) => ({
    check: ["metadata.dates", "fonts.consistency", "layout.overlay", "text.arithmetic"][i % 4],
    code: `code_${i % 15}_${i % 3}`,
    severity: i % 8,
  })),
  producers: {
    allowed: Array.from({ length: 20 }, (_, i) => `Issuer Billing ${i}`),
    flagged: Array.from({ length: 40 }, (_, i) =>
      i % 2 ? { pattern: `Suspicious Tool ${i}` } : { pattern: `/^Forger[a-z]* ${i}(\\.\\d+)*$/` },
    ),
  },
  bands: { moderate: 30, high: 60 },
  rules: Array.from({ length: 30 }, (_, i) => ({
    name: `rule ${i}`,
    when: {
      all: [
        { docType: ["invoice", "bank_statement"] },
        { any: [{ finding: { check: "metadata.producer", minSeverity: 3 } }, { producer: [`Tool ${i}`] }] },
        { not: { region: ["DE"] } },
      ],
    },
    atLeast: i % 3 ? "anomaly" : "specific",
  })),
});
if (!big.ok) throw new Error(big.problems.join("; "));

const text = `--- page 1 ---\n${"Statement of account Balance brought forward 1,234.56 Payment received ".repeat(300)}`;
const inputs = Array.from({ length: 50 }, (_, i) => ({
  declaredDocType: "bank_statement" as const,
  region: "GB",
  text,
  checks: checksOf(100 + i),
  discovered: [],
  facts: { producer: `Issuer Billing ${i % 30}`, creator: "Word" },
}));

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)]!;
};
const plain: number[] = [];
const withPolicy: number[] = [];
const applyOnly: number[] = [];
for (let i = 0; i < ITERATIONS; i++) {
  const input = inputs[i % inputs.length]!;
  const t0 = performance.now();
  analyzeWithRules(input);
  const t1 = performance.now();
  analyzeWithRules({ ...input, policy: big.policy });
  const t2 = performance.now();
  applyPolicy(big.policy, input.checks, {
    declaredDocType: "bank_statement",
    region: "GB",
    discovered: [],
    ...input.facts,
  });
  const t3 = performance.now();
  if (i >= 100) {
    plain.push(t1 - t0);
    withPolicy.push(t2 - t1);
    applyOnly.push(t3 - t2);
  }
}
const f = (ms: number) => `${ms.toFixed(3)} ms`;
const line = (what: string, xs: number[]) => `  ${what.padEnd(36)} p50 ${f(pct(xs, 50))}, p95 ${f(pct(xs, 95))}\n`;
process.stdout.write(
  `policy evaluation per detection (${plain.length} detections; a policy of 120 overrides, 40 flagged patterns, 30 rules):\n` +
    line("applyPolicy (what the policy adds):", applyOnly) +
    line("rules engine, default rules:", plain) +
    line("rules engine, under the policy:", withPolicy) +
    `  difference of the medians: ${f(pct(withPolicy, 50) - pct(plain, 50))} (target: policy evaluation ≤ 5 ms p95)\n`,
);
