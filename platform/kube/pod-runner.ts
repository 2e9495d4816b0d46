import { CoreV1Api, type KubeConfig, type V1Pod } from "@kubernetes/client-node";
import { StoreError, type WatchHandle, type WorkloadRunner, type WorkloadSpec } from "../../core/ports.js";
import { LABELS } from "../../core/resource.js";
import type { Logger } from "../../core/step-context.js";
import { toStoreError } from "./kube-errors.js";
import { podToWorkloadStatus } from "./pod-status.js";
import { buildStepPod, STEP_POD_SELECTOR, type StepPodOptions } from "./step-pod.js";
import { watchStream } from "./watch-stream.js";

export interface PodRunnerOptions extends StepPodOptions {
  namespace: string;
  log: Logger;
  /** Server-side length of one watch request before it is resumed. */
  watchRequestSeconds?: number;
}

/**
 * WorkloadRunner over Pods: one Pod per step attempt, named by the workload (deterministic), so a start
 * repeated after a crash meets AlreadyExists and counts as started. Status comes from the Pod
 * (podToWorkloadStatus); a watch on step Pods tells the controller which detection to look at.
 */
export function createPodRunner(kc: KubeConfig, opts: PodRunnerOptions): WorkloadRunner {
  const core = kc.makeApiClient(CoreV1Api);
  const { namespace, log } = opts;
  const listeners: ((owner: string) => void)[] = [];
  let watch: WatchHandle | undefined;
  let closed = false;
  let retry: NodeJS.Timeout | undefined;

  const notify = (pod: V1Pod) => {
    const owner = pod.metadata?.labels?.[LABELS.detection];
    if (!owner) return;
    for (const l of listeners) l(owner);
  };

  const listAndWatch = async (): Promise<void> => {
    if (closed) return;
    const list = await core.listNamespacedPod({ namespace, labelSelector: STEP_POD_SELECTOR });
    if (closed) return;
    // Whatever changed while no watch was open: let every owner look again.
    for (const pod of list.items) notify(pod);
    watch = watchStream<V1Pod>(
      kc,
      `/api/v1/namespaces/${encodeURIComponent(namespace)}/pods`,
      {
        resourceVersion: list.metadata?.resourceVersion,
        labelSelector: STEP_POD_SELECTOR,
        requestSeconds: opts.watchRequestSeconds,
        what: "step Pods",
      },
      {
        onEvent: (_type, pod) => notify(pod),
        onError: (err) => {
          log.warn({ err: err.message }, "pod watch ended; listing again");
          scheduleRestart(err instanceof StoreError && err.reason === "Gone" ? 0 : 1000);
        },
      },
    );
  };

  const scheduleRestart = (delayMs: number) => {
    if (closed || retry) return;
    retry = setTimeout(() => {
      retry = undefined;
      listAndWatch().catch((err: unknown) => {
        log.error({ err: toStoreError(err, { verb: "list", what: "step Pods" }).message }, "pod list failed");
        scheduleRestart(2000);
      });
    }, delayMs);
    retry.unref();
  };

  return {
    async start(spec: WorkloadSpec): Promise<void> {
      const body = buildStepPod(spec, namespace, opts);
      try {
        await core.createNamespacedPod({ namespace, body });
        log.debug({ pod: spec.name }, "pod created");
      } catch (err) {
        const e = toStoreError(err, { verb: "create", what: `Pod ${spec.name}` });
        if (e instanceof StoreError && e.reason === "AlreadyExists") return; // started before a crash
        throw e;
      }
    },

    async get(name: string) {
      try {
        return podToWorkloadStatus(await core.readNamespacedPod({ namespace, name }));
      } catch (err) {
        const e = toStoreError(err, { verb: "get", what: `Pod ${name}` });
        if (e instanceof StoreError && e.reason === "NotFound") return undefined;
        throw e;
      }
    },

    async delete(name: string): Promise<void> {
      try {
        await core.deleteNamespacedPod({ namespace, name, propagationPolicy: "Background" });
      } catch (err) {
        const e = toStoreError(err, { verb: "delete", what: `Pod ${name}` });
        if (e instanceof StoreError && e.reason === "NotFound") return;
        throw e;
      }
    },

    onChange(listener: (owner: string) => void): void {
      listeners.push(listener);
      if (listeners.length === 1) scheduleRestart(0);
    },

    async close(): Promise<void> {
      closed = true;
      if (retry) clearTimeout(retry);
      watch?.stop();
    },
  };
}
