import type { V1EnvVar, V1Pod, V1ResourceRequirements, V1Toleration } from "@kubernetes/client-node";
import type { StepName } from "../../core/detection.js";
import type { WorkloadSpec } from "../../core/ports.js";
import { API_GROUP_VERSION, LABELS } from "../../core/resource.js";
import { STEP_CONTAINER } from "./pod-status.js";

/** Labels every step Pod carries; the runner watches Pods by the first two. */
export const STEP_POD_LABELS = {
  "app.kubernetes.io/name": "docverify",
  "app.kubernetes.io/component": "step",
} as const;
export const STEP_POD_SELECTOR = Object.entries(STEP_POD_LABELS)
  .map(([k, v]) => `${k}=${v}`)
  .join(",");

/** Where the kubelet reads a container's termination message; the step writes its summary there. */
export const TERMINATION_MESSAGE_PATH = "/dev/termination-log";

export interface SecretEnvRef {
  secretName: string;
  key: string;
}

/** How step Pods look: the chart sets these from values (image, resources, placement, common env). */
export interface StepPodOptions {
  image: string;
  imagePullPolicy?: "Always" | "IfNotPresent" | "Never";
  imagePullSecrets?: string[];
  /** Requests/limits of every step, unless `stepResources` names the step. */
  resources?: V1ResourceRequirements;
  stepResources?: Partial<Record<StepName, V1ResourceRequirements>>;
  nodeSelector?: Record<string, string>;
  tolerations?: V1Toleration[];
  serviceAccountName?: string;
  priorityClassName?: string;
  /** Environment every step gets (S3 settings, limits, ...); the workload's own env wins on a clash. */
  env?: Record<string, string>;
  /** Secrets as environment variables (e.g. S3_SECRET_KEY), by `valueFrom.secretKeyRef`. */
  secretEnv?: Record<string, SecretEnvRef>;
  /** Size limit of the emptyDir mounted at /tmp. */
  tmpSizeLimit?: string;
  runAsUser?: number;
}

/** Bytes of a Kubernetes quantity ("1536Mi", "2Gi", "1.5G", "1e9"); undefined when it is not one. */
export function quantityBytes(q: string | undefined): number | undefined {
  if (q === undefined) return undefined;
  const m = /^([0-9]+(?:\.[0-9]+)?(?:[eE][0-9]+)?)(Ki|Mi|Gi|Ti|Pi|Ei|k|K|M|G|T|P|E|m)?$/.exec(q.trim());
  if (!m) return undefined;
  const scale: Record<string, number> = {
    Ki: 2 ** 10,
    Mi: 2 ** 20,
    Gi: 2 ** 30,
    Ti: 2 ** 40,
    Pi: 2 ** 50,
    Ei: 2 ** 60,
    k: 1e3,
    K: 1e3,
    M: 1e6,
    G: 1e9,
    T: 1e12,
    P: 1e15,
    E: 1e18,
    m: 1e-3,
  };
  return Number(m[1]) * (m[2] ? (scale[m[2]] as number) : 1);
}

/**
 * V8's heap limit for a step container with this memory limit: three quarters of it, as standalone
 * (platform/local/memory-watch.ts), so a step that grows its heap fails with V8's own "heap out of memory"
 * (read back as OOMKilled, pod-status.ts) before the kernel's OOM killer ends the container.
 */
export function heapLimitOption(resources: V1ResourceRequirements | undefined): string | undefined {
  const bytes = quantityBytes(resources?.limits?.memory);
  if (!bytes) return undefined;
  return `--max-old-space-size=${Math.max(64, Math.floor((bytes / 2 ** 20) * 0.75))}`;
}

const DEFAULT_RESOURCES: V1ResourceRequirements = {
  requests: { cpu: "100m", memory: "256Mi" },
  limits: { cpu: "1", memory: "1Gi" },
};

