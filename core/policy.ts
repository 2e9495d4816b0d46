import { z } from "zod";
import { FINDING_LEVELS } from "./finding-levels.js";
import { DOC_TYPES } from "./verdict.js";

/**
 * A tenant's detection policy (issue 26): how the score departs from the default rules of docs/calibration.md
 * ("Levels and corroboration") for one customer's documents — as data, validated on load, versioned, recorded
 * on every detection and quoted in its reasoning. No code runs from a policy: conditions are a small
 * declarative form over the check results and the declared fields.
 *
 * The default policy is the empty one: the corroboration rules apply unchanged.
 */

/** The check that may never be switched off: the contract's authoritative check. */
export const UNSWITCHABLE_CHECKS = ["signature.pdf"] as const;

const checkId = z
  .string()
  .regex(/^[a-z][a-z0-9]*(\.[a-z][a-z0-9_]*)+$/, "a check id such as fonts.consistency");
const code = z.string().regex(/^[a-z][a-z0-9_]*$/, "a finding code such as value_font_differs");
/** A producer or creator pattern: a case-insensitive substring, or /regex/ between slashes. */
const pattern = z
  .string()
  .min(1)
  .max(200)
  .refine((p) => !p.startsWith("/") || compilePattern(p) !== undefined, "an invalid /regular expression/");
const level = z.enum(FINDING_LEVELS);

export const SeverityOverride = z
  .object({
    check: checkId,
    code,
    /** The severity the finding counts with (0 switches the code off). */
    severity: z.number().int().min(0).max(10),
    /**
     * Above "specific" (severity 8 or more) a finding decides alone, and the policy must say so explicitly:
     * the reasoning then says that this policy made the finding decide.
     */
    decidesAlone: z.boolean().optional(),
    reason: z.string().max(300).optional(),
  })
  .strict()
  .superRefine((o, ctx) => {
    if (o.severity >= 8 && o.decidesAlone !== true)
      ctx.addIssue({
        code: "custom",
        path: ["decidesAlone"],
        message: "a severity of 8 or more makes the finding decide alone: set decidesAlone: true to say so",
      });
    if (o.decidesAlone === true && o.severity < 8)
      ctx.addIssue({
        code: "custom",
        path: ["severity"],
        message: "a finding that decides alone has a severity of 8 or more",
      });
  });
export type SeverityOverride = z.infer<typeof SeverityOverride>;

export type Condition =
  | { all: Condition[] }
  | { any: Condition[] }
  | { not: Condition }
  | { docType: (typeof DOC_TYPES)[number][] }
  | { region: string[] }
  | { producer: string[] }
  | { creator: string[] }
  | { finding: { check?: string; code?: string; minSeverity?: number } }
  | { discovered: string };

export const Condition: z.ZodType<Condition> = z.lazy(() =>
  z.union([
    z.object({ all: z.array(Condition).min(1).max(20) }).strict(),
    z.object({ any: z.array(Condition).min(1).max(20) }).strict(),
    z.object({ not: Condition }).strict(),
    z.object({ docType: z.array(z.enum(DOC_TYPES)).min(1) }).strict(),
    z.object({ region: z.array(z.string().regex(/^[A-Za-z]{2}$/)).min(1) }).strict(),
    z.object({ producer: z.array(pattern).min(1).max(50) }).strict(),
    z.object({ creator: z.array(pattern).min(1).max(50) }).strict(),
    z
      .object({
        finding: z
          .object({
            check: checkId.optional(),
            code: code.optional(),
            minSeverity: z.number().int().min(0).max(10).optional(),
          })
          .strict(),
      })
      .strict(),
    z.object({ discovered: z.string().min(1).max(64) }).strict(),
  ]),
);

export const PolicyRule = z
  .object({
    /** A name the reasoning quotes. */
    name: z.string().min(1).max(80),
    when: Condition,
    /** The document counts at least at this level of evidence when the condition holds. */
    atLeast: level,
    /** Only with atLeast "proof": the rule decides alone, and the policy says so explicitly. */
    decidesAlone: z.boolean().optional(),
    reason: z.string().max(300).optional(),
  })
  .strict()
  .superRefine((r, ctx) => {
    if (r.atLeast === "proof" && r.decidesAlone !== true)
      ctx.addIssue({
        code: "custom",
        path: ["decidesAlone"],
        message: 'a rule at least "proof" decides alone: set decidesAlone: true to say so',
      });
  });
