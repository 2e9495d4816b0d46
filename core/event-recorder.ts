/**
 * Event recorder port: tells people watching a resource what happened to it (in the cluster, Kubernetes
 * Events on the Detection, seen with `kubectl describe detection X`; standalone, log lines).
 * Best effort: record never throws and never blocks the caller on a failure.
 */
export type EventType = "Normal" | "Warning";

export interface EventRecorder {
  record(
    detection: { name: string; uid?: string },
    type: EventType,
    /** A CamelCase token, e.g. StepStarted, StepFailed, Completed. */
    reason: string,
    /** One sentence for humans. */
    message: string,
  ): Promise<void>;
}
