import { z } from "zod";
import { setCondition } from "./conditions.js";
import { Condition as ResourceCondition } from "./detection.js";
import { DEFAULT_POLICY, DetectionPolicySpec, type PolicyRef, parsePolicy } from "./policy.js";
import { API_GROUP_VERSION, ObjectMeta } from "./resource.js";
import { defineStored } from "./stored.js";

/**
 * A tenant's policy as a resource (issue 26, docs/tuning.md): in the cluster a `DetectionPolicy` custom
 * resource, standalone the same resource kept by the local store and written from policy files
 * (DOCVERIFY_POLICIES). Its spec is the policy of core/policy.ts without `name` (the resource's name is the
 * policy's). The operator's policy reconciler (operator/policy-reconciler.ts) validates every change and keeps
 * the last valid one in `status.inForce`: an invalid edit is refused (condition Valid=False, naming the field
 * that is wrong) and the version in force stays in force (condition InUse).
 */
export const DETECTION_POLICY_KIND = "DetectionPolicy";
export const DETECTION_POLICY_PLURAL = "detectionpolicies";
export const DETECTION_POLICY_SHORT_NAME = "dpol";

/** The stored spec: any JSON object (validated by the reconciler, so an invalid one can be reported). */
export const DetectionPolicyResourceSpec = z.record(z.string(), z.unknown());

export const DetectionPolicyStatus = z.object({
  observedGeneration: z.number().int().optional(),
  conditions: z.array(ResourceCondition).optional(),
  /** The version in force: the last valid spec, with the generation it was read from. */
  inForce: z
    .object({
      version: z.number().int().min(1),
      generation: z.number().int().optional(),
      since: z.string(),
      /** The validated policy (core/policy.ts), name included. */
      policy: z.record(z.string(), z.unknown()),
    })
    .optional(),
});
export type DetectionPolicyStatus = z.infer<typeof DetectionPolicyStatus>;

export const DetectionPolicy = z.object({
  apiVersion: z.literal(API_GROUP_VERSION),
  kind: z.literal(DETECTION_POLICY_KIND),
  metadata: ObjectMeta,
  spec: DetectionPolicyResourceSpec,
  status: DetectionPolicyStatus.optional(),
});
export type DetectionPolicy = z.infer<typeof DetectionPolicy>;

/** JSON with object keys sorted: the apiserver stores objects with their keys in its own order. */
export function canonicalJson(v: unknown): string {
  return JSON.stringify(v, (_k, x) =>
    x && typeof x === "object" && !Array.isArray(x)
      ? Object.fromEntries(Object.keys(x).sort().map((k) => [k, (x as Record<string, unknown>)[k]]))
      : x,
  );
}

/** A DetectionPolicy resource holding `spec` (a policy without its name). */
export function detectionPolicyResource(name: string, spec: Record<string, unknown>): DetectionPolicy {
  return {
    apiVersion: API_GROUP_VERSION,
    kind: DETECTION_POLICY_KIND,
    metadata: { name },
    spec,
  };
}

/** The policy a resource's spec describes (its name is the resource's), or what is wrong with it. */
export const parsePolicyResource = (p: Pick<DetectionPolicy, "metadata" | "spec">) => {
  const { name: _ignored, ...rest } = p.spec;
  return parsePolicy({ ...rest, name: p.metadata.name });
};

/**
 * The status a policy resource gets for its current spec (pure): Valid and InUse conditions, and the
 * version in force (the new spec when valid; otherwise the one before stays). A valid spec whose version is
 * not above the version in force (an edit that forgot to raise it) is refused too: a detection names the
 * policy by name and version, so one version must always mean one content.
 */
export function policyStatusFor(p: DetectionPolicy, now: Date): DetectionPolicyStatus {
  const status = p.status ?? {};
  const at = { now, generation: p.metadata.generation };
  const parsed = parsePolicyResource(p);
  let inForce = status.inForce;
  let conditions = status.conditions;
  const same =
    parsed.ok && inForce !== undefined && canonicalJson(inForce.policy) === canonicalJson(parsed.policy);
  const problems = parsed.ok
    ? !same && inForce !== undefined && parsed.policy.version <= inForce.version
      ? [`version: raise it above ${inForce.version} (the version in force) when the policy changes`]
      : []
    : parsed.problems;
  if (problems.length === 0 && parsed.ok) {
    if (!same)
      inForce = {
        version: parsed.policy.version,
        ...(p.metadata.generation !== undefined ? { generation: p.metadata.generation } : {}),
        since: now.toISOString(),
        policy: parsed.policy as unknown as Record<string, unknown>,
      };
    conditions = setCondition(
      conditions,
      {
        type: "Valid",
        status: "True",
        reason: "Validated",
        message: `Version ${parsed.policy.version} is valid.`,
      },
      at,
    );
  } else {
    conditions = setCondition(
      conditions,
      {
        type: "Valid",
        status: "False",
        reason: "Invalid",
        message: `Refused: ${problems.join("; ")}.`.slice(0, 2000),
      },
      at,
    );
  }
  conditions = setCondition(
    conditions,
    inForce
      ? {
          type: "InUse",
          status: "True",
          reason: "InForce",
          message: `Version ${inForce.version} is in force: new detections of the clients that name this policy are scored under it.`,
        }
      : {
          type: "InUse",
          status: "False",
          reason: "NoValidVersion",
          message:
            "No valid version yet: the clients that name this policy are scored under the default rules.",
        },
    at,
  );
  return {
    ...status,
    ...(p.metadata.generation !== undefined ? { observedGeneration: p.metadata.generation } : {}),
    conditions,
    ...(inForce ? { inForce } : {}),
  };
}

/** The policy in force on a resource, if any. */
export function policyInForce(p: DetectionPolicy | undefined): DetectionPolicySpec | undefined {
  const held = p?.status?.inForce?.policy;
  if (!held) return undefined;
  const r = DetectionPolicySpec.safeParse(held);
  return r.success ? r.data : undefined;
}

/** The snapshot of the policy a detection was admitted under (keys.policy), beside its step results. */
export const POLICY_SNAPSHOT = defineStored({
  what: "the detection's policy snapshot",
  key: (detection: string) => `runs/${detection}/policy.json`,
  schema: DetectionPolicySpec,
});

/** The default policy's reference. */
export const DEFAULT_POLICY_REF: PolicyRef = { name: DEFAULT_POLICY.name, version: DEFAULT_POLICY.version };

/** Where the operator finds a named policy (the policy resources' store). */
export interface PolicySource {
  /** The version in force of the policy `name`; undefined when there is none (unknown, or never valid). */
  inForce(name: string): Promise<DetectionPolicySpec | undefined>;
}
