import { createHash } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CheckStepResult, keys, type StepInput } from "../core/detection.js";
import {
  appendInfoUpdate,
  makeDocument,
  makeMalformedPdf,
  makeMetadataTamperedPdf,
  makePng,
  makeRandomBytes,
} from "../fixtures/documents.js";
import type { OcrEngine } from "../document/ocr.js";
import type { Check } from "./check.js";
import { CHECKS } from "./registry.js";
import { runCheckStep } from "./step.js";
import { createTestStepContext, stepInput, type TestStepContext } from "./testdata/step-context.js";

let ctx: TestStepContext;
beforeAll(async () => {
  ctx = await createTestStepContext({}, { now: () => new Date("2026-01-15T12:00:00Z") });
});
afterAll(() => ctx.cleanup());

/** Stores bytes as the prepare step would and returns the check step's input. */
async function prepared(
  bytes: Uint8Array,
  contentType: string,
  filename: string | null,
  docType: StepInput["spec"]["docType"] = "bank_statement",
): Promise<StepInput> {
  const input = stepInput("check", { source: { url: "https://example.com/x" }, docType });
  const key = keys.document(input.detection, filename);
  await ctx.objects.put(ctx.bucket, key, Buffer.from(bytes), { contentType });
  const sha256 = createHash("sha256").update(bytes).digest("hex");
  return { ...input, document: { filename, contentType, sizeBytes: bytes.length, key, sha256 } };
}