/** The Pod that runs one step of one detection (a pure function of the workload and the options). */
export function buildStepPod(spec: WorkloadSpec, namespace: string, opts: StepPodOptions): V1Pod {
  const env = new Map<string, V1EnvVar>();
  for (const [name, value] of Object.entries(opts.env ?? {})) env.set(name, { name, value });
  for (const [name, ref] of Object.entries(opts.secretEnv ?? {})) {
    env.set(name, { name, valueFrom: { secretKeyRef: { name: ref.secretName, key: ref.key } } });
  }
  for (const [name, value] of Object.entries(spec.env)) env.set(name, { name, value });
  env.set("DOCVERIFY_TERMINATION_LOG", {
    name: "DOCVERIFY_TERMINATION_LOG",
    value: TERMINATION_MESSAGE_PATH,
  });
  // Tells the step it runs in the cluster runtime (its object store is S3, not a data directory).
  env.set("DOCVERIFY_RUNTIME", { name: "DOCVERIFY_RUNTIME", value: "cluster" });
  const resources = opts.stepResources?.[spec.step] ?? opts.resources ?? DEFAULT_RESOURCES;
  const heap = heapLimitOption(resources);
  if (heap) {
    const given = env.get("NODE_OPTIONS")?.value;
    env.set("NODE_OPTIONS", { name: "NODE_OPTIONS", value: given ? `${given} ${heap}` : heap });
  }

  const runAsUser = opts.runAsUser ?? 65532;
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: {
      name: spec.name,
      namespace,
      labels: {
        ...STEP_POD_LABELS,
        [LABELS.detection]: spec.owner.name,
        [LABELS.step]: spec.step,
      },
      ...(spec.owner.uid
        ? {
            ownerReferences: [
              {
                apiVersion: API_GROUP_VERSION,
                kind: "Detection",
                name: spec.owner.name,
                uid: spec.owner.uid,
                controller: true,
                blockOwnerDeletion: true,
              },
            ],
          }
        : {}),
    },
    spec: {
      restartPolicy: "Never",
      activeDeadlineSeconds: spec.timeoutSeconds,
      automountServiceAccountToken: false,
      enableServiceLinks: false,
      ...(opts.serviceAccountName ? { serviceAccountName: opts.serviceAccountName } : {}),
      ...(opts.priorityClassName ? { priorityClassName: opts.priorityClassName } : {}),
      ...(opts.nodeSelector ? { nodeSelector: opts.nodeSelector } : {}),
      ...(opts.tolerations ? { tolerations: opts.tolerations } : {}),
      ...(opts.imagePullSecrets?.length
        ? { imagePullSecrets: opts.imagePullSecrets.map((name) => ({ name })) }
        : {}),
      securityContext: {
        runAsNonRoot: true,
        runAsUser,
        runAsGroup: runAsUser,
        fsGroup: runAsUser,
        seccompProfile: { type: "RuntimeDefault" },
      },
      containers: [
        {
          name: STEP_CONTAINER,
          image: opts.image,
          imagePullPolicy: opts.imagePullPolicy ?? "IfNotPresent",
          command: ["docverify"],
          args: [spec.step, "--detection", spec.owner.name],
          env: [...env.values()],
          resources,
          terminationMessagePath: TERMINATION_MESSAGE_PATH,
          terminationMessagePolicy: "FallbackToLogsOnError",
          securityContext: {
            runAsNonRoot: true,
            runAsUser,
            allowPrivilegeEscalation: false,
            readOnlyRootFilesystem: true,
            privileged: false,
            capabilities: { drop: ["ALL"] },
            seccompProfile: { type: "RuntimeDefault" },
          },
          volumeMounts: [{ name: "tmp", mountPath: "/tmp" }],
        },
      ],
      volumes: [{ name: "tmp", emptyDir: opts.tmpSizeLimit ? { sizeLimit: opts.tmpSizeLimit } : {} }],
    },
  };
}
