import { existsSync, readFileSync } from "node:fs";
import os from "node:os";
import { KubeConfig } from "@kubernetes/client-node";
import { z } from "zod";
import { ConfigError } from "../core/config.js";
import type { StepPodOptions } from "../platform/kube/step-pod.js";
import { NOT_FOR_STEPS } from "./step-env.js";

/**
 * Settings only the cluster runtime reads (besides core's Config): where the Kubernetes API is, which
 * namespace, and how step Pods look. The chart sets them; the README's configuration table lists them.
 *
 *   DOCVERIFY_STEP_IMAGE          image of the step Pods (required for the operator)
 *   DOCVERIFY_STEP_POD            JSON: { imagePullPolicy, imagePullSecrets, resources, stepResources,
 *                                  nodeSelector, tolerations, serviceAccountName, priorityClassName, tmpSizeLimit }
 *   DOCVERIFY_STEP_ENV_SECRET     a Secret holding S3_ACCESS_KEY / S3_SECRET_KEY / DOCVERIFY_LLM_API_KEY under
 *                                  those key names: step Pods then read them by secretKeyRef, not as values
 *   DOCVERIFY_LEASE_NAME          Lease of the operator's leader election (default docverify-operator)
 *   DOCVERIFY_LEASE_DURATION_SECONDS / _RENEW_DEADLINE_SECONDS / _RETRY_PERIOD_SECONDS   (15 / 10 / 2)
 *   POD_NAME                      this replica's name (downward API), part of its leader identity
 *   DOCVERIFY_STEP_MODE           pods (a Pod per step attempt; the binary's default) | workers (warm step
 *                                  workers of `docverify step-worker` take steps from per-kind Redis queues;
 *                                  the chart's default)
 *   DOCVERIFY_WORKER_PROCESSES    a step worker's warm child processes, i.e. steps it runs at once (1)
 *   DOCVERIFY_WORKER_MAX_STEPS    a child process is replaced after this many steps (200; 0 = never)
 *   DOCVERIFY_STEP_LEASE_SECONDS  a step worker renews its lease on a running step every half of this; a
 *                                  worker silent for longer is taken for dead and the step retried (30)
 */

const SERVICE_ACCOUNT_NAMESPACE_FILE = "/var/run/secrets/kubernetes.io/serviceaccount/namespace";

/** In a Pod: the service account's in-cluster config; elsewhere KUBECONFIG or ~/.kube/config. */
export function loadKubeConfig(env: Record<string, string | undefined>): KubeConfig {
  const kc = new KubeConfig();
  if (env.KUBERNETES_SERVICE_HOST) kc.loadFromCluster();
  else kc.loadFromDefault();
  if (!kc.getCurrentCluster()) {
    throw new ConfigError(
      "No Kubernetes cluster configured: run inside a Pod, or set KUBECONFIG to a kubeconfig file with a current context.",
    );
  }
  return kc;
}

/** KUBE_NAMESPACE, else the Pod's own namespace, else the kubeconfig context's, else "default". */
export function resolveNamespace(kc: KubeConfig, env: Record<string, string | undefined>): string {
  if (env.KUBE_NAMESPACE) return env.KUBE_NAMESPACE;
  if (env.KUBERNETES_SERVICE_HOST && existsSync(SERVICE_ACCOUNT_NAMESPACE_FILE))
    return readFileSync(SERVICE_ACCOUNT_NAMESPACE_FILE, "utf8").trim();
  const ctx = kc.getContextObject(kc.getCurrentContext());
  return ctx?.namespace || "default";
}

const Resources = z.object({
  requests: z.record(z.string(), z.string()).optional(),
  limits: z.record(z.string(), z.string()).optional(),
});
const StepPodJson = z
  .object({
    imagePullPolicy: z.enum(["Always", "IfNotPresent", "Never"]).optional(),
    imagePullSecrets: z.array(z.string()).optional(),
    resources: Resources.optional(),
    stepResources: z.object({ prepare: Resources, check: Resources, agent: Resources }).partial().optional(),
    nodeSelector: z.record(z.string(), z.string()).optional(),
    tolerations: z
      .array(
        z.object({
          key: z.string().optional(),
          operator: z.string().optional(),
          value: z.string().optional(),
          effect: z.string().optional(),
          tolerationSeconds: z.number().int().optional(),
        }),
      )
      .optional(),
    serviceAccountName: z.string().optional(),
    priorityClassName: z.string().optional(),
    tmpSizeLimit: z.string().optional(),
    runAsUser: z.number().int().positive().optional(),
  })
  .strict();

/** Secrets a step may need, passed by secretKeyRef when DOCVERIFY_STEP_ENV_SECRET names a Secret. */
const SECRET_ENV = ["S3_ACCESS_KEY", "S3_SECRET_KEY", "DOCVERIFY_LLM_API_KEY"] as const;

