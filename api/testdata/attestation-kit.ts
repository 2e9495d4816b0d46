import { createHash } from "node:crypto";
import type { CheckResult } from "../../core/check-result.js";
import { type Detection, keys } from "../../core/detection.js";
import { writeStepResult } from "../../core/step-results.js";
import type { Harness } from "./app-kit.js";

/**
 * Moves a detection created through the API to COMPLETED as the operator would: the document's bytes
 * stored with their SHA-256 on the status (the prepare step), the check step's result stored, a verdict
 * under a named policy (the agent step).
 */
export async function completeForAttestation(
  h: Harness,
  id: string,
  bytes: Uint8Array,
  checks: CheckResult[],
  opts: { score?: number; filename?: string } = {},
): Promise<void> {
  const filename = opts.filename ?? "statement.pdf";
  const key = keys.document(id, filename);
  await h.deps.objects.put(h.deps.bucket, key, Buffer.from(bytes), { contentType: "application/pdf" });
  await writeStepResult(h.deps.objects, h.deps.bucket, id, { step: "check", checks, discovered: [] });
  const stored = (await h.store.get(id)) as Detection;
  const score = opts.score ?? 88;
  await h.store.updateStatus({
    ...stored,
    status: {
      ...stored.status,
      phase: "Completed",
      score,
      completedAt: h.clock.now().toISOString(),
      document: {
        filename,
        contentType: "application/pdf",
        sizeBytes: bytes.length,
        key,
        sha256: createHash("sha256").update(bytes).digest("hex"),
      },
      verdict: {
        fraudScore: score,
        documentTypeMatch: true,
        actualDocType: "bank_statement",
        reasoning: `Score ${score}/100.`,
        perCheck: checks.map((c) => ({ checkId: c.checkId, importance: c.severity, reasoning: c.summary })),
        policy: { name: "default", version: 3 },
      },
    },
  });
}
