import { describe, expect, it } from "vitest";
import { CheckResult } from "../../core/check-result.js";
import { modelOf } from "../../document/testdata/model-kit.js";
import { makeDocument } from "../../fixtures/documents.js";
import { withXmpHistory } from "../../fixtures/revisions.js";
import { historyDateFindings, printedDateFindings } from "./history-dates.js";
import { metadataDatesCheck } from "./metadata-dates.js";

const now = new Date("2026-01-15T12:00:00Z");

describe("metadata.dates: XMP history dates", () => {
  const withHistory = async (when: string) =>
    modelOf(
      await withXmpHistory(
        await makeDocument({
          seed: 2,
          docType: "bank_statement",
          region: "GB",
          creationDate: "D:20251001021000Z",
          modDate: "D:20251001021000Z",
        }),
        {
          producer: "OpenText Exstream 16.6",
          creatorTool: "OpenText Exstream 16.6",
          createDate: "2025-10-01T02:10:00Z",
          modifyDate: "2025-10-01T02:10:00Z",
          history: [
            { action: "created", softwareAgent: "OpenText Exstream 16.6", when: "2025-10-01T02:10:00Z" },
            { action: "saved", softwareAgent: "Adobe Acrobat Pro 24.1", when },
          ],
        },
      ),
    );

  it("flags an edit recorded after the modification date the file claims", async () => {
    const findings = historyDateFindings(await withHistory("2025-11-20T18:02:00Z"), now);
    expect(findings.map((f) => f.code)).toEqual(
      ["history_after_modification", "history_after_modification"].slice(0, findings.length),
    );
    expect(findings[0]?.message).toMatch(
      /"saved" by "Adobe Acrobat Pro 24\.1" at 2025-11-20T18:02:00Z, later than the Info ModDate/,
    );
    const r = CheckResult.parse(
      await metadataDatesCheck.run(await withHistory("2025-11-20T18:02:00Z"), { now }),
    );
    expect(r.outcome).toBe("flag");
  });

  it("flags a history date in the future, and accepts a consistent history", async () => {
    expect(historyDateFindings(await withHistory("2099-01-01T00:00:00Z"), now).map((f) => f.code)).toContain(
      "history_date_in_future",
    );
    expect(historyDateFindings(await withHistory("2025-10-01T02:10:30Z"), now)).toEqual([]);
  });
});

describe("metadata.dates: printed dates vs creation", () => {
  it("flags a statement created before the dates it prints", async () => {
    const bytes = await makeDocument({
      seed: 6,
      docType: "bank_statement",
      region: "GB",
      creationDate: "D:20230105090000Z",
      modDate: "D:20230105090000Z",
      xmp: false,
    });
    const f = printedDateFindings(await modelOf(bytes, { docType: "bank_statement", region: "GB" }));
    expect(f).toHaveLength(1);
    expect(f[0]).toMatchObject({ code: "created_before_printed_dates", severity: 5 });
    expect(f[0]?.evidence).toMatchObject({ created: "D:20230105090000Z" });
  });

  it("accepts genuine statements and payslips in every region, and ignores invoices (due dates)", async () => {
    for (const docType of ["bank_statement", "payslip", "receipt"] as const) {
      for (const region of ["US", "GB", "DE"] as const) {
        const model = await modelOf(await makeDocument({ seed: 3, docType, region }), { docType, region });
        expect(printedDateFindings(model), `${docType} ${region}`).toEqual([]);
      }
    }
    const invoice = await makeDocument({
      seed: 3,
      docType: "invoice",
      region: "GB",
      creationDate: "D:20200101000000Z",
      xmp: false,
    });
    expect(printedDateFindings(await modelOf(invoice, { docType: "invoice" }))).toEqual([]);
  });
});
