import { createHash } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../core/config.js";
import { CheckStepResult, keys, type StepInput } from "../core/detection.js";
import { encryptWithQpdf, haveQpdf } from "../fixtures/encrypted.js";
import { makeDocument } from "../fixtures/documents.js";
import { HOSTILE_PDF_KINDS, makeHostilePdf } from "../fixtures/hostile-pdf.js";
import { runCheckStep } from "./step.js";
import { createTestStepContext, stepInput, type TestStepContext } from "./testdata/step-context.js";

/**
 * The check step's budget gate end to end (issue 13): hostile PDFs end document_too_complex before any
 * parser reads them, a password ends document_encrypted, an empty user password is decrypted and checked,
 * a parse that overruns its time ends document_too_complex, and the budget follows the configuration.
 */

let ctx: TestStepContext;
beforeAll(async () => {
  ctx = await createTestStepContext();
});
afterAll(() => ctx.cleanup());

async function prepared(bytes: Uint8Array, contentType = "application/pdf"): Promise<StepInput> {
  const input = stepInput("check", { source: { url: "https://example.com/x" }, docType: "invoice" });
  const key = keys.document(input.detection, "x.pdf");
  await ctx.objects.put(ctx.bucket, key, Buffer.from(bytes), { contentType });
  const sha256 = createHash("sha256").update(bytes).digest("hex");
  return { ...input, document: { filename: "x.pdf", contentType, sizeBytes: bytes.length, key, sha256 } };
}

describe("the check step's budget gate", () => {
  it.each(HOSTILE_PDF_KINDS)("ends %s document_too_complex without running a check", async (kind) => {
    const result = CheckStepResult.parse(await runCheckStep(await prepared(makeHostilePdf(kind)), ctx));
    expect(result.failure?.code).toBe("document_too_complex");
    expect(result.checks).toEqual([]);
  });

  it("follows the configured budget (DOCVERIFY_MAX_PAGES)", async () => {
    const twoPages = await makeDocument({ seed: 41, docType: "invoice", region: "GB", pages: 2 });
    const strict = await createTestStepContext({ budget: loadConfig({ DOCVERIFY_MAX_PAGES: "1" }).budget });
    try {
      const input = stepInput("check", { source: { url: "https://example.com/x" }, docType: "invoice" });
      const key = keys.document(input.detection, "x.pdf");
      await strict.objects.put(strict.bucket, key, Buffer.from(twoPages));
      const doc = {
        filename: "x.pdf",
        contentType: "application/pdf",
        sizeBytes: twoPages.length,
        key,
        sha256: "0".repeat(64),
      };
      expect((await runCheckStep({ ...input, document: doc }, strict)).failure?.code).toBe(
        "document_too_complex",
      );
    } finally {
      await strict.cleanup();
    }
    expect((await runCheckStep(await prepared(twoPages), ctx)).failure).toBeUndefined();
  });

  it("ends a parse that overruns its time document_too_complex (not unreadable)", async () => {
    const doc = await makeDocument({ seed: 42, docType: "bank_statement", region: "GB", pages: 3 });
    const result = await runCheckStep(await prepared(doc), ctx, { parseTimeoutMs: 0 });
    expect(result.failure?.code).toBe("document_too_complex");
  });
});

describe.skipIf(!haveQpdf())("encrypted PDFs (qpdf encrypts)", () => {
  it("ends a PDF that needs a user password document_encrypted", async () => {
    const doc = encryptWithQpdf(
      await makeDocument({ seed: 43, docType: "invoice", region: "GB" }),
      "letmein",
      256,
    );
    const result = await runCheckStep(await prepared(doc), ctx);
    expect(result.failure?.code).toBe("document_encrypted");
  });

  it.each([256, 128, 40] as const)(
    "decrypts and checks a PDF with an empty user password (%i bits): the raw-parser checks read it too",
    async (bits) => {
      const plain = await makeDocument({ seed: 44, docType: "invoice", region: "GB" });
      const encrypted = encryptWithQpdf(plain, "", bits);
      const [a, b] = [
        CheckStepResult.parse(await runCheckStep(await prepared(plain), ctx)),
        CheckStepResult.parse(await runCheckStep(await prepared(encrypted), ctx)),
      ];
      expect(b.failure).toBeUndefined();
      expect(b.discovered).toContain("encrypted");
      // Every check reaches the same outcome as on the same document unencrypted: metadata.dates and
      // metadata.producer read the Info strings and XMP through the raw parser, which now decrypts them.
      // pdf.structure alone skips: encrypting rewrote the file, so its bytes say nothing of its producer.
      const outcome = (r: typeof a) => Object.fromEntries(r.checks.map((c) => [c.checkId, c.outcome]));
      expect(outcome(a)["pdf.structure"]).toBe("pass");
      expect(outcome(b)).toEqual({ ...outcome(a), "pdf.structure": "skip" });
      const text = (r: typeof a) => ctx.objects.get(ctx.bucket, r.textKey!).then((t) => t.toString("utf8"));
      expect(await text(b)).toBe(await text(a));
    },
  );
});
