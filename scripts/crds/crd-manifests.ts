import { stringify } from "yaml";
import { type ZodObject, z } from "zod";
import { FINDING_LEVELS } from "../../core/finding-levels.js";
import { DETECTION_KIND, DETECTION_PLURAL, DetectionSpec, DetectionStatus } from "../../core/detection.js";
import {
  DETECTION_JOB_KIND,
  DETECTION_JOB_PLURAL,
  DETECTION_JOB_SHORT_NAME,
  DetectionJobSpec,
  DetectionJobStatus,
} from "../../core/detection-job.js";
import {
  DETECTION_POLICY_KIND,
  DETECTION_POLICY_PLURAL,
  DETECTION_POLICY_SHORT_NAME,
  DetectionPolicyStatus,
} from "../../core/detection-policy.js";
import { DetectionPolicySpec } from "../../core/policy.js";
import { API_GROUP, API_VERSION } from "../../core/resource.js";
import { type StructuralSchema, withValidations, zodToStructural } from "./structural-schema.js";

/**
 * The CustomResourceDefinitions, built from core's zod schemas (scripts/gen-crds.ts writes them to crds/;
 * a unit test fails when the files and these builders drift apart).
 */
export const CATEGORY = "docverify";

/** CEL twin of DetectionSource's refine: exactly one of url, uploadId, object. */
export const EXACTLY_ONE_SOURCE_RULE = {
  rule: "(has(self.url) ? 1 : 0) + (has(self.uploadId) ? 1 : 0) + (has(self.object) ? 1 : 0) == 1",
  message: "exactly one of url, uploadId or object must be set",
};

export interface PrinterColumn {
  name: string;
  type: "string" | "integer" | "number" | "boolean" | "date";
  jsonPath: string;
  description?: string;
  priority?: number;
}

export interface CustomResourceDefinition {
  apiVersion: "apiextensions.k8s.io/v1";
  kind: "CustomResourceDefinition";
  metadata: { name: string; labels: Record<string, string> };
  spec: {
    group: string;
    scope: "Namespaced";
    names: {
      kind: string;
      listKind: string;
      plural: string;
      singular: string;
      shortNames: string[];
      categories: string[];
    };
    versions: {
      name: string;
      served: true;
      storage: true;
      subresources: { status: Record<string, never> };
      additionalPrinterColumns: PrinterColumn[];
      schema: { openAPIV3Schema: StructuralSchema };
    }[];
  };
}

const READY_MESSAGE: PrinterColumn = {
  name: "Message",
  type: "string",
  jsonPath: '.status.conditions[?(@.type=="Ready")].message',
  description: "The Ready condition's message.",
  priority: 1,
};
const AGE: PrinterColumn = { name: "Age", type: "date", jsonPath: ".metadata.creationTimestamp" };

function rootSchema(spec: ZodObject, status: ZodObject, description: string): StructuralSchema {
  return {
    type: "object",
    description,
    properties: {
      apiVersion: { type: "string" },
      kind: { type: "string" },
      metadata: { type: "object" },
      spec: zodToStructural(spec),
      status: zodToStructural(status),
    },
    required: ["spec"],
  };
}

function crd(opts: {
  kind: string;
  plural: string;
  shortName: string;
  schema: StructuralSchema;
  columns: PrinterColumn[];
}): CustomResourceDefinition {
  return {
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "CustomResourceDefinition",
    metadata: {
      name: `${opts.plural}.${API_GROUP}`,
      labels: { "app.kubernetes.io/name": "docverify", "app.kubernetes.io/component": "crd" },
    },
    spec: {
      group: API_GROUP,
      scope: "Namespaced",
      names: {
        kind: opts.kind,
        listKind: `${opts.kind}List`,
        plural: opts.plural,
        singular: opts.kind.toLowerCase(),
        shortNames: [opts.shortName],
        categories: [CATEGORY],
      },
      versions: [
        {
          name: API_VERSION,
          served: true,
          storage: true,
          subresources: { status: {} },
          additionalPrinterColumns: opts.columns,
          schema: { openAPIV3Schema: opts.schema },
        },
      ],
    },
  };
}

export function detectionCrd(): CustomResourceDefinition {
  const schema = withValidations(
    rootSchema(
      DetectionSpec,
      DetectionStatus,
      "A document to verify: the operator fetches it, runs the checks and the analysis agent, and writes the verdict into status.",
    ),
    ["spec", "source"],
    [EXACTLY_ONE_SOURCE_RULE],
  );
  return crd({
    kind: DETECTION_KIND,
    plural: DETECTION_PLURAL,
    shortName: "det",
    schema,
    columns: [
      { name: "Phase", type: "string", jsonPath: ".status.phase" },
      { name: "Score", type: "integer", jsonPath: ".status.score", description: "Fraud score 0-100." },
      {
        name: "Trust",
        type: "string",
        jsonPath: ".status.authoritative.trust",
        description: "Set when an authoritative check (signature.pdf) decided the detection.",
      },
      { name: "DocType", type: "string", jsonPath: ".spec.docType" },
      { name: "Submitter", type: "string", jsonPath: ".spec.submittedBy" },
      AGE,
      READY_MESSAGE,
    ],
  });
}

