import { CheckResult } from "../../core/check-result.js";
import type { DocType } from "../../core/verdict.js";
import { modelOf } from "../../document/testdata/model-kit.js";
import { FIXTURE_DOC_TYPES, makeDocument, type Region } from "../../fixtures/documents.js";
import { makeTextTamperedPdf, type TextTamperKind } from "../../fixtures/tampered-text.js";
import type { Check } from "../check.js";

/** Shared by the text checks' tests: run a check on bytes, on genuine fixtures and on tampered ones. */

export const TEST_NOW = new Date("2026-01-15T12:00:00Z");

export async function runOn(
  check: Check,
  bytes: Uint8Array,
  opts: { docType?: DocType; region?: string } = {},
): Promise<CheckResult> {
  const doc = await modelOf(bytes, opts);
  return CheckResult.parse(await check.run(doc, { now: TEST_NOW }));
}

/** Every generated document type in US, GB and DE for the given seeds, with the check's result. */
export async function genuineResults(check: Check, seeds: readonly number[]) {
  const out: { name: string; result: CheckResult }[] = [];
  for (const seed of seeds) {
    for (const docType of FIXTURE_DOC_TYPES) {
      for (const region of ["US", "GB", "DE"] as Region[]) {
        const bytes = await makeDocument({ seed, docType, region });
        out.push({
          name: `${docType} ${region} seed ${seed}`,
          result: await runOn(check, bytes, { docType, region }),
        });
      }
    }
  }
  return out;
}

export async function tamperedResult(check: Check, seed: number, kind: TextTamperKind, region?: Region) {
  const t = await makeTextTamperedPdf(seed, kind, region ? { region } : {});
  const result = await runOn(check, t.bytes, { docType: t.docType, region: t.region });
  return { t, result, codes: result.findings.map((f) => f.code) };
}
