import { randomBytes } from "node:crypto";
import {
  CoreV1Api,
  type CoreV1Event,
  type KubeConfig,
  PatchStrategy,
  setHeaderOptions,
} from "@kubernetes/client-node";
import type { EventRecorder, EventType } from "../../core/event-recorder.js";
import { DETECTION_KIND } from "../../core/detection.js";
import { API_GROUP_VERSION } from "../../core/resource.js";
import type { Logger } from "../../core/step-context.js";

export interface KubeEventRecorderOptions {
  namespace: string;
  /** source.component / reportingComponent, e.g. "docverify-operator". */
  component: string;
  /** reportingInstance, e.g. the Pod's name. */
  instance: string;
  log: Logger;
  /** How many distinct recent events are remembered for counting repeats. */
  cacheSize?: number;
}

/**
 * Kubernetes Events (core/v1) on Detections, as `kubectl describe detection X` shows them. A repeat of the
 * same event (same detection, type, reason and message) raises the count of the earlier Event instead of
 * creating another, as client-go's recorder does. Best effort: failures are logged, never thrown.
 */
export function createKubeEventRecorder(kc: KubeConfig, opts: KubeEventRecorderOptions): EventRecorder {
  const core = kc.makeApiClient(CoreV1Api);
  const recent = new Map<string, { name: string; count: number; first: Date }>();
  const cacheSize = opts.cacheSize ?? 1000;
  const mergePatch = setHeaderOptions("Content-Type", PatchStrategy.MergePatch);

  async function create(
    detection: { name: string; uid?: string },
    type: EventType,
    reason: string,
    message: string,
    now: Date,
  ): Promise<string> {
    const name = `${detection.name}.${now.getTime().toString(16)}${randomBytes(3).toString("hex")}`;
    const body: CoreV1Event = {
      apiVersion: "v1",
      kind: "Event",
      metadata: { name, namespace: opts.namespace },
      involvedObject: {
        apiVersion: API_GROUP_VERSION,
        kind: DETECTION_KIND,
        name: detection.name,
        namespace: opts.namespace,
        ...(detection.uid ? { uid: detection.uid } : {}),
      },
      type,
      reason,
      message,
      count: 1,
      firstTimestamp: now,
      lastTimestamp: now,
      source: { component: opts.component },
      reportingComponent: opts.component,
      reportingInstance: opts.instance,
    };
    await core.createNamespacedEvent({ namespace: opts.namespace, body });
    return name;
  }

  return {
    async record(detection, type, reason, message) {
      const now = new Date();
      const key = `${detection.name}\0${type}\0${reason}\0${message}`;
      try {
        const seen = recent.get(key);
        if (seen) {
          const count = seen.count + 1;
          try {
            await core.patchNamespacedEvent(
              {
                namespace: opts.namespace,
                name: seen.name,
                body: { count, lastTimestamp: now.toISOString() },
              },
              mergePatch,
            );
            recent.delete(key);
            recent.set(key, { ...seen, count });
            return;
          } catch {
            // the earlier Event expired (events have a TTL) or cannot be patched: create a new one
          }
        }
        const name = await create(detection, type, reason, message, now);
        recent.delete(key);
        recent.set(key, { name, count: 1, first: now });
        while (recent.size > cacheSize) {
          const oldest = recent.keys().next().value;
          if (oldest === undefined) break;
          recent.delete(oldest);
        }
      } catch (err) {
        opts.log.warn(
          { detection: detection.name, event: reason, err: err instanceof Error ? err.message : String(err) },
          "could not record a Kubernetes Event",
        );
      }
    },
  };
}
