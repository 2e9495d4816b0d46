import type { EventRecorder } from "../../core/event-recorder.js";
import type { Logger } from "../../core/step-context.js";

/** Standalone events: one log line each (Warning at warn level), with the detection, reason and message. */
export function createLogEventRecorder(log: Logger): EventRecorder {
  return {
    async record(detection, type, reason, message) {
      try {
        const fields = { detection: detection.name, event: reason };
        if (type === "Warning") log.warn(fields, message);
        else log.info(fields, message);
      } catch {
        // best effort: a logging failure never reaches the reconciler
      }
    },
  };
}