/** Step Pod options from the operator's environment: its DOCVERIFY_* and S3_* settings pass on to steps. */
export function stepPodOptionsFromEnv(env: Record<string, string | undefined>): StepPodOptions {
  const image = env.DOCVERIFY_STEP_IMAGE;
  if (!image) {
    throw new ConfigError(
      "DOCVERIFY_STEP_IMAGE is not set; set it to the docverify image the step Pods run (the chart sets it to its own image).",
    );
  }
  let pod: z.infer<typeof StepPodJson> = {};
  if (env.DOCVERIFY_STEP_POD) {
    let json: unknown;
    try {
      json = JSON.parse(env.DOCVERIFY_STEP_POD);
    } catch {
      throw new ConfigError('DOCVERIFY_STEP_POD is not JSON; give an object such as {"resources":{...}}.');
    }
    const parsed = StepPodJson.safeParse(json);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw new ConfigError(
        `DOCVERIFY_STEP_POD is invalid at ${issue?.path.join(".") || "(root)"}: ${issue?.message}.`,
      );
    }
    pod = parsed.data;
  }
  const secretName = env.DOCVERIFY_STEP_ENV_SECRET;
  const common: Record<string, string> = {};
  const secretEnv: StepPodOptions["secretEnv"] = {};
  for (const [k, v] of Object.entries(env)) {
    if (v === undefined || NOT_FOR_STEPS.has(k)) continue;
    if (!k.startsWith("DOCVERIFY_") && !k.startsWith("S3_")) continue;
    if (secretName && (SECRET_ENV as readonly string[]).includes(k)) {
      secretEnv[k] = { secretName, key: k };
      continue;
    }
    common[k] = v;
  }
  return { image, ...pod, env: common, secretEnv } as StepPodOptions;
}

/** This replica's identity in the leader election: the Pod name (or host name) plus a random suffix. */
export function leaderIdentity(env: Record<string, string | undefined>): string {
  const who = env.POD_NAME || os.hostname();
  return `${who}_${Math.random().toString(36).slice(2, 10)}`;
}

export function leaderTimings(env: Record<string, string | undefined>): {
  leaseDurationMs: number;
  renewDeadlineMs: number;
  retryPeriodMs: number;
} {
  const seconds = (name: string, dflt: number) => {
    const raw = env[name];
    if (raw === undefined || raw === "") return dflt * 1000;
    const n = Number(raw);
    if (!Number.isFinite(n) || n <= 0)
      throw new ConfigError(`${name} must be a positive number of seconds, got "${raw}".`);
    return n * 1000;
  };
  const t = {
    leaseDurationMs: seconds("DOCVERIFY_LEASE_DURATION_SECONDS", 15),
    renewDeadlineMs: seconds("DOCVERIFY_LEASE_RENEW_DEADLINE_SECONDS", 10),
    retryPeriodMs: seconds("DOCVERIFY_LEASE_RETRY_PERIOD_SECONDS", 2),
  };
  if (!(t.leaseDurationMs > t.renewDeadlineMs && t.renewDeadlineMs > t.retryPeriodMs)) {
    throw new ConfigError(
      "Leader election needs DOCVERIFY_LEASE_DURATION_SECONDS > DOCVERIFY_LEASE_RENEW_DEADLINE_SECONDS > DOCVERIFY_LEASE_RETRY_PERIOD_SECONDS.",
    );
  }
  return t;
}

export type StepMode = "pods" | "workers";
export const STEP_MODES: readonly StepMode[] = ["pods", "workers"];

/** How the operator runs steps: DOCVERIFY_STEP_MODE, `pods` when unset. */
export function stepModeFromEnv(env: Record<string, string | undefined>): StepMode {
  const raw = env.DOCVERIFY_STEP_MODE;
  if (raw === undefined || raw === "") return "pods";
  if ((STEP_MODES as readonly string[]).includes(raw)) return raw as StepMode;
  throw new ConfigError(
    `DOCVERIFY_STEP_MODE must be one of ${STEP_MODES.join(", ")}, got "${raw}": pods runs a Pod per step, workers hands steps to the step-worker Deployments.`,
  );
}

export interface StepWorkerSettings {
  /** Warm child processes, i.e. steps run at once. */
  processes: number;
  /** A child process is replaced after this many steps (0: only for its memory). */
  maxStepsPerProcess: number;
  /** The lease on a running step. */
  leaseMs: number;
}

/** A step worker's settings (DOCVERIFY_WORKER_PROCESSES, _WORKER_MAX_STEPS, _STEP_LEASE_SECONDS). */
export function stepWorkerSettingsFromEnv(env: Record<string, string | undefined>): StepWorkerSettings {
  const whole = (name: string, dflt: number, min: number) => {
    const raw = env[name];
    if (raw === undefined || raw === "") return dflt;
    const n = Number(raw);
    if (!Number.isInteger(n) || n < min)
      throw new ConfigError(`${name} must be a whole number of at least ${min}, got "${raw}".`);
    return n;
  };
  const lease = env.DOCVERIFY_STEP_LEASE_SECONDS;
  let leaseMs = 30_000;
  if (lease !== undefined && lease !== "") {
    const n = Number(lease);
    if (!Number.isFinite(n) || n < 1)
      throw new ConfigError(
        `DOCVERIFY_STEP_LEASE_SECONDS must be a number of seconds of at least 1, got "${lease}".`,
      );
    leaseMs = n * 1000;
  }
  return {
    processes: whole("DOCVERIFY_WORKER_PROCESSES", 1, 1),
    maxStepsPerProcess: whole("DOCVERIFY_WORKER_MAX_STEPS", 200, 0),
    leaseMs,
  };
}
