import { execFileSync } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { type PDFArray, type PDFDict, PDFName, PDFRawStream, PDFRef, PDFString } from "pdf-lib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CheckResult } from "../../core/check-result.js";
import { openRawPdf } from "../../document/pdf-raw/document.js";
import { get, isRef, numberOf } from "../../document/pdf-raw/objects.js";
import { modelOf } from "../../document/testdata/model-kit.js";
import { makeDocument } from "../../fixtures/documents.js";
import { appendRevision, makeFormPdf, tamperRevision } from "../../fixtures/revisions.js";
import { signPdf, testPki } from "../../fixtures/signed.js";
import { signaturePdfCheck } from "./signature-pdf.js";
import { buildTimestampToken, issue, TIMESTAMPING_EKU } from "./testdata/pki-kit.js";

/**
 * What may happen to a signed PDF afterwards (modification-policy.ts, through the check): deny by
 * default, but everything real signers and archivers do passes — and what an attacker would hide in an
 * incremental update does not. The pyHanko suite (pyhanko-suite.test.ts) covers shared appearance
 * streams; these cover the DocMDP levels, FieldMDP locks, validation data and the file structure.
 */

const now = new Date("2026-01-15T12:00:00Z");
let rootPem: string;
let statement: Uint8Array;

beforeAll(async () => {
  rootPem = (await testPki()).rootPem;
  statement = await makeDocument({ seed: 5, docType: "bank_statement", region: "GB", pages: 1 });
}, 60_000);

async function verdict(bytes: Uint8Array) {
  return CheckResult.parse(
    await signaturePdfCheck.run(await modelOf(bytes), { now, trustAnchorsPem: rootPem }),
  );
}

/** An incremental update written by hand: the objects given, a cross-reference table, and a trailer. */
function rawUpdate(
  bytes: Uint8Array,
  o: { objects?: [number, string][]; free?: number[]; trailerExtra?: string; size?: number },
): Uint8Array {
  const raw = openRawPdf(bytes);
  const t = raw.trailer();
  const root = get(t, "Root");
  const size = Math.max(o.size ?? 0, numberOf(get(t, "Size")) ?? 0);
  const prev = Number(/startxref\s+(\d+)\s+%%EOF\s*$/.exec(Buffer.from(bytes).toString("latin1"))?.[1]);
  let body = "\n";
  let pos = bytes.length + 1;
  let xref = "xref\n0 1\n0000000000 65535 f \n";
  for (const [num, text] of o.objects ?? []) {
    const chunk = `${num} 0 obj\n${text}\nendobj\n`;
    xref += `${num} 1\n${String(pos).padStart(10, "0")} 00000 n \n`;
    body += chunk;
    pos += chunk.length;
  }
  for (const num of o.free ?? []) xref += `${num} 1\n0000000000 00001 f \n`;
  const trailer = `trailer\n<< /Size ${size} /Root ${isRef(root) ? `${root.num} ${root.gen} R` : ""} /Prev ${prev} ${o.trailerExtra ?? ""} >>\nstartxref\n${pos}\n%%EOF\n`;
  return new Uint8Array(Buffer.concat([Buffer.from(bytes), Buffer.from(body + xref + trailer, "latin1")]));
}

