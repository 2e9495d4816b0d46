import type { CheckResult, Finding } from "../core/check-result.js";
import { LEVEL_SEVERITY } from "../core/finding-levels.js";
import {
  type Condition,
  compilePattern,
  DEFAULT_POLICY,
  type DetectionPolicySpec,
  type PolicyRef,
} from "../core/policy.js";
import type { DocType } from "../core/verdict.js";

/**
 * A tenant's policy applied to a detection's check results before the score (issue 26): pure, and it never
 * re-runs a check, so a detection can be re-scored under another policy from what it stored. Every departure
 * from the default rules is a sentence for the reasoning, naming the policy and its version.
 *
 * - checks switched off: their results count as skipped (never signature.pdf: the schema refuses it);
 * - severity overrides per check and code: the finding counts with the policy's severity (the appearance cap
 *   of the default rules does not apply to it; 8 or more only with decidesAlone, and then it decides);
 * - producers allowed: provenance findings of a document whose producer or creator matches are dropped;
 * - producers flagged and rules: a finding of the check id `policy` at the level the policy gives (a
 *   document-wide finding: at "specific" it corroborates a placed finding of another kind, at "proof" with
 *   decidesAlone it decides).
 */

/** The check id of the findings a policy adds (never a real check's id). */
export const POLICY_CHECK_ID = "policy";

/** What the policy reads besides the check results. */
export interface PolicyFacts {
  declaredDocType: DocType;
  region: string;
  producer?: string;
  creator?: string;
  discovered: readonly string[];
}

/** How a finding counts under the policy (for agent/score.ts). */
export interface FindingOverride {
  severity: number;
  decidesAlone: boolean;
}

export interface PolicyApplication {
  policy: PolicyRef;
  checks: CheckResult[];
  /** Findings whose severity the policy set (identity of the objects in `checks`). */
  overrides: Map<Finding, FindingOverride>;
  /** One sentence per departure from the default rules. */
  departures: string[];
  bands?: { moderate: number; high: number };
}

const levelSeverity = (level: keyof typeof LEVEL_SEVERITY, decidesAlone: boolean | undefined) =>
  level === "proof"
    ? decidesAlone
      ? LEVEL_SEVERITY.proof[0]
      : LEVEL_SEVERITY.specific[1]
    : LEVEL_SEVERITY[level][1];

const matchesAny = (patterns: readonly string[], value: string | undefined) =>
  value !== undefined && value !== "" && patterns.some((p) => compilePattern(p)?.(value) ?? false);

/** Whether a condition holds for the checks and facts. */
export function holds(c: Condition, checks: readonly CheckResult[], facts: PolicyFacts): boolean {
  if ("all" in c) return c.all.every((x) => holds(x, checks, facts));
  if ("any" in c) return c.any.some((x) => holds(x, checks, facts));
  if ("not" in c) return !holds(c.not, checks, facts);
  if ("docType" in c) return c.docType.includes(facts.declaredDocType);
  if ("region" in c) return c.region.some((r) => r.toUpperCase() === facts.region.toUpperCase());
  if ("producer" in c) return matchesAny(c.producer, facts.producer);
  if ("creator" in c) return matchesAny(c.creator, facts.creator);
  if ("discovered" in c) return facts.discovered.includes(c.discovered);
  const f = c.finding;
  return checks.some(
    (check) =>
      check.outcome === "flag" &&
      (f.check === undefined || check.checkId === f.check) &&
      check.findings.some(
        (x) => (f.code === undefined || x.code === f.code) && (x.severity ?? 0) >= (f.minSeverity ?? 1),
      ),
  );
}

const named = (p: PolicyRef) => `policy ${p.name} v${p.version}`;