export function detectionJobCrd(): CustomResourceDefinition {
  return crd({
    kind: DETECTION_JOB_KIND,
    plural: DETECTION_JOB_PLURAL,
    shortName: DETECTION_JOB_SHORT_NAME,
    schema: rootSchema(
      DetectionJobSpec,
      DetectionJobStatus,
      "A batch over an object-store bucket: one Detection per listed object, and a JSONL report when all are done.",
    ),
    columns: [
      { name: "Phase", type: "string", jsonPath: ".status.phase" },
      { name: "Total", type: "integer", jsonPath: ".status.counts.total" },
      { name: "Completed", type: "integer", jsonPath: ".status.counts.completed" },
      { name: "Failed", type: "integer", jsonPath: ".status.counts.failed" },
      { name: "Submitter", type: "string", jsonPath: ".spec.submittedBy" },
      AGE,
      READY_MESSAGE,
    ],
  });
}

/**
 * The DetectionPolicy's spec schema: core/policy.ts's policy without `name` (the resource's name), its
 * rules' `when` conditions left open (they nest, which a structural schema cannot say; the operator
 * validates them, and every rule the apiserver cannot check, reporting the field in condition Valid).
 */
function policySpecSchema(): StructuralSchema {
  const full = zodToStructural(
    z.object({
      ...DetectionPolicySpec.shape,
      rules: z
        .array(
          z
            .object({
              name: z.string().min(1).max(80),
              when: z.record(z.string(), z.unknown()),
              atLeast: z.enum(FINDING_LEVELS),
              decidesAlone: z.boolean().optional(),
              reason: z.string().max(300).optional(),
            })
            .strict(),
        )
        .max(100)
        .default([]),
    }),
  );
  const { name: _name, ...properties } = full.properties ?? {};
  return {
    ...full,
    description: "The policy (docs/tuning.md); its name is the resource's.",
    properties,
    required: (full.required ?? []).filter((r) => r !== "name"),
  };
}

export function detectionPolicyCrd(): CustomResourceDefinition {
  const schema: StructuralSchema = {
    type: "object",
    description:
      "A tenant's detection policy: severity overrides, producers allowed or flagged, checks switched off, score bands and rules. A client names it (`policy` in the clients file); the operator validates every change and keeps the last valid version in force.",
    properties: {
      apiVersion: { type: "string" },
      kind: { type: "string" },
      metadata: { type: "object" },
      spec: policySpecSchema(),
      status: zodToStructural(DetectionPolicyStatus),
    },
    required: ["spec"],
  };
  return crd({
    kind: DETECTION_POLICY_KIND,
    plural: DETECTION_POLICY_PLURAL,
    shortName: DETECTION_POLICY_SHORT_NAME,
    schema,
    columns: [
      {
        name: "Version",
        type: "integer",
        jsonPath: ".spec.version",
        description: "The version in the spec.",
      },
      {
        name: "InForce",
        type: "integer",
        jsonPath: ".status.inForce.version",
        description: "The version detections are scored under.",
      },
      { name: "Valid", type: "string", jsonPath: '.status.conditions[?(@.type=="Valid")].status' },
      { name: "InUse", type: "string", jsonPath: '.status.conditions[?(@.type=="InUse")].status' },
      AGE,
      {
        name: "Message",
        type: "string",
        jsonPath: '.status.conditions[?(@.type=="Valid")].message',
        description: "The Valid condition's message: the field that is wrong when refused.",
        priority: 1,
      },
    ],
  });
}

/** File name under crds/ → the CRD it holds. */
export function allCrds(): Record<string, CustomResourceDefinition> {
  return {
    "docverify.io_detections.yaml": detectionCrd(),
    "docverify.io_detectionjobs.yaml": detectionJobCrd(),
    "docverify.io_detectionpolicies.yaml": detectionPolicyCrd(),
  };
}

/** The text of a file under crds/: a header naming the generator, then the CRD as YAML. */
export function renderCrdFile(crd: CustomResourceDefinition): string {
  const yaml = stringify(crd, { lineWidth: 0, aliasDuplicateObjects: false });
  return `# Generated by scripts/gen-crds.ts (npm run gen:crds) from core's zod schemas; do not edit by hand.\n---\n${yaml}`;
}