describe("DocMDP levels", () => {
  it("P=3 permits an annotation after certification; P=2 does not", async () => {
    const p3 = (await tamperRevision(await signPdf(statement, { docMdp: 3 }), "annotation_added")).bytes;
    const r3 = await verdict(p3);
    expect(r3.authoritative?.trust, r3.summary).toBe("corroborated");
    expect(r3.authoritative?.directive).toMatch(/a FreeText annotation added on page 1/);
    const p2 = (await tamperRevision(await signPdf(statement, { docMdp: 2 }), "annotation_added")).bytes;
    const r2 = await verdict(p2);
    expect(r2.authoritative?.trust).toBe("unattested");
    expect(r2.authoritative?.directive).toMatch(
      /changes that need form filling, further signatures and annotations \(a FreeText annotation added on page 1\)/,
    );
  });

  it("P=1 forbids form filling but permits validation data and a document timestamp (PAdES-LTA)", async () => {
    const certified = await signPdf(await makeFormPdf(5), { docMdp: 1 });
    const filled = await verdict((await tamperRevision(certified, "form_field")).bytes);
    expect(filled.authoritative?.trust).toBe("unattested");
    expect(filled.authoritative?.directive).toMatch(
      /need form filling and further signatures \(form field "requested_amount" set to/,
    );

    const signerDer = Buffer.from(rootPem.replace(/-----(BEGIN|END) CERTIFICATE-----|\s/g, ""), "base64");
    const withDss = await appendRevision(certified, (doc) => {
      const cert = doc.context.register(PDFRawStream.of(doc.context.obj({}) as PDFDict, signerDer));
      const certs = doc.context.obj([cert]) as PDFArray;
      doc.catalog.set(PDFName.of("DSS"), doc.context.register(doc.context.obj({ Certs: certs })));
    });
    const tsa = issue({ subject: "Archive TSA", extKeyUsage: [TIMESTAMPING_EKU] });
    const archived = await signPdf(withDss, {
      docTimestamp: true,
      signatureLength: 12_000,
      cms: (content) => buildTimestampToken(content, tsa, new Date("2025-11-01T00:00:00Z")),
    });
    const r = await verdict(archived);
    expect(r.authoritative?.trust, r.summary).toBe("corroborated");
    expect(r.authoritative?.directive).toMatch(/signature validation data \(DSS\)/);
    expect(r.findings.map((f) => f.code)).toContain("document_timestamp_unverified");
  });

  it("form filling is permitted where the page's annotations and the form's fields are indirect arrays", async () => {
    const indirect = await appendRevision(await makeFormPdf(5), (doc) => {
      const page = doc.getPage(0).node;
      const annots = page.lookup(PDFName.of("Annots"));
      page.set(PDFName.of("Annots"), doc.context.register(annots as PDFArray));
      const acro = doc.catalog.lookup(PDFName.of("AcroForm")) as PDFDict;
      acro.set(PDFName.of("Fields"), doc.context.register(acro.lookup(PDFName.of("Fields")) as PDFArray));
    });
    const r = await verdict(
      (await tamperRevision(await signPdf(indirect, { docMdp: 2 }), "form_field")).bytes,
    );
    expect(r.authoritative?.trust, r.summary).toBe("corroborated");
    expect(r.authoritative?.directive).toMatch(/form field "requested_amount" set to/);
  });

  it("a FieldMDP lock forbids changing the locked field, even where DocMDP would allow form filling", async () => {
    const locked = await signPdf(await makeFormPdf(5), {
      fieldMdp: { action: "Include", fields: ["requested_amount"] },
    });
    const r = await verdict((await tamperRevision(locked, "form_field")).bytes);
    expect(r.authoritative?.trust).toBe("unattested");
    expect(r.authoritative?.directive).toMatch(
      /changes form field "requested_amount", which the signature locks/,
    );
    const other = await signPdf(await makeFormPdf(5), {
      fieldMdp: { action: "Include", fields: ["other_field"] },
    });
    expect((await verdict((await tamperRevision(other, "form_field")).bytes)).authoritative?.trust).toBe(
      "corroborated",
    );
  });
});

describe("the file structure after signing", () => {
  let signed: Uint8Array;
  beforeAll(async () => {
    signed = await signPdf(statement);
  });

  it("bytes appended after the signed revision that form no revision are not covered", async () => {
    const tail = Buffer.from(
      "\n9 0 obj\n<< /Hidden (objects no cross-reference section lists) >>\nendobj\n",
      "latin1",
    );
    const r = await verdict(new Uint8Array(Buffer.concat([Buffer.from(signed), tail])));
    expect(r.authoritative?.trust).toBe("unattested");
    expect(r.authoritative?.directive).toMatch(
      /\d+ bytes that belong to no revision follow the end of the signed revision/,
    );
    // Whitespace after %%EOF is not content.
    const padded = await verdict(
      new Uint8Array(Buffer.concat([Buffer.from(signed), Buffer.from("\r\n\n  \n")])),
    );
    expect(padded.authoritative?.trust).toBe("corroborated");
  });

  it("a key added to the trailer is not permitted", async () => {
    const r = await verdict(rawUpdate(signed, { trailerExtra: "/AcroForm 1 0 R" }));
    expect(r.authoritative?.trust).toBe("unattested");
    expect(r.authoritative?.directive).toMatch(/the update changes the file trailer \(\/AcroForm\)/);
  });

  it("a new catalog entry (an open action) is not permitted", async () => {
    const r = await verdict(
      await appendRevision(signed, (doc) => {
        doc.catalog.set(
          PDFName.of("OpenAction"),
          doc.context.obj({ S: "JavaScript", JS: PDFString.of("app.alert(1)") }),
        );
      }),
    );
    expect(r.authoritative?.trust).toBe("unattested");
    expect(r.authoritative?.directive).toMatch(/document catalog entries \/OpenAction changed/);
  });

  it("deleting an object is not permitted", async () => {
    const raw = openRawPdf(signed);
    const info = get(raw.trailer(), "Info");
    const r = await verdict(rawUpdate(signed, { free: [isRef(info) ? info.num : 1] }));
    expect(r.authoritative?.trust).toBe("unattested");
    expect(r.authoritative?.directive).toMatch(/object \d+ was deleted/);
  });

  it("rewriting an earlier signature's dictionary is not permitted; rewriting metadata is", async () => {
    const raw = openRawPdf(signed);
    const sigNum = [...raw.scanObjects().keys()].find((n) =>
      get(raw.dict({ kind: "ref", num: n, gen: 0 }), "ByteRange"),
    );
    expect(sigNum).toBeDefined();
    const sig = raw.dict({ kind: "ref", num: sigNum as number, gen: 0 });
    const rewritten = rawUpdate(signed, {
      objects: [
        [
          sigNum as number,
          `<< /Type /Sig /ByteRange ${JSON.stringify(raw.resolve(get(sig, "ByteRange"))).replace(/,/g, " ")} /Reason (Changed) >>`,
        ],
      ],
    });
    const r = await verdict(rewritten);
    expect(r.authoritative?.trust).toBe("unattested");
    expect(r.authoritative?.directive).toMatch(
      /the signature dictionary of an earlier signature \(object \d+\) was rewritten/,
    );
    const meta = await verdict((await tamperRevision(signed, "metadata_only")).bytes);
    expect(meta.authoritative?.trust, meta.summary).toBe("corroborated");
    expect(meta.authoritative?.directive).toMatch(/metadata \(Info\)/);
  });

  it("an object defined later that the signed revision already referred to is a change to it", async () => {
    // The signed page refers to a second content stream that does not exist yet (a dangling reference,
    // numbered well above anything signing adds)…
    const danglingNum = (numberOf(get(openRawPdf(statement).trailer(), "Size")) ?? 0) + 40;
    const dangling = await appendRevision(statement, (doc) => {
      const page = doc.getPage(0).node;
      const contents = page.get(PDFName.of("Contents"));
      page.set(PDFName.of("Contents"), doc.context.obj([contents as never, PDFRef.of(danglingNum)]));
    });
    const signedDangling = await signPdf(dangling);
    expect((await verdict(signedDangling)).authoritative?.trust).toBe("corroborated");
    // …which a later update defines, painting over the page.
    const later = rawUpdate(signedDangling, {
      objects: [[danglingNum, "<< /Length 34 >>\nstream\n1 1 1 rg 0 0 612 792 re f BT ET\nendstream"]],
      size: danglingNum + 1,
    });
    const r = await verdict(later);
    expect(r.authoritative?.trust).toBe("unattested");
    expect(r.authoritative?.directive).toMatch(/the drawing on page 1/);
  });
});

const hasMutool = (() => {
  try {
    execFileSync("mutool", ["-v"], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
})();

/** MuPDF's JavaScript API, saving incrementally: a real third-party writer of later revisions. */
const MUTOOL_SCRIPTS = {
  fill: `var doc = new PDFDocument(scriptArgs[0]);
var widgets = doc.loadPage(0).getWidgets();
for (var i = 0; i < widgets.length; i++)
  if (widgets[i].getFieldType() === "text") { widgets[i].setTextValue("99,999.00"); widgets[i].update(); }
doc.save(scriptArgs[1], "incremental");`,
  annotate: `var doc = new PDFDocument(scriptArgs[0]);
var a = doc.loadPage(0).createAnnotation("FreeText");
a.setRect([380, 400, 470, 414]);
a.setContents("9,999.00");
a.update();
doc.save(scriptArgs[1], "incremental");`,
  overlay: `var doc = new PDFDocument(scriptArgs[0]);
var page = doc.findPage(0);
var arr = doc.newArray();
var contents = page.get("Contents");
if (contents.isArray()) { for (var i = 0; i < contents.length; i++) arr.push(contents.get(i)); } else arr.push(contents);
arr.push(doc.addStream("q 1 1 1 rg 380 400 90 14 re f Q", {}));
page.put("Contents", arr);
doc.save(scriptArgs[1], "incremental");`,
};

describe.skipIf(!hasMutool)(
  `later revisions written by MuPDF (mutool run)${hasMutool ? "" : " (skipped: mutool is not installed; npm run test:setup installs mupdf-tools)"}`,
  () => {
    let dir: string;
    beforeAll(async () => {
      dir = await mkdtemp(path.join(os.tmpdir(), "docverify-mutool-"));
      for (const [name, js] of Object.entries(MUTOOL_SCRIPTS))
        await writeFile(path.join(dir, `${name}.js`), js);
    });
    afterAll(() => rm(dir, { recursive: true, force: true }));

    async function mutool(script: keyof typeof MUTOOL_SCRIPTS, input: Uint8Array): Promise<Uint8Array> {
      const src = path.join(dir, `in-${script}-${Math.random().toString(36).slice(2)}.pdf`);
      const out = `${src}.out.pdf`;
      await writeFile(src, input);
      execFileSync("mutool", ["run", path.join(dir, `${script}.js`), src, out], {
        stdio: "ignore",
        timeout: 60_000,
      });
      return new Uint8Array(await readFile(out));
    }

    it("form filling after a P=2 certification or an approval signature is permitted", async () => {
      for (const docMdp of [2, undefined] as const) {
        const signed = await signPdf(await makeFormPdf(5), docMdp ? { docMdp } : {});
        const r = await verdict(await mutool("fill", signed));
        expect(r.authoritative?.trust, r.summary).toBe("corroborated");
        expect(r.authoritative?.directive).toMatch(
          /form field "requested_amount" set to "99,999\.00" \(was "12,500\.00"\)/,
        );
      }
    });

    it("a FreeText annotation is permitted after P=3, not after P=2", async () => {
      const p3 = await verdict(await mutool("annotate", await signPdf(statement, { docMdp: 3 })));
      expect(p3.authoritative?.trust, p3.summary).toBe("corroborated");
      const p2 = await verdict(await mutool("annotate", await signPdf(statement, { docMdp: 2 })));
      expect(p2.authoritative?.trust).toBe("unattested");
      expect(p2.authoritative?.directive).toMatch(/a FreeText annotation added on page 1/);
    });

    it("drawing over the page is never permitted", async () => {
      const r = await verdict(await mutool("overlay", await signPdf(statement, { docMdp: 3 })));
      expect(r.authoritative?.trust).toBe("unattested");
      expect(r.authoritative?.directive).toMatch(/the drawing on page 1/);
    });
  },
);
