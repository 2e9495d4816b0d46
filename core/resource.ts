import { z } from "zod";

export const API_GROUP = "docverify.io";
export const API_VERSION = "v1alpha1";
export const API_GROUP_VERSION = `${API_GROUP}/${API_VERSION}` as const;

/** Finalizer that removes a detection's stored files (they live outside the cluster). */
export const CLEANUP_FINALIZER = "docverify.io/cleanup";
/** Labels the service sets on its resources. */
export const LABELS = {
  client: "docverify.io/client",
  batch: "docverify.io/batch",
  detection: "docverify.io/detection",
  step: "docverify.io/step",
  /** Hash of the creating client and its Idempotency-Key (api/idempotency.ts). */
  idempotencyKey: "docverify.io/idempotency-key",
} as const;
/** Annotations the service sets on its resources. */
export const ANNOTATIONS = {
  /** Hash of the create request an Idempotency-Key was first used with (api/idempotency.ts). */
  idempotencyRequest: "docverify.io/idempotency-request",
} as const;

/** Kubernetes object names (RFC 1123 label form, as detection ids use). */
export const OBJECT_NAME_RE = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;

export const ObjectMeta = z.object({
  name: z.string(),
  namespace: z.string().optional(),
  uid: z.string().optional(),
  resourceVersion: z.string().optional(),
  generation: z.number().int().optional(),
  creationTimestamp: z.string().optional(),
  deletionTimestamp: z.string().optional(),
  finalizers: z.array(z.string()).optional(),
  labels: z.record(z.string(), z.string()).optional(),
  annotations: z.record(z.string(), z.string()).optional(),
});
export type ObjectMeta = z.infer<typeof ObjectMeta>;

/** The shape every stored resource has; the store treats spec and status as opaque JSON. */
export interface Resource {
  apiVersion: string;
  kind: string;
  metadata: ObjectMeta;
  spec: unknown;
  status?: unknown;
}

/** A label value is at most 63 characters of [A-Za-z0-9_.-], starting and ending alphanumeric. */
const LABEL_VALUE_RE = /^(([A-Za-z0-9][-A-Za-z0-9_.]{0,61})?[A-Za-z0-9])?$/;

/** A label value that identifies `value`: the value itself when it is a valid label value, else a hash. */
export function labelValue(value: string, hash: (s: string) => string): string {
  return LABEL_VALUE_RE.test(value) ? value : `h-${hash(value).slice(0, 40)}`;
}