describe("runCheckStep", () => {
  it("runs every check on a genuine PDF and writes its text with page markers", async () => {
    const pdf = await makeDocument({ seed: 8, docType: "bank_statement", region: "GB", pages: 3 });
    const input = await prepared(pdf, "application/pdf", "statement.pdf");
    const result = CheckStepResult.parse(await runCheckStep(input, ctx));
    expect(result.failure).toBeUndefined();
    // The identity checks (id.mrz, id.barcode) apply to images and short PDFs that may be identity documents.
    expect(result.checks.map((c) => c.checkId)).toEqual(
      CHECKS.map((c) => c.id).filter((id) => !id.startsWith("id.")),
    );
    for (const c of result.checks) expect(["pass", "skip"], c.checkId).toContain(c.outcome);
    expect(result.checks.filter((c) => c.outcome === "pass").map((c) => c.checkId)).toEqual(
      expect.arrayContaining(["file.type", "metadata.dates"]),
    );
    expect(result.discovered.sort()).toEqual(["metadata_present", "xmp_present"]);
    expect(result.authoritative).toBeUndefined();
    expect(result.textKey).toBe(keys.text(input.detection));
    const text = (await ctx.objects.get(ctx.bucket, result.textKey!)).toString("utf8");
    expect(text.match(/^--- page \d+ ---$/gm)).toEqual([
      "--- page 1 ---",
      "--- page 2 ---",
      "--- page 3 ---",
    ]);
    expect(text).toMatch(/Account Statement/);
    expect(text).toMatch(/Closing balance/);
  });

  it("flags tampered metadata and reports incremental updates", async () => {
    const tampered = await makeMetadataTamperedPdf(3, "modified_before_created");
    const edited = await appendInfoUpdate(tampered, { Producer: "Online PDF Editor 2.1" });
    const result = await runCheckStep(await prepared(edited, "application/pdf", "statement.pdf"), ctx);
    const dates = result.checks.find((c) => c.checkId === "metadata.dates");
    expect(dates?.outcome).toBe("flag");
    expect(result.discovered).toContain("incremental_updates");
  });

  it("OCRs an image document (noise reads as no text), reports it scanned and skips metadata.dates", async () => {
    const input = await prepared(makePng(4), "image/png", "statement.png");
    const result = await runCheckStep(input, ctx);
    expect(result.failure).toBeUndefined();
    expect((await ctx.objects.get(ctx.bucket, result.textKey!)).toString("utf8").trim()).toBe(
      "--- page 1 ---",
    );
    expect(result.checks.find((c) => c.checkId === "metadata.dates")?.outcome).toBe("skip");
    expect(result.checks.find((c) => c.checkId === "file.type")?.outcome).toBe("pass");
    // And how the picture was captured (image.capture): noise has no scanner's traits.
    expect(result.discovered).toEqual(["scanned", expect.stringMatching(/^capture_/)]);
  });

  it("runs the pixel-only checks and the prepare hooks while the OCR reads (once it has the page), the text checks after it", async () => {
    const events: string[] = [];
    let pixelStarted!: () => void;
    const started = new Promise<void>((resolve) => {
      pixelStarted = resolve;
    });
    // The OCR finishes only once the pixel check has started (or after 20 s, so a failure does not hang).
    const ocr: OcrEngine = {
      async recognize(_png, opts) {
        events.push("ocr sent");
        opts?.onSent?.();
        await Promise.race([started, new Promise((r) => setTimeout(r, 20_000))]);
        events.push("ocr done");
        return { text: "", confidence: 0, words: [] };
      },
      terminate: async () => undefined,
    };
    const check = (id: string, extra: Partial<Check>): Check => ({
      id,
      codes: {},
      appliesTo: () => true,
      run: async () => {
        events.push(`${id} runs`);
        if (id === "test.pixels") pixelStarted();
        return { checkId: id, outcome: "pass", severity: 0, summary: id, findings: [] };
      },
      ...extra,
    });
    const text = check("test.text", {});
    const pixels = check("test.pixels", { pixelsOnly: true });
    const prepared1 = check("test.prepared", {
      prepare: async () => {
        events.push("test.prepared prepares");
      },
    });
    const input = await prepared(makePng(4), "image/png", "statement.png");
    const result = await runCheckStep(input, ctx, { checks: [text, pixels, prepared1], ocr });
    expect(result.checks.map((c) => c.checkId)).toEqual(["test.text", "test.pixels", "test.prepared"]);
    const at = (e: string) => events.indexOf(e);
    expect(at("test.pixels runs")).toBeGreaterThanOrEqual(0);
    expect(at("test.pixels runs")).toBeLessThan(at("ocr done"));
    // …started once tesseract has the page (RecognizeOptions.onSent), not while this thread prepares it.
    expect(at("test.pixels runs")).toBeGreaterThan(at("ocr sent"));
    expect(at("test.prepared prepares")).toBeGreaterThan(at("ocr sent"));
    expect(at("test.prepared prepares")).toBeLessThan(at("ocr done"));
    expect(at("test.text runs")).toBeGreaterThan(at("ocr done"));
    expect(at("test.prepared runs")).toBeGreaterThan(at("ocr done"));
  });

  it("fails document_unreadable for bytes that are no PDF at all", async () => {
    for (const bytes of [makeRandomBytes(5, 3000), await makeMalformedPdf(5, "garbage_body")]) {
      const result = await runCheckStep(await prepared(bytes, "application/pdf", "statement.pdf"), ctx);
      expect(result.failure?.code).toBe("document_unreadable");
      expect(result.checks).toEqual([]);
    }
  });

  it("handles a truncated PDF and a fake page count without crashing or hanging", async () => {
    for (const kind of ["truncated", "fake_page_count"] as const) {
      const bytes = await makeMalformedPdf(6, kind);
      const result = CheckStepResult.parse(
        await runCheckStep(await prepared(bytes, "application/pdf", "x.pdf"), ctx),
      );
      if (result.failure) expect(result.failure.code).toBe("document_unreadable");
      else for (const c of result.checks) expect(["pass", "flag", "skip", "error"]).toContain(c.outcome);
    }
    const fake = await runCheckStep(
      await prepared(await makeMalformedPdf(6, "fake_page_count"), "application/pdf", "x.pdf"),
      ctx,
    );
    const text = (await ctx.objects.get(ctx.bucket, fake.textKey!)).toString("utf8");
    expect(text).toMatch(/--- page 1 ---/);
    expect(text.match(/--- page/g)?.length).toBeLessThanOrEqual(2);
  });

  it("turns a check that throws or overruns into outcome error without failing the step", async () => {
    const throwing: Check = {
      id: "test.throws",
      codes: {},
      appliesTo: () => true,
      run: async () => {
        throw new Error("boom");
      },
    };
    const hanging: Check = {
      id: "test.hangs",
      codes: {},
      appliesTo: () => true,
      run: () => new Promise(() => undefined),
    };
    // A pixel check (run beside the OCR) whose appliesTo throws still runs and reports.
    const pixelsThrowing: Check = {
      id: "test.pixels-throws",
      codes: {},
      pixelsOnly: true,
      appliesTo: () => {
        throw new Error("no pixels");
      },
      run: async () => {
        throw new Error("no pixels");
      },
    };
    const notApplicable: Check = {
      id: "test.never",
      codes: {},
      appliesTo: () => false,
      run: async () => {
        throw new Error("ran");
      },
    };
    const input = await prepared(
      await makeDocument({ seed: 9, docType: "invoice", region: "US" }),
      "application/pdf",
      "i.pdf",
    );
    const result = await runCheckStep(input, ctx, {
      checks: [...CHECKS, throwing, hanging, pixelsThrowing, notApplicable],
      checkTimeoutMs: 200,
    });
    expect(result.failure).toBeUndefined();
    const byId = Object.fromEntries(result.checks.map((c) => [c.checkId, c]));
    expect(byId["test.throws"]).toMatchObject({ outcome: "error", severity: 0 });
    expect(byId["test.throws"]?.summary).toMatch(/boom/);
    expect(byId["test.hangs"]).toMatchObject({ outcome: "error" });
    expect(byId["test.hangs"]?.summary).toMatch(/did not finish within 200 ms/);
    expect(byId["test.pixels-throws"]).toMatchObject({ outcome: "error", severity: 0 });
    expect(byId["test.pixels-throws"]?.summary).toMatch(/no pixels/);
    expect(byId["test.never"]).toBeUndefined();
    expect(byId["file.type"]?.outcome).toBe("pass");
  });

  it("takes authoritative and discovered facts from a check that sets them, deduplicated", async () => {
    const deciding: Check = {
      id: "test.signature",
      codes: {},
      appliesTo: (doc) => doc.pdf !== undefined,
      run: async () => ({
        checkId: "test.signature",
        outcome: "pass",
        severity: 0,
        summary: "Signed and intact.",
        findings: [],
        discovered: ["signature_present", "metadata_present"],
        authoritative: { trust: "corroborated", directive: "The signature covers the whole document." },
      }),
    };
    const input = await prepared(
      await makeDocument({ seed: 9, docType: "contract", region: "GB" }),
      "application/pdf",
      "c.pdf",
      "contract",
    );
    const result = await runCheckStep(input, ctx, { checks: [deciding] });
    expect(result.authoritative).toEqual({
      checkId: "test.signature",
      trust: "corroborated",
      directive: "The signature covers the whole document.",
    });
    expect(result.discovered.filter((d) => d === "metadata_present")).toHaveLength(1);
    expect(result.discovered).toContain("signature_present");
  });

  it("fails check_failed when the prepared document is missing", async () => {
    const input = await prepared(makePng(1), "image/png", "a.png");
    await ctx.objects.delete(ctx.bucket, input.document!.key);
    expect((await runCheckStep(input, ctx)).failure?.code).toBe("check_failed");
  });
});
