import { describe, expect, it } from "vitest";
import type { CheckResult, Finding } from "../core/check-result.js";
import { type DetectionPolicyInput, parsePolicy } from "../core/policy.js";
import type { AgentInput } from "./engine.js";
import { applyPolicy, holds, POLICY_CHECK_ID } from "./policy.js";
import { analyzeWithRules } from "./rules-engine.js";

const policyOf = (p: Partial<DetectionPolicyInput>) => {
  const r = parsePolicy({ name: "acme", version: 3, ...p });
  if (!r.ok) throw new Error(r.problems.join("; "));
  return r.policy;
};

const flagged = (checkId: string, findings: Finding[]): CheckResult => ({
  checkId,
  outcome: "flag",
  severity: Math.max(...findings.map((f) => f.severity ?? 0)),
  summary: `${checkId} flagged.`,
  findings,
});

const producerEditor = flagged("metadata.producer", [
  { code: "producer_names_editor", message: "The producer is an editor.", severity: 4, kind: "provenance" },
]);
const fonts = flagged("fonts.consistency", [
  {
    code: "value_font_differs",
    message: "A value in another face.",
    severity: 4,
    kind: "appearance",
    page: 1,
    bbox: [100, 700, 140, 710],
  },
]);

const input = (checks: CheckResult[], extra: Partial<AgentInput> = {}): AgentInput => ({
  declaredDocType: "invoice",
  region: "DE",
  text: "--- page 1 ---\nRechnung Nr. 1 Rechnungsdatum Summe Netto MwSt Gesamtbetrag",
  checks,
  discovered: [],
  facts: { producer: "PDFescape Online 5", creator: "PDFescape" },
  ...extra,
});

describe("policy validation", () => {
  it("names the field that is wrong", () => {
    const r = parsePolicy({
      name: "acme",
      version: 1,
      severity: [{ check: "metadata.producer", code: "producer_names_editor", severity: 9 }],
    });
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.problems.join()).toMatch(/severity\.0\.decidesAlone: .*decide alone/);
  });

  it("refuses to switch signature.pdf off, bad bands, unknown fields and invalid regular expressions", () => {
    const bad = [
      { checksOff: ["signature.pdf"] },
      { bands: { moderate: 70, high: 60 } },
      { severity: [{ check: "fonts.consistency", code: "x", severity: 3, extra: 1 }] },
      { producers: { allowed: ["/([/"] } },
      { rules: [{ name: "r", when: { docType: ["invoice"] }, atLeast: "proof" }] },
      { version: 0 },
    ];
    for (const b of bad) {
      const r = parsePolicy({ name: "acme", version: 1, ...b });
      expect(r.ok, JSON.stringify(b)).toBe(false);
    }
  });
});

describe("applying a policy", () => {
  it("the default rules: a producer finding alone stays below 50 and the reasoning names no policy", () => {
    const r = analyzeWithRules(input([producerEditor]));
    expect(r.verdict.fraudScore).toBeLessThan(50);
    expect(r.verdict.reasoning).not.toMatch(/policy acme/);
    expect(r.verdict.policy).toEqual({ name: "default", version: 1 });
  });

  it("a producer marked as deciding alone takes the document to 50 and the reasoning says so", () => {
    const policy = policyOf({
      producers: {
        flagged: [{ pattern: "pdfescape", level: "proof", decidesAlone: true, reason: "an online editor" }],
      },
    });
    const r = analyzeWithRules(input([producerEditor], { policy }));
    expect(r.verdict.fraudScore).toBeGreaterThanOrEqual(50);
    expect(r.verdict.reasoning).toMatch(/policy acme v3/);
    expect(r.verdict.reasoning).toMatch(/deciding alone/);
    expect(r.verdict.policy).toEqual({ name: "acme", version: 3 });
    expect(r.verdict.perCheck.map((p) => p.checkId)).not.toContain(POLICY_CHECK_ID);
  });

  it("a severity override decides only when the policy says the finding decides alone", () => {
    const capped = policyOf({
      severity: [{ check: "fonts.consistency", code: "value_font_differs", severity: 7 }],
    });
    expect(analyzeWithRules(input([fonts], { policy: capped })).verdict.fraudScore).toBeLessThan(50);
    const alone = policyOf({
      severity: [{ check: "fonts.consistency", code: "value_font_differs", severity: 8, decidesAlone: true }],
    });
    const r = analyzeWithRules(input([fonts], { policy: alone }));
    expect(r.verdict.fraudScore).toBeGreaterThanOrEqual(50);
    expect(r.verdict.reasoning).toMatch(
      /value_font_differs counts with severity 8 \(default 4\).*decides alone/,
    );
  });

  it("allowed producers drop provenance findings; switched-off checks count as skipped", () => {
    const policy = policyOf({ producers: { allowed: ["pdfescape"] }, checksOff: ["fonts.consistency"] });
    const a = applyPolicy(policy, [producerEditor, fonts], {
      declaredDocType: "invoice",
      region: "DE",
      producer: "PDFescape Online 5",
      discovered: [],
    });
    expect(a.checks[0]).toMatchObject({ outcome: "pass", findings: [] });
    expect(a.checks[1]).toMatchObject({ outcome: "skip", summary: "Switched off by policy acme v3." });
    expect(a.departures).toHaveLength(2);
  });

  it("a rule over the declared type and the producer adds a finding at its level", () => {
    const policy = policyOf({
      rules: [
        {
          name: "editor invoices",
          when: { all: [{ docType: ["invoice"] }, { producer: ["/escape/"] }] },
          atLeast: "specific",
        },
      ],
    });
    const r = analyzeWithRules(input([fonts], { policy }));
    // A document-wide specific rule corroborates the placed appearance finding of another kind.
    expect(r.verdict.fraudScore).toBeGreaterThanOrEqual(50);
    expect(r.verdict.reasoning).toMatch(/rule "editor invoices" of policy acme v3 holds/);
    const other = analyzeWithRules(input([fonts], { policy, declaredDocType: "payslip" }));
    expect(other.verdict.fraudScore).toBeLessThan(50);
  });

  it("evaluates conditions", () => {
    const facts = {
      declaredDocType: "invoice" as const,
      region: "de",
      producer: "Acme Billing",
      discovered: ["qr_present"],
    };
    expect(holds({ any: [{ region: ["FR"] }, { discovered: "qr_present" }] }, [], facts)).toBe(true);
    expect(holds({ not: { producer: ["acme"] } }, [], facts)).toBe(false);
    expect(holds({ finding: { check: "fonts.consistency", minSeverity: 4 } }, [fonts], facts)).toBe(true);
    expect(holds({ finding: { code: "value_font_differs", minSeverity: 5 } }, [fonts], facts)).toBe(false);
  });
});
