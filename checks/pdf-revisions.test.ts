import { PDFName, PDFString } from "pdf-lib";
import { beforeAll, describe, expect, it } from "vitest";
import { CheckResult } from "../core/check-result.js";
import type { DocType } from "../core/verdict.js";
import { modelOf } from "../document/testdata/model-kit.js";
import { makeDocument, makeMalformedPdf } from "../fixtures/documents.js";
import { appendRevision, makeFormPdf, tamperRevision } from "../fixtures/revisions.js";
import { pdfRevisionsCheck } from "./pdf-revisions.js";

const now = new Date("2026-01-15T12:00:00Z");
const run = async (bytes: Uint8Array, docType: DocType = "bank_statement") =>
  CheckResult.parse(await pdfRevisionsCheck.run(await modelOf(bytes, { docType }), { now }));
const byCode = (r: CheckResult, code: string) => r.findings.find((f) => f.code === code);

let statement: Uint8Array;
beforeAll(async () => {
  statement = await makeDocument({ seed: 21, docType: "bank_statement", region: "GB", pages: 2 });
});

describe("pdf.revisions on genuine documents", () => {
  it("passes documents saved once, for every fixture type and region, without incremental_updates", async () => {
    for (const docType of ["bank_statement", "payslip", "invoice", "utility_bill", "tax_return"] as const) {
      for (const region of ["US", "GB", "DE"] as const) {
        const r = await run(await makeDocument({ seed: 3, docType, region }), docType);
        expect(r.outcome, `${docType} ${region}`).toBe("pass");
        expect(r.findings).toEqual([]);
        expect(r.discovered ?? []).not.toContain("incremental_updates");
        expect(r.summary).toMatch(/saved once/);
      }
    }
  });

  it("reports form fields without flagging them", async () => {
    const r = await run(await makeFormPdf(2), "loan_application");
    expect(r.outcome).toBe("pass");
    expect(r.discovered).toContain("form_fields");
  });
});

describe("pdf.revisions on tampered documents", () => {
  for (const xref of ["table", "stream"] as const) {
    it(`reports an amount changed in a content stream, before → after, with page and place (${xref} xref)`, async () => {
      const t = await tamperRevision(statement, "amount_edit", { xref });
      const r = await run(t.bytes);
      expect(r.outcome).toBe("flag");
      expect(r.severity).toBeGreaterThanOrEqual(9);
      expect(r.discovered).toContain("incremental_updates");
      const f = byCode(r, "revision_changed_text");
      expect(f?.page).toBe(1);
      expect(f?.bbox).toHaveLength(4);
      expect(f?.message).toContain(`${JSON.stringify(t.before)} → ${JSON.stringify(t.after)}`);
      expect(f?.evidence).toMatchObject({ revision: 2, edits: [{ before: t.before, after: t.after }] });
    });
  }

  it("reports a value retyped over a white box in another font", async () => {
    const t = await tamperRevision(statement, "overlay_edit");
    const r = await run(t.bytes);
    expect(byCode(r, "revision_changed_text")?.message).toContain(`added ${JSON.stringify(t.after)}`);
    expect(byCode(r, "revision_added_fonts")?.message).toMatch(/Times-Roman/);
    expect(r.severity).toBeGreaterThanOrEqual(8);
  });

  it("reports pages added and replaced", async () => {
    const added = await run((await tamperRevision(statement, "page_added")).bytes);
    expect(byCode(added, "revision_added_page")).toMatchObject({ page: 3, severity: 8 });
    const replaced = await run((await tamperRevision(statement, "page_replaced")).bytes);
    expect(byCode(replaced, "revision_replaced_page")?.page).toBe(1);
    expect(byCode(replaced, "revision_replaced_page")?.message).toMatch(/98,400\.00/);
  });

  it("reports an annotation laid over the page", async () => {
    const r = await run((await tamperRevision(statement, "annotation_added")).bytes);
    const f = byCode(r, "revision_added_annotation");
    expect(f).toMatchObject({ page: 1, severity: 6 });
    expect(f?.message).toMatch(/FreeText annotation .* "9,999\.00"/);
  });

  it("reports a changed form field value: mild on a form, strong on a statement", async () => {
    const t = await tamperRevision(await makeFormPdf(4), "form_field");
    const onForm = await run(t.bytes, "loan_application");
    const f = byCode(onForm, "revision_changed_form_field");
    expect(f?.evidence).toMatchObject({ before: t.before, after: t.after, detail: "requested_amount" });
    expect(onForm.outcome).toBe("pass");
    const onStatement = await run(t.bytes, "bank_statement");
    expect(byCode(onStatement, "revision_changed_form_field")?.severity).toBe(6);
    expect(onStatement.outcome).toBe("flag");
  });

  it("rates a metadata-only update as mild", async () => {
    const r = await run((await tamperRevision(statement, "metadata_only")).bytes);
    expect(r.outcome).toBe("pass");
    expect(byCode(r, "revision_changed_metadata")?.severity).toBe(1);
    expect(r.discovered).toContain("incremental_updates");
  });

  it("reports JavaScript and embedded files added in an update", async () => {
    const bytes = await appendRevision(statement, (doc) => {
      const js = doc.context.obj({ S: "JavaScript", JS: PDFString.of("app.alert('hi')") });
      doc.catalog.set(PDFName.of("OpenAction"), doc.context.register(js));
      doc.catalog.set(
        PDFName.of("Names"),
        doc.context.obj({ EmbeddedFiles: doc.context.obj({ Names: [] }) }),
      );
    });
    const r = await run(bytes);
    expect(r.discovered).toEqual(
      expect.arrayContaining(["javascript_present", "embedded_files", "incremental_updates"]),
    );
    expect(byCode(r, "revision_changed_catalog")?.message).toMatch(/OpenAction/);
  });
});

describe("pdf.revisions on hostile input", () => {
  it("ends in pass, flag or skip with a reason, never a throw", async () => {
    const hostile: Uint8Array[] = [
      await makeMalformedPdf(3, "truncated"),
      await makeMalformedPdf(3, "fake_page_count"),
      new Uint8Array(Buffer.concat([Buffer.from(statement), Buffer.from("startxref\n99999999999\n%%EOF\n")])),
    ];
    for (const bytes of hostile) {
      const model = await modelOf(bytes).catch(() => undefined);
      if (!model) continue; // pdfjs refused it: the runner fails it as document_unreadable before any check
      const r = CheckResult.parse(await pdfRevisionsCheck.run(model, { now }));
      expect(["pass", "flag", "skip"]).toContain(r.outcome);
      expect(r.summary.length).toBeGreaterThan(10);
    }
  });

  it("skips with a reason when the structure cannot be read at all", async () => {
    const model = await modelOf(statement);
    const garbage = { ...model, bytes: new Uint8Array(Buffer.from(`%PDF-1.7\n${"x".repeat(5000)}`)) };
    const r = await pdfRevisionsCheck.run(garbage, { now });
    expect(r.outcome).toBe("skip");
    expect(r.summary).toMatch(/cannot be read/);
  });
});
