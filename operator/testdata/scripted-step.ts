/**
 * A step command for the reconciler's tests: behaves as the SCRIPT environment variable says for each step
 * and writes real results to the local object store under DOCVERIFY_DATA_DIR, like the real steps do.
 *   SCRIPT='{"prepare":"ok","check":"crash-first","agent":"ok"}'
 * Behaviours: ok | crash (exit 1) | crash-first (exit 1 on attempt 1) | hang | no-result (exit 0, writes nothing)
 *             | fail:<failure code> (a step-level failure value) | authoritative (check only)
 *             | huge-reasoning (agent only: a verdict whose reasoning is 700 KB, over the resource size guard).
 */
import path from "node:path";
import { keys, StepInput } from "../../core/detection.js";
import { failure, type FailureCode } from "../../core/failure-codes.js";
import { createLocalObjectStore } from "../../platform/local/object-store.js";

const step = process.argv[2] as "prepare" | "check" | "agent";
const input = StepInput.parse(JSON.parse(process.env.DOCVERIFY_STEP_INPUT ?? "{}"));
const script = JSON.parse(process.env.SCRIPT ?? "{}") as Record<string, string>;
const behaviour = script[step] ?? "ok";
const objects = createLocalObjectStore(path.join(process.env.DOCVERIFY_DATA_DIR!, "objects"));
const bucket = "docverify";

async function main(): Promise<number> {
  if (behaviour === "crash" || (behaviour === "crash-first" && input.attempt === 1)) {
    process.stderr.write(`scripted crash of ${step}\n`);
    return 1;
  }
  if (behaviour === "hang") {
    await new Promise((r) => setTimeout(r, 600_000));
    return 0;
  }
  if (behaviour === "no-result") return 0;
  await objects.ensureBucket(bucket);
  let result: unknown;
  const fail = behaviour.startsWith("fail:") ? failure(behaviour.slice(5) as FailureCode) : undefined;
  if (step === "prepare") {
    const key = keys.document(input.detection, "doc.pdf");
    await objects.put(bucket, key, "%PDF-1.7 scripted");
    result = fail
      ? { step, failure: fail }
      : {
          step,
          document: {
            filename: "doc.pdf",
            contentType: "application/pdf",
            sizeBytes: 17,
            key,
            sha256: "0".repeat(64),
          },
        };
  } else if (step === "check") {
    result = {
      step,
      checks: [{ checkId: "file.type", outcome: "pass", severity: 0, summary: "Types agree.", findings: [] }],
      discovered: ["metadata_present"],
      ...(behaviour === "authoritative"
        ? {
            authoritative: {
              checkId: "signature.pdf",
              trust: "corroborated",
              directive: "Signed and unmodified.",
            },
          }
        : {}),
      ...(fail ? { failure: fail } : {}),
    };
  } else {
    result = fail
      ? { step, runId: "run-scripted", engine: "rules", error: "scripted failure", failure: fail }
      : {
          step,
          runId: "run-scripted",
          engine: "rules",
          verdict: {
            fraudScore: 12,
            documentTypeMatch: true,
            actualDocType: input.spec.docType,
            reasoning: behaviour === "huge-reasoning" ? "Low risk. ".repeat(70_000) : "Low risk.",
            perCheck: [{ checkId: "file.type", importance: 1, reasoning: "Types agree." }],
          },
        };
  }
  const resultKey = keys.result(input.detection, step);
  await objects.put(bucket, resultKey, JSON.stringify(result));
  process.stdout.write(`${JSON.stringify({ ok: !fail, step, resultKey })}\n`);
  return 0;
}

main().then((code) => process.exit(code));