/** Applies a policy (the default one changes nothing). */
export function applyPolicy(
  policy: DetectionPolicySpec,
  input: readonly CheckResult[],
  facts: PolicyFacts,
): PolicyApplication {
  const ref: PolicyRef = { name: policy.name, version: policy.version };
  const who = named(ref);
  const departures: string[] = [];
  const overrides = new Map<Finding, FindingOverride>();
  const off = new Set(policy.checksOff);
  const allowedProducer =
    policy.producers.allowed.length > 0 &&
    (matchesAny(policy.producers.allowed, facts.producer) ||
      matchesAny(policy.producers.allowed, facts.creator));
  const bySeverity = new Map(policy.severity.map((o) => [`${o.check}:${o.code}`, o]));

  const checks: CheckResult[] = input.map((check) => {
    if (off.has(check.checkId)) {
      if (check.outcome === "flag")
        departures.push(
          `${check.checkId} is switched off by ${who}; its ${check.findings.length} finding(s) were not counted.`,
        );
      return {
        checkId: check.checkId,
        outcome: "skip",
        severity: 0,
        summary: `Switched off by ${who}.`,
        findings: [],
      };
    }
    let changed = false;
    const findings: Finding[] = [];
    for (const f of check.findings) {
      if (allowedProducer && f.kind === "provenance" && (f.severity ?? 0) > 0) {
        changed = true;
        departures.push(
          `${check.checkId} ${f.code} was not counted: ${who} lists this document's producer as one of its issuers' own.`,
        );
        continue;
      }
      const o = bySeverity.get(`${check.checkId}:${f.code}`);
      if (!o) {
        findings.push(f);
        continue;
      }
      const copy: Finding = { ...f, severity: o.severity };
      overrides.set(copy, { severity: o.severity, decidesAlone: o.decidesAlone === true });
      findings.push(copy);
      changed = true;
      if (o.severity !== (f.severity ?? 0))
        departures.push(
          `${check.checkId} ${f.code} counts with severity ${o.severity} (default ${f.severity ?? 0}) under ${who}${
            o.decidesAlone ? ", and decides alone" : ""
          }${o.reason ? `: ${o.reason}` : ""}.`,
        );
    }
    if (!changed) return check;
    const top = findings.reduce((m, f) => Math.max(m, f.severity ?? 0), 0);
    return {
      ...check,
      findings,
      outcome:
        check.outcome === "flag" || check.outcome === "pass" ? (top >= 2 ? "flag" : "pass") : check.outcome,
      severity: top >= 2 ? top : 0,
    };
  });

  const added: Finding[] = [];
  for (const flagged of policy.producers.flagged) {
    const which = matchesAny([flagged.pattern], facts.producer)
      ? `producer ${JSON.stringify(facts.producer)}`
      : matchesAny([flagged.pattern], facts.creator)
        ? `creator ${JSON.stringify(facts.creator)}`
        : undefined;
    if (!which) continue;
    const severity = levelSeverity(flagged.level, flagged.decidesAlone);
    const f: Finding = {
      code: "producer_flagged",
      message: `The ${which} is one ${who} flags${flagged.reason ? ` (${flagged.reason})` : ""}.`,
      severity,
      kind: "policy",
      evidence: { policy: ref.name, version: ref.version, pattern: flagged.pattern },
    };
    overrides.set(f, { severity, decidesAlone: flagged.decidesAlone === true });
    added.push(f);
    departures.push(
      `${who} flags the ${which} at level ${flagged.level}${flagged.decidesAlone ? ", deciding alone" : ""}${
        flagged.reason ? `: ${flagged.reason}` : ""
      }.`,
    );
  }
  for (const rule of policy.rules) {
    if (!holds(rule.when, checks, facts)) continue;
    const severity = levelSeverity(rule.atLeast, rule.decidesAlone);
    const f: Finding = {
      code: "rule_matched",
      message: `The rule "${rule.name}" of ${who} holds${rule.reason ? ` (${rule.reason})` : ""}: at least ${rule.atLeast}.`,
      severity,
      kind: "policy",
      evidence: { policy: ref.name, version: ref.version, rule: rule.name },
    };
    overrides.set(f, { severity, decidesAlone: rule.decidesAlone === true });
    added.push(f);
    departures.push(
      `The rule "${rule.name}" of ${who} holds, so the document counts at least at level ${rule.atLeast}${
        rule.decidesAlone ? " and that decides alone" : ""
      }${rule.reason ? `: ${rule.reason}` : ""}.`,
    );
  }
  if (added.length > 0) {
    const top = Math.max(...added.map((f) => f.severity ?? 0));
    checks.push({
      checkId: POLICY_CHECK_ID,
      outcome: top >= 2 ? "flag" : "pass",
      severity: top >= 2 ? top : 0,
      summary: `What ${who} adds to the checks' findings.`,
      findings: added,
    });
  }
  if (policy.bands)
    departures.push(
      `${who} sets the score bands: moderate from ${policy.bands.moderate}, high from ${policy.bands.high}.`,
    );
  return { policy: ref, checks, overrides, departures, ...(policy.bands ? { bands: policy.bands } : {}) };
}

/** The default policy's application (nothing changes). */
export const defaultApplication = (checks: readonly CheckResult[], facts: PolicyFacts) =>
  applyPolicy(DEFAULT_POLICY, checks, facts);
