import { describe, expect, it } from "vitest";
import { CheckResult } from "../../core/check-result.js";
import { modelOf } from "../../document/testdata/model-kit.js";
import { makeDocument, makeMetadataTamperedPdf, makePng } from "../../fixtures/documents.js";
import { metadataDatesCheck } from "./metadata-dates.js";

const now = new Date("2026-01-15T12:00:00Z");
const run = async (
  bytes: Uint8Array,
  docType: NonNullable<Parameters<typeof modelOf>[1]>["docType"] = "bank_statement",
) => CheckResult.parse(await metadataDatesCheck.run(await modelOf(bytes, { docType }), { now }));
const codes = (r: CheckResult) => r.findings.map((f) => f.code).sort();

describe("metadata.dates", () => {
  it("passes a genuine document whose Info and XMP dates agree", async () => {
    for (const region of ["US", "GB", "DE"] as const) {
      const r = await run(await makeDocument({ seed: 11, docType: "bank_statement", region }));
      expect(r.outcome, region).toBe("pass");
      expect(r.severity).toBe(0);
      expect(r.findings).toEqual([]);
      expect(r.summary).toMatch(/5 recorded dates .* are consistent/);
    }
  });

  it("flags a modification date before the creation date, in Info and XMP", async () => {
    const r = await run(await makeMetadataTamperedPdf(2, "modified_before_created"));
    expect(r.outcome).toBe("flag");
    expect(codes(r)).toEqual(["modified_before_created", "modified_before_created"]);
    expect(r.severity).toBe(4);
    expect(r.findings[0]?.message).toMatch(/days before the creation date/);
  });

  it("flags a date in the future", async () => {
    const r = await run(await makeMetadataTamperedPdf(2, "future_date"));
    expect(r.outcome).toBe("flag");
    expect(codes(r)).toContain("date_in_future");
    expect(r.severity).toBe(4);
    expect(r.findings.find((f) => f.code === "date_in_future")?.evidence).toMatchObject({ field: "ModDate" });
  });

  it("tolerates a date less than a day ahead (clock skew, time zones)", async () => {
    const soon = new Date(now.getTime() + 10 * 3_600_000);
    const r = await run(
      await makeDocument({
        seed: 1,
        docType: "invoice",
        region: "GB",
        creationDate: new Date("2025-12-01T00:00:00Z"),
        modDate: soon,
        xmp: false,
      }),
      "other",
    );
    expect(codes(r)).not.toContain("date_in_future");
  });

  it("flags Info and XMP telling different stories", async () => {
    const r = await run(await makeMetadataTamperedPdf(2, "info_xmp_mismatch"));
    expect(r.outcome).toBe("flag");
    expect(codes(r)).toContain("info_xmp_mismatch");
    const mismatch = r.findings.find((f) => f.code === "info_xmp_mismatch");
    expect(mismatch?.evidence).toMatchObject({ field: "modification" });
  });

  it("tells a later tool's rewrite of Info (another producer there) from a date edited alone", async () => {
    const created = new Date("2025-03-01T09:00:00Z");
    const later = new Date("2025-03-20T10:00:00Z");
    const doc = (infoProducer: string) =>
      makeDocument({
        seed: 5,
        docType: "bank_statement",
        region: "GB",
        producer: infoProducer,
        creationDate: created,
        modDate: later,
        xmp: { createDate: created, modifyDate: created, producer: "Statement Composer 4.2" },
      });
    const sev = (r: CheckResult) => r.findings.find((f) => f.code === "info_xmp_mismatch")?.severity;
    expect(sev(await run(await doc("APStripFiles 1.8")))).toBe(2);
    expect(sev(await run(await doc("Statement Composer 4.2")))).toBe(4);
  });

  it("accepts Info and XMP copies that differ only by a missing time zone", async () => {
    const r = await run(
      await makeDocument({
        seed: 3,
        docType: "payslip",
        region: "DE",
        // After the pay period the payslip prints (metadata.dates also compares printed dates).
        creationDate: "D:20251001101500+01'00'",
        modDate: "D:20251001101500+01'00'",
        xmp: {
          createDate: "2025-10-01T10:15:00",
          modifyDate: "2025-10-01T09:15:30Z",
          metadataDate: "2025-10-01T10:15:00",
        },
      }),
    );
    expect(r.findings).toEqual([]);
    expect(r.outcome).toBe("pass");
  });

  it("rates a statement edited months after creation higher than an old contract", async () => {
    const statement = await run(await makeMetadataTamperedPdf(2, "late_modification"), "bank_statement");
    expect(statement.outcome).toBe("flag");
    expect(statement.findings.find((f) => f.code === "long_modification_gap")?.severity).toBe(4);
    const contract = await run(
      await makeDocument({
        seed: 2,
        docType: "contract",
        region: "GB",
        creationDate: new Date("2025-01-01T09:00:00Z"),
        modDate: new Date("2025-03-01T09:00:00Z"),
      }),
      "contract",
    );
    const gap = contract.findings.filter((f) => f.code === "long_modification_gap");
    expect(gap).toHaveLength(1);
    expect(gap[0]?.severity).toBe(2);
    expect(contract.severity).toBe(2);
  });

  it("reports unparseable and implausible dates", async () => {
    const r = await run(
      await makeDocument({
        seed: 4,
        docType: "invoice",
        region: "US",
        creationDate: "D:191000101120000",
        modDate: "D:19850101",
        xmp: false,
      }),
    );
    expect(codes(r)).toEqual(["date_implausible", "date_unparseable"]);
    expect(r.outcome).toBe("flag");
  });

  it("skips a PDF without any dates, noting their absence", async () => {
    const bytes = await makeDocument({
      seed: 5,
      docType: "receipt",
      region: "GB",
      creationDate: "",
      modDate: "",
      xmp: false,
    });
    const r = await run(bytes);
    expect(r.outcome).toBe("skip");
    expect(codes(r)).toEqual(["dates_absent"]);
  });

  it("notes a modification date without a creation date", async () => {
    const r = await run(
      await makeDocument({
        seed: 5,
        docType: "receipt",
        region: "GB",
        creationDate: "",
        modDate: "D:20250301",
        xmp: false,
      }),
      "receipt",
    );
    expect(codes(r)).toEqual(["creation_date_missing"]);
    expect(r.outcome).toBe("pass");
  });

  it("skips images with a pointer to image.metadata", async () => {
    const r = CheckResult.parse(
      await metadataDatesCheck.run(await modelOf(makePng(1), { filename: "a.png" }), { now }),
    );
    expect(r.outcome).toBe("skip");
    expect(r.summary).toBe("metadata.dates reads PDF metadata; image EXIF is read by image.metadata.");
  });
});