export type PolicyRule = z.infer<typeof PolicyRule>;

export const DetectionPolicySpec = z
  .object({
    /** A DNS label (the custom resource's name in a cluster). */
    name: z.string().regex(/^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/, "a lowercase DNS label"),
    /** Increases with every change; recorded on each detection. */
    version: z.number().int().min(1),
    description: z.string().max(1000).optional(),
    severity: z.array(SeverityOverride).max(500).default([]),
    producers: z
      .object({
        /** Producers or creators this tenant knows to be its issuers' own: provenance findings about them are dropped. */
        allowed: z.array(pattern).max(200).default([]),
        /** Producers or creators this tenant distrusts: a finding at the given level. */
        flagged: z
          .array(
            z
              .object({
                pattern,
                level: level.default("anomaly"),
                decidesAlone: z.boolean().optional(),
                reason: z.string().max(300).optional(),
              })
              .strict(),
          )
          .max(200)
          .default([]),
      })
      .strict()
      .default({ allowed: [], flagged: [] }),
    /** Checks whose findings this tenant does not want counted (never signature.pdf). */
    checksOff: z
      .array(checkId)
      .max(50)
      .default([])
      .refine((ids) => ids.every((id) => !(UNSWITCHABLE_CHECKS as readonly string[]).includes(id)), {
        message: "signature.pdf is the contract's authoritative check and cannot be switched off",
      }),
    /** Score bands of the reasoning's first sentence. */
    bands: z
      .object({ moderate: z.number().int().min(1).max(99), high: z.number().int().min(1).max(100) })
      .strict()
      .refine((b) => b.moderate < b.high, { message: "moderate must be below high" })
      .optional(),
    rules: z.array(PolicyRule).max(100).default([]),
  })
  .strict()
  .superRefine((p, ctx) => {
    for (const flagged of p.producers.flagged) {
      if (flagged.level === "proof" && flagged.decidesAlone !== true)
        ctx.addIssue({
          code: "custom",
          path: ["producers", "flagged"],
          message: `producer ${JSON.stringify(flagged.pattern)} at level "proof" decides alone: set decidesAlone: true to say so`,
        });
    }
  });
export type DetectionPolicySpec = z.infer<typeof DetectionPolicySpec>;
export type DetectionPolicyInput = z.input<typeof DetectionPolicySpec>;

/** The policy every tenant has until it sets its own: the default rules, unchanged. */
export const DEFAULT_POLICY: DetectionPolicySpec = DetectionPolicySpec.parse({ name: "default", version: 1 });

/** How a detection records the policy it was scored under. */
export interface PolicyRef {
  name: string;
  version: number;
}

/** A case-insensitive test for a pattern (a substring, or /regex/flags); undefined for an invalid regex. */
export function compilePattern(p: string): ((s: string) => boolean) | undefined {
  const m = /^\/(.+)\/([a-z]*)$/.exec(p);
  if (!m) {
    const needle = p.toLowerCase();
    return (s) => s.toLowerCase().includes(needle);
  }
  try {
    const re = new RegExp(m[1] as string, (m[2] ?? "").includes("i") ? m[2] : `${m[2] ?? ""}i`);
    return (s) => re.test(s);
  } catch {
    return undefined;
  }
}

/**
 * Validates a policy: the policy, or every problem with the path of the field that is wrong
 * (`severity.2.decidesAlone: …`).
 */
export function parsePolicy(
  input: unknown,
): { ok: true; policy: DetectionPolicySpec } | { ok: false; problems: string[] } {
  const r = DetectionPolicySpec.safeParse(input);
  if (r.success) return { ok: true, policy: r.data };
  return {
    ok: false,
    problems: r.error.issues.map((i) => `${i.path.length ? i.path.join(".") : "(policy)"}: ${i.message}`),
  };
}
