import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../deps.js";
import { registerGetAttestation } from "./attestation.js";
import { registerPutFeedback } from "./feedback.js";
import { registerDeleteDetection } from "./delete.js";
import { registerGetEvidence } from "./evidence.js";
import { registerGetEvidencePage } from "./evidence-page.js";
import { registerGetDetection } from "./get.js";
import { registerListDetections } from "./list.js";
import { registerCreateDetection } from "./post.js";

export function registerDetectionRoutes(app: OpenAPIHono<AppEnv>): void {
  registerCreateDetection(app);
  registerListDetections(app);
  registerGetDetection(app);
  registerGetEvidence(app);
  registerGetEvidencePage(app);
  registerDeleteDetection(app);
  registerGetAttestation(app);
  registerPutFeedback(app);
}
