import type { V1ContainerStatus, V1Pod } from "@kubernetes/client-node";
import { STEP_NAMES, type StepName } from "../../core/detection.js";
import type { WorkloadStatus } from "../../core/ports.js";
import { LABELS } from "../../core/resource.js";

/** The step container's name in every step Pod. */
export const STEP_CONTAINER = "step";

/** V8's last words when a heap limit is reached (as platform/local/memory-watch.ts reads them). */
const HEAP_EXHAUSTED =
  /JavaScript heap out of memory|Reached heap limit|Ineffective mark-compacts near heap limit/;

/** Waiting reasons that no amount of waiting fixes (the Pod would sit in Pending until its deadline). */
const FATAL_WAITING_REASONS = new Set([
  "InvalidImageName",
  "CreateContainerConfigError",
  "CreateContainerError",
  "ErrImageNeverPull",
]);

/** Timestamps are Date objects from the typed client and strings from a watch. */
type Time = Date | string | undefined | null;
function iso(t: Time): string | undefined {
  if (t === undefined || t === null) return undefined;
  const d = typeof t === "string" ? new Date(t) : t;
  return Number.isNaN(d.getTime()) ? undefined : d.toISOString();
}

function stepOf(pod: V1Pod): StepName {
  const label = pod.metadata?.labels?.[LABELS.step];
  if ((STEP_NAMES as readonly string[]).includes(label ?? "")) return label as StepName;
  const m = /-(prepare|check|agent)-\d+$/.exec(pod.metadata?.name ?? "");
  if (m) return m[1] as StepName;
  throw new Error(
    `Pod ${pod.metadata?.name ?? "(unnamed)"} is not a docverify step pod: it has no ${LABELS.step} label.`,
  );
}

function stepContainer(pod: V1Pod): V1ContainerStatus | undefined {
  const all = pod.status?.containerStatuses ?? [];
  return all.find((c) => c.name === STEP_CONTAINER) ?? all[0];
}

/**
 * What a step Pod means for the reconciler, in one pure function:
 * - Pending (also with a transient waiting reason such as ImagePullBackOff) → Pending; a waiting reason that
 *   cannot resolve (InvalidImageName, CreateContainerConfigError, ...) → Failed with that reason.
 * - Running → Running, unless the container already terminated (the phase lags): then as below.
 * - Succeeded → Succeeded with exit code 0 and the termination message (the step's summary line).
 * - Failed → Failed; reason: the Pod's own (DeadlineExceeded from activeDeadlineSeconds, Evicted, ...), else
 *   the container's (OOMKilled, ContainerCannotRun, ...) — OOMKilled too when V8 aborted at its heap limit —,
 *   else Error; exitCode and message from the container.
 * - Unknown (the node stopped reporting) → Running: the detection's deadline bounds the wait.
 * - deletionTimestamp set on an unfinished Pod → Failed with reason Deleted (the attempt is lost).
 */
export function podToWorkloadStatus(pod: V1Pod): WorkloadStatus {
  const name = pod.metadata?.name ?? "";
  const step = stepOf(pod);
  const owner =
    pod.metadata?.labels?.[LABELS.detection] ??
    pod.metadata?.ownerReferences?.find((r) => r.controller)?.name ??
    "";
  const container = stepContainer(pod);
  const terminated = container?.state?.terminated;
  const waiting = container?.state?.waiting;
  const phase = pod.status?.phase;
  const startedAt =
    iso(pod.status?.startTime) ?? iso(terminated?.startedAt) ?? iso(container?.state?.running?.startedAt);
  const base = { name, step, owner, ...(startedAt ? { startedAt } : {}) };

  const finished = (): WorkloadStatus => {
    const exitCode = terminated?.exitCode;
    const succeeded = phase === "Succeeded" || (phase !== "Failed" && exitCode === 0);
    const finishedAt = iso(terminated?.finishedAt);
    const message = terminated?.message?.trim() || undefined;
    if (succeeded) {
      return {
        ...base,
        state: "Succeeded",
        exitCode: exitCode ?? 0,
        ...(message ? { message } : {}),
        ...(finishedAt ? { finishedAt } : {}),
      };
    }
    const containerReason =
      terminated?.reason && terminated.reason !== "Completed" ? terminated.reason : undefined;
    const why = message ?? pod.status?.message?.trim() ?? undefined;
    // V8 at its heap limit (step-pod.ts sets it below the memory limit) aborts with its own words, which
    // the kubelet keeps as the termination message (FallbackToLogsOnError): that is running out of memory.
    const heapExhausted =
      (containerReason ?? "Error") === "Error" && why !== undefined && HEAP_EXHAUSTED.test(why);
    const reason =
      pod.status?.reason ?? (heapExhausted ? "OOMKilled" : undefined) ?? containerReason ?? "Error";
    return {
      ...base,
      state: "Failed",
      reason,
      ...(exitCode !== undefined ? { exitCode } : {}),
      ...(why ? { message: why } : {}),
      ...(finishedAt ? { finishedAt } : {}),
    };
  };

  if (phase === "Succeeded" || phase === "Failed") return finished();
  if (terminated) return finished();
  if (pod.metadata?.deletionTimestamp) {
    return {
      ...base,
      state: "Failed",
      reason: "Deleted",
      message: "The step's pod was deleted before it finished.",
    };
  }
  if (phase === "Running" || phase === "Unknown") return { ...base, state: "Running" };
  if (waiting?.reason && FATAL_WAITING_REASONS.has(waiting.reason)) {
    return {
      ...base,
      state: "Failed",
      reason: waiting.reason,
      ...(waiting.message ? { message: waiting.message } : {}),
    };
  }
  return { ...base, state: "Pending" };
}
