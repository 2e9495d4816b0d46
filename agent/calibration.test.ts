import { describe, expect, it } from "vitest";
import type { CheckResult } from "../core/check-result.js";
import { DEFAULT_POLICY, parsePolicy } from "../core/policy.js";
import { calibrationReport, type LabelledDetection, MIN_FIRED, predictionInterval } from "./calibration.js";
import { rescore, summarizeRescore } from "./rescore.js";

const flag = (checkId: string, code: string, severity: number, kind: string): CheckResult => ({
  checkId,
  outcome: "flag",
  severity,
  summary: `${checkId} flagged.`,
  findings: [
    { code, message: `${code}.`, severity, kind: kind as never, page: 1, bbox: [100, 100, 200, 120] },
  ],
});
const pass = (checkId: string): CheckResult => ({
  checkId,
  outcome: "pass",
  severity: 0,
  summary: "ok",
  findings: [],
});

const subject = (id: string, checks: CheckResult[]) => ({
  id,
  spec: { docType: "bank_statement" as const, region: "GB" },
  recorded: { score: 0, engine: "rules" },
  check: { step: "check" as const, checks, discovered: [] },
  text: "--- page 1 ---\nStatement of account opening balance closing balance",
});
const gap = () => flag("metadata.dates", "long_modification_gap", 3, "provenance");
const proof = () => flag("text.arithmetic", "running_balance_mismatch", 9, "arithmetic");
const rare = () => flag("fonts.consistency", "value_font_differs", 4, "appearance");

const eager = (() => {
  const r = parsePolicy({
    name: "eager",
    version: 1,
    severity: [{ check: "metadata.dates", code: "long_modification_gap", severity: 8, decidesAlone: true }],
  });
  if (!r.ok) throw new Error(r.problems.join());
  return r.policy;
})();

/** 10 genuine re-saved (the gap), 10 genuine plain, 10 fraud with proof; `rare` on 5 genuine ones. */
function history(prefix: string): LabelledDetection[] {
  const out: LabelledDetection[] = [];
  for (let i = 0; i < 10; i++)
    out.push({ label: "genuine", subject: subject(`${prefix}-a${i}`, [gap(), pass("text.arithmetic")]) });
  for (let i = 0; i < 10; i++)
    out.push({
      label: "genuine",
      subject: subject(`${prefix}-b${i}`, i < MIN_FIRED - 1 ? [rare()] : [pass("fonts.consistency")]),
    });
  for (let i = 0; i < 10; i++)
    out.push({ label: "confirmed_fraud", subject: subject(`${prefix}-c${i}`, [proof()]) });
  return out;
}

describe("the calibration report", () => {
  it("counts codes by label, proposes lowering a code that makes genuine documents decide, and cross-validates it", () => {
    const r = calibrationReport(history("h"), eager);
    expect(r.labelled).toEqual({ genuine: 20, fraud: 10 });
    expect(r.current).toEqual({ falsePositives: 10, genuine: 20, detected: 10, fraud: 10 });
    const gapStats = r.codes.find((c) => c.code === "long_modification_gap");
    expect(gapStats).toMatchObject({ firedGenuine: 10, firedFraud: 0, eligible: true });
    // Fired on fewer documents than the minimum: counted, never proposed.
    expect(r.codes.find((c) => c.code === "value_font_differs")).toMatchObject({
      firedGenuine: MIN_FIRED - 1,
      eligible: false,
    });
    expect(r.proposal.severity.map((o) => [o.code, o.severity])).toEqual([["long_modification_gap", 0]]);
    expect(r.proposal.severity.every((o) => o.severity < 8)).toBe(true);
    expect(r.expected).toMatchObject({ falsePositives: 0, detected: 10, fpr: 0, detection: 1 });
    expect(r.expected.fprInterval[0]).toBe(0);
    expect(r.expected.fprInterval[1]).toBeGreaterThan(0);
  });

  it("keeps a code whose lowering would lose more detection rate than false-positive rate it saves", () => {
    // The code fires on all the fraud too, and there it is the only evidence: lowering it would lose them.
    const items = history("t").map((l) =>
      l.label === "confirmed_fraud" ? { ...l, subject: subject(l.subject.id, [gap()]) } : l,
    );
    const r = calibrationReport(items, eager);
    expect(r.proposal.severity).toEqual([]);
    expect(r.expected.detected).toBe(r.current.detected);
  });

  it("prediction intervals widen for a small new set and hold the rate", () => {
    const [lo, hi] = predictionInterval(5, 20);
    expect(lo).toBeLessThan(0.25);
    expect(hi).toBeGreaterThan(0.25);
    const [lo2, hi2] = predictionInterval(5, 20, 1000);
    expect(hi2 - lo2).toBeLessThan(hi - lo);
    expect(predictionInterval(0, 0)).toEqual([0, 1]);
  });
});

describe("re-scoring under another policy", () => {
  it("changes the score without re-running checks, and reports who crosses 50", () => {
    const s = subject("x", [gap()]);
    const under = rescore(s, eager);
    const plain = rescore({ ...s, recorded: { ...s.recorded, score: under.newScore } }, DEFAULT_POLICY);
    expect(under.newScore).toBeGreaterThanOrEqual(50);
    expect(plain.newScore).toBeLessThan(50);
    expect(plain.crossed).toBe("down");
    const llm = rescore({ ...s, recorded: { score: 40, engine: "llm" } }, eager);
    expect(llm).toMatchObject({ newScore: 40, crossed: null });
    expect(llm.note).toContain("llm");
    expect(summarizeRescore([under, plain, llm])).toMatchObject({
      total: 3,
      rescored: 2,
      notRescored: 1,
      crossedDown: 1,
    });
  });
});
