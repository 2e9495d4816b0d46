import { deflateSync } from "node:zlib";
import { PDFDocument, PDFName } from "pdf-lib";
import { describe, expect, it } from "vitest";
import { CheckResult } from "../../core/check-result.js";
import type { DocumentModel } from "../../document/model.js";
import { modelOf } from "../../document/testdata/model-kit.js";
import { documentFacts, issuerHost } from "../../fixtures/doc-facts.js";
import { makeDocument, type Region } from "../../fixtures/documents.js";
import { addQrCode, paymentPayload, qrPng } from "../../fixtures/qr.js";
import { pixelsOf } from "../../document/pixels.js";
import { qrCodesCheck } from "./qr-codes.js";

const now = new Date("2026-01-15T12:00:00Z");
const run = async (model: DocumentModel) => CheckResult.parse(await qrCodesCheck.run(model, { now }));
const codes = (r: CheckResult) => r.findings.map((f) => f.code).sort();

async function invoiceWithQr(
  region: Region,
  tweak: { amountDelta?: number; host?: string; iban?: string } = {},
  opts: Parameters<typeof addQrCode>[2] = {},
) {
  const f = documentFacts(21, "invoice", region);
  const pdf = await makeDocument({ seed: 21, docType: "invoice", region });
  const payload = paymentPayload({
    name: f.issuer,
    amountCents: (f.amountDue?.cents ?? 0) + (tweak.amountDelta ?? 0),
    currency: region === "US" ? "USD" : region === "GB" ? "GBP" : "EUR",
    iban: tweak.iban ?? f.iban,
    bic: f.bic,
    reference: f.reference ?? "ref",
    dueDate: f.dueDate,
    host: tweak.host ?? issuerHost(f.issuer, region),
  });
  return modelOf(await addQrCode(pdf, payload, opts), { docType: "invoice", region });
}

