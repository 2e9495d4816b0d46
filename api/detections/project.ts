import type { Detection } from "../../core/detection.js";
import { projectDetection } from "../../core/detection-detail.js";
import type { DetectionDetail } from "./schema.js";

/**
 * Detection resource → the API's DetectionDetail. The pure projection lives in core/detection-detail.ts
 * (the job reconciler writes the same lines into a job's report); this keeps the API's schema type.
 */
export function project(d: Detection): DetectionDetail {
  return projectDetection(d);
}