describe("qr.codes", () => {
  it("passes a genuine payment QR code in every region and reports qr_present", async () => {
    for (const region of ["US", "GB", "DE"] as const) {
      const r = await run(await invoiceWithQr(region));
      expect(r.outcome, region).toBe("pass");
      expect(r.discovered).toEqual(["qr_present"]);
      expect(r.findings).toEqual([]);
      expect(r.summary).toMatch(/agrees with the printed document/);
    }
  });

  it("finds QR codes drawn as vector rectangles and embedded as JPEG", async () => {
    const vector = await run(await invoiceWithQr("GB", {}, { vector: true }));
    expect(vector.discovered).toEqual(["qr_present"]);
    expect(vector.summary).toMatch(/pay\.kestrelsystems\.co\.uk|pay\./);
    const jpeg = await run(await invoiceWithQr("US", {}, { format: "jpeg", page: 1 }));
    expect(jpeg.discovered).toEqual(["qr_present"]);
  });

  it("flags a QR amount the document does not print (printed total edited, QR kept)", async () => {
    const r = await run(await invoiceWithQr("US", { amountDelta: 25_000 }));
    expect(r.outcome).toBe("flag");
    expect(codes(r)).toEqual(["qr_amount_mismatch"]);
    const f = r.findings[0];
    expect(f?.page).toBe(1);
    expect(f?.message).toMatch(/encodes the amount \d+\.\d\d, which is printed nowhere/);
    expect(f?.evidence).toMatchObject({ qrAmount: expect.stringMatching(/^\d+\.\d\d$/) });
    expect(r.severity).toBeGreaterThanOrEqual(7);
  });

  it("flags a link to a domain that is not the issuer's, and a shortener", async () => {
    const foreign = await run(await invoiceWithQr("GB", { host: "secure-invoice-payments.com" }));
    expect(codes(foreign)).toEqual(["qr_domain_foreign"]);
    expect(foreign.findings[0]?.message).toMatch(
      /secure-invoice-payments\.com, which does not belong to the issuer/,
    );
    // A payment link (amount, reference) to another domain than the issuer's is a redirected payment.
    expect(foreign.findings[0]?.severity).toBe(4);
    expect(foreign.findings[0]?.evidence).toMatchObject({ paymentLink: true });
    const short = await run(await invoiceWithQr("US", { host: "bit.ly" }));
    expect(codes(short)).toEqual(["qr_url_obscured"]);
  });

  it("notes a plain link to another site (a messenger, a partner) without calling it a redirect", async () => {
    const pdf = await makeDocument({ seed: 21, docType: "invoice", region: "GB" });
    const model = await modelOf(await addQrCode(pdf, "https://weixin.qq.com/r/AbCdEf"), {
      docType: "invoice",
      region: "GB",
    });
    const r = await run(model);
    expect(r.findings.map((f) => [f.code, f.severity])).toEqual([["qr_domain_foreign", 3]]);
    expect(r.findings[0]?.message).toMatch(/worth a look/);
  });

  it("flags a SEPA QR code that pays into another IBAN than the printed one", async () => {
    const r = await run(await invoiceWithQr("DE", { iban: "DE89370400440532013000" }));
    expect(r.outcome).toBe("flag");
    expect(codes(r)).toEqual(["qr_iban_mismatch"]);
    expect(r.findings[0]?.evidence).toMatchObject({ qrIban: "DE89370400440532013000" });
  });

  it("reads a QR code in an image document", async () => {
    const png = await qrPng("https://verify.example.org/d/123", 6);
    const r = await run(await modelOf(new Uint8Array(png), { filename: "code.png" }));
    expect(r.discovered).toEqual(["qr_present"]);
    expect(r.summary).toMatch(/verify\.example\.org/);
  });

  it("decodes in prepare (while the OCR reads) and run() uses that decode instead of decoding again", async () => {
    const png = await qrPng("https://verify.example.org/d/123", 6);
    const model = await modelOf(new Uint8Array(png), { filename: "code.png" });
    const px = pixelsOf(model);
    const page = px.page.bind(px);
    let decodes = 0;
    px.page = (n, req, signal) => {
      decodes++;
      return page(n, req, signal);
    };
    await qrCodesCheck.prepare!(model);
    expect(decodes).toBe(1);
    const r = await run(model);
    expect(decodes).toBe(1);
    expect(r.summary).toMatch(/verify\.example\.org/);
    // An aborted preparation leaves nothing: run() decodes itself.
    const again = await modelOf(new Uint8Array(png), { filename: "code.png" });
    const ctl = new AbortController();
    ctl.abort();
    await qrCodesCheck.prepare!(again, ctl.signal);
    expect((await run(again)).summary).toMatch(/verify\.example\.org/);
  });

  it("skips a document without QR codes, at no rendering cost for text-only pages", async () => {
    const r = await run(
      await modelOf(await makeDocument({ seed: 3, docType: "bank_statement", region: "GB", pages: 2 })),
    );
    expect(r.outcome).toBe("skip");
    expect(r.discovered).toBeUndefined();
    expect(r.summary).toMatch(/no readable QR code/);
  });

  it("survives hostile images: a decompression bomb, absurd dimensions and a corrupt JPEG", async () => {
    const base = await PDFDocument.load(await makeDocument({ seed: 4, docType: "invoice", region: "US" }), {
      updateMetadata: false,
    });
    const page = base.getPage(0);
    const bomb = base.context.stream(deflateSync(Buffer.alloc(64 * 1024 * 1024)), {
      Type: "XObject",
      Subtype: "Image",
      Width: 4000,
      Height: 4000,
      ColorSpace: "DeviceRGB",
      BitsPerComponent: 8,
      Filter: "FlateDecode",
    });
    const huge = base.context.stream(new Uint8Array(100), {
      Type: "XObject",
      Subtype: "Image",
      Width: 1_000_000,
      Height: 1_000_000,
      ColorSpace: "DeviceGray",
      BitsPerComponent: 8,
    });
    const corrupt = base.context.stream(new Uint8Array([0xff, 0xd8, 0xff, 0xe0, 1, 2, 3, 4, 5]), {
      Type: "XObject",
      Subtype: "Image",
      Width: 300,
      Height: 300,
      ColorSpace: "DeviceRGB",
      BitsPerComponent: 8,
      Filter: "DCTDecode",
    });
    const xobjects = base.context.obj({
      Bomb: base.context.register(bomb),
      Huge: base.context.register(huge),
      Bad: base.context.register(corrupt),
    });
    page.node.Resources()?.set(PDFName.of("XObject"), xobjects);
    const bytes = await base.save({ useObjectStreams: false });
    const started = Date.now();
    const r = await run(await modelOf(bytes, { docType: "invoice", region: "US" }));
    expect(["skip", "error"]).toContain(r.outcome);
    expect(r.summary).toMatch(/no readable QR code|could not/);
    expect(Date.now() - started).toBeLessThan(60_000); // bounded, not a timing assertion on speed
  });
});
