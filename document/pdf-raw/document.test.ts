import { execFileSync } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import zlib from "node:zlib";
import { PDFDocument } from "pdf-lib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeDocument } from "../../fixtures/documents.js";
import { appendRevision, tamperRevision } from "../../fixtures/revisions.js";
import { pageTextRuns } from "./content-text.js";
import { openRawPdf } from "./document.js";
import { get, isStream, textOf } from "./objects.js";

const hasQpdf = (() => {
  try {
    execFileSync("qpdf", ["--version"], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
})();

let dir: string;
let base: Uint8Array;
beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "docverify-raw-"));
  base = await makeDocument({ seed: 5, docType: "bank_statement", region: "GB", pages: 2 });
});
afterAll(() => rm(dir, { recursive: true, force: true }));

const latin = (s: string) => new Uint8Array(Buffer.from(s, "latin1"));

/** Objects (number → offset) that qpdf's --show-xref lists as uncompressed. */
function qpdfOffsets(file: string): Map<number, number> {
  const out = new Map<number, number>();
  const text = execFileSync("qpdf", ["--show-xref", file], { encoding: "utf8" });
  for (const m of text.matchAll(/^(\d+)\/0: uncompressed; offset = (\d+)/gm))
    out.set(Number(m[1]), Number(m[2]));
  return out;
}

describe("openRawPdf on well-formed files", () => {
  it("reads a classic xref table: one revision, its pages and text", () => {
    const raw = openRawPdf(base);
    expect(raw.revisions).toHaveLength(1);
    expect(raw.problems).toEqual([]);
    expect(raw.linearized).toBe(false);
    const pages = raw.pages();
    expect(pages).toHaveLength(2);
    const text = pageTextRuns(raw, pages[0]!, 0).map((r) => r.text);
    expect(text).toContain("Account Statement");
  });

  it.skipIf(!hasQpdf)("finds every object where qpdf finds it (oracle)", async () => {
    const file = path.join(dir, "classic.pdf");
    await writeFile(file, base);
    const raw = openRawPdf(base);
    const ours = new Map(
      [...raw.revisions[0]!.entries].flatMap(([n, e]) => (e.type === "offset" ? [[n, e.offset]] : [])),
    );
    expect(ours).toEqual(qpdfOffsets(file));
  });

  it("reads xref streams and object streams (pdf-lib's default save)", async () => {
    const doc = await PDFDocument.load(base, { updateMetadata: false });
    const bytes = await doc.save({ useObjectStreams: true });
    const raw = openRawPdf(bytes);
    expect(raw.revisions).toHaveLength(1);
    expect(raw.revisions[0]!.sections[0]!.kind).toBe("stream");
    expect([...raw.revisions[0]!.entries.values()].some((e) => e.type === "compressed")).toBe(true);
    expect(raw.pages()).toHaveLength(2);
    expect(textOf(get(raw.info(), "Producer"))).toBeTruthy();
  });

  it.skipIf(!hasQpdf)(
    "treats a linearized file's first-page section as part of the original save",
    async () => {
      const src = path.join(dir, "lin-src.pdf");
      await writeFile(src, base);
      for (const extra of [[], ["--object-streams=generate"]]) {
        const out = path.join(dir, `lin${extra.length}.pdf`);
        execFileSync("qpdf", ["--linearize", ...extra, src, out]);
        const bytes = new Uint8Array(await readFile(out));
        const raw = openRawPdf(bytes);
        expect(raw.linearized).toBe(true);
        expect(raw.revisions).toHaveLength(1);
        expect(raw.revisions[0]!.linearized).toBe(true);
        expect(raw.pages()).toHaveLength(2);
        // An update on top of it is a real second revision.
        const updated = openRawPdf((await tamperRevision(bytes, "metadata_only")).bytes);
        expect(updated.revisions).toHaveLength(2);
      }
    },
  );

  it("keeps each revision's view of an object (the old value stays readable)", async () => {
    const t = await tamperRevision(base, "metadata_only");
    const raw = openRawPdf(t.bytes);
    expect(raw.revisions).toHaveLength(2);
    expect(raw.problems).toEqual([]);
    const before = textOf(get(raw.info(0), "Producer"));
    const after = textOf(get(raw.info(1), "Producer"));
    expect(after).toBe("Adobe Acrobat Pro 24.1");
    expect(before).not.toBe(after);
  });

  it("reads an update written as an xref stream on top of a classic table", async () => {
    const t = await tamperRevision(base, "amount_edit", { xref: "stream" });
    const raw = openRawPdf(t.bytes);
    expect(raw.revisions.map((r) => r.sections.map((s) => s.kind))).toEqual([["table"], ["stream"]]);
    expect(raw.problems).toEqual([]);
    const texts = (rev: number) => pageTextRuns(raw, raw.pages(rev)[0]!, rev).map((r) => r.text);
    expect(texts(0)).toContain(t.before);
    expect(texts(1)).toContain(t.after);
    expect(texts(1)).not.toContain(t.before);
  });

  it("reads a hybrid file: a table whose trailer points to an xref stream (/XRefStm)", () => {
    const raw0 = openRawPdf(base);
    const prev = raw0.revisions[0]!.startxref!;
    const root = get(raw0.trailer(), "Root") as { num: number; gen: number };
    const parts: string[] = [];
    let pos = base.length;
    const push = (s: string) => {
      parts.push(s);
      pos += Buffer.byteLength(s, "latin1");
    };
    const objAt = pos;
    push("90 0 obj\n(hidden from classic readers)\nendobj\n");
    const stmAt = pos;
    const row = Buffer.alloc(7);
    row.writeUInt8(1, 0);
    row.writeUInt32BE(objAt, 1);
    push(
      `91 0 obj\n<< /Type /XRef /Size 92 /W [1 4 2] /Index [90 1] /Length 7 >>\nstream\n${row.toString("latin1")}\nendstream\nendobj\n`,
    );
    const tableAt = pos;
    push(
      `xref\n0 1\n0000000000 65535 f \ntrailer\n<< /Size 92 /Root ${root.num} ${root.gen} R /Prev ${prev} /XRefStm ${stmAt} >>\nstartxref\n${tableAt}\n%%EOF\n`,
    );
    const bytes = new Uint8Array(Buffer.concat([Buffer.from(base), Buffer.from(parts.join(""), "latin1")]));
    const raw = openRawPdf(bytes);
    expect(raw.revisions).toHaveLength(2);
    expect(raw.revisions[1]!.sections.map((s) => s.kind).sort()).toEqual(["stream", "table"]);
    expect(textOf(raw.object(90))).toBe("hidden from classic readers");
    expect(raw.object(90, 0)).toBeUndefined();
  });
});

describe("openRawPdf on broken and hostile files (bounded, never throws)", () => {
  const withTail = (tail: string) =>
    new Uint8Array(Buffer.concat([Buffer.from(base), Buffer.from(tail, "latin1")]));

  it("detects a /Prev chain that loops", () => {
    const raw0 = openRawPdf(base);
    const root = get(raw0.trailer(), "Root") as { num: number };
    const at = base.length;
    const tail = `xref\n0 1\n0000000000 65535 f \ntrailer\n<< /Size 9 /Root ${root.num} 0 R /Prev ${at} >>\nstartxref\n${at}\n%%EOF\n`;
    const raw = openRawPdf(withTail(tail));
    expect(raw.problems.map((p) => p.code)).toContain("xref_cycle");
    expect(raw.pages()).toHaveLength(2);
  });

  it("survives xref offsets past the end of the file and rebuilds the revision by scanning", () => {
    const tail = "5 0 obj\n<< /Type /Page >>\nendobj\nstartxref\n999999999\n%%EOF\n";
    const raw = openRawPdf(withTail(tail));
    expect(raw.revisions).toHaveLength(2);
    expect(raw.revisions[1]!.reconstructed).toBe(true);
    expect(raw.problems.some((p) => p.code === "xref_broken" && /999999999/.test(p.message))).toBe(true);
  });

  it("does not allocate by a huge /Size or subsection count", () => {
    const at = base.length;
    const tail = `xref\n0 999999999\n0000000000 65535 f \ntrailer\n<< /Size 999999999999 /Prev ${openRawPdf(base).revisions[0]!.startxref} >>\nstartxref\n${at}\n%%EOF\n`;
    const raw = openRawPdf(withTail(tail));
    expect(raw.revisions.length).toBeGreaterThanOrEqual(1);
    expect(raw.problems.some((p) => /claims 999999999 entries|cut short/.test(p.message))).toBe(true);
    const stm = latin(
      `%PDF-1.7\n1 0 obj\n<< /Type /XRef /Size 4000000000 /W [1 4 2] /Index [0 4000000000] /Length 0 >>\nstream\n\nendstream\nendobj\nstartxref\n9\n%%EOF\n`,
    );
    expect(() => openRawPdf(stm)).not.toThrow();
  });

  it("rejects deep nesting without exhausting the stack", () => {
    const deep = `%PDF-1.7\n1 0 obj\n${"[".repeat(100_000)}${"]".repeat(100_000)}\nendobj\nxref\n0 2\n0000000000 65535 f \n0000000009 00000 n \ntrailer\n<< /Size 2 /Root 1 0 R >>\nstartxref\n${9 + 14 + 200_000 + 8}\n%%EOF\n`;
    const raw = openRawPdf(latin(deep));
    expect(raw.object(1)).toBeUndefined();
    expect(raw.pages()).toEqual([]);
  });

  it("walks a page tree whose kids point back at themselves once", () => {
    const pdf = `%PDF-1.7\n1 0 obj\n<< /Type /Catalog /Pages 2 0 R >>\nendobj\n2 0 obj\n<< /Type /Pages /Kids [2 0 R 2 0 R 2 0 R 3 0 R] /Count 1000000000 >>\nendobj\n3 0 obj\n<< /Type /Page /Parent 2 0 R /Contents 4 0 R >>\nendobj\n4 0 obj\n<< /Length 4 0 R >>\nstream\nBT ET\nendstream\nendobj\ntrailer\n<< /Root 1 0 R >>\nstartxref\n0\n%%EOF\n`;
    const raw = openRawPdf(latin(pdf));
    expect(raw.pages()).toHaveLength(1);
    expect(raw.contents(raw.pages()[0]!)).toHaveLength(1);
  });

  it("stops a decompression bomb at the stream limit", () => {
    const bomb = zlib.deflateSync(Buffer.alloc(64 * 1024 * 1024));
    const pdf = Buffer.concat([
      Buffer.from(`%PDF-1.7\n1 0 obj\n<< /Filter /FlateDecode /Length ${bomb.length} >>\nstream\n`, "latin1"),
      bomb,
      Buffer.from("\nendstream\nendobj\ntrailer\n<< /Root 1 0 R >>\nstartxref\n0\n%%EOF\n", "latin1"),
    ]);
    const raw = openRawPdf(new Uint8Array(pdf), {
      maxSections: 10,
      maxEntries: 1000,
      maxStreamBytes: 1024 * 1024,
      maxDecodedBytes: 4 * 1024 * 1024,
      maxPages: 10,
    });
    const s = raw.object(1);
    expect(isStream(s)).toBe(true);
    expect(() => raw.decode(s as never)).toThrow(/expands beyond/);
  });

  it("reports PDF objects hidden after the final %%EOF", () => {
    const raw = openRawPdf(withTail("\n7 0 obj\n(the real amount)\nendobj\n"));
    expect(raw.problems.map((p) => p.code)).toContain("hidden_data_after_eof");
  });

  it("reports an update whose /Prev skips the revision before it", async () => {
    const one = (await tamperRevision(base, "metadata_only")).bytes;
    const two = await appendRevision(one, () => undefined);
    // Point revision 3's /Prev at revision 1 instead of revision 2.
    const text = Buffer.from(two).toString("latin1");
    const firstXref = openRawPdf(base).revisions[0]!.startxref!;
    const secondXref = openRawPdf(one).revisions[1]!.startxref!;
    const idx = text.lastIndexOf(`/Prev ${secondXref}`);
    expect(idx).toBeGreaterThan(0);
    const patched =
      text.slice(0, idx) +
      `/Prev ${String(firstXref).padStart(String(secondXref).length, "0")}` +
      text.slice(idx + `/Prev ${secondXref}`.length);
    const raw = openRawPdf(latin(patched));
    expect(
      raw.problems.some((p) => p.code === "prev_mismatch" && /instead of revision 2/.test(p.message)),
    ).toBe(true);
  });

  it("handles a truncated file and plain garbage", async () => {
    const cut = openRawPdf(base.slice(0, Math.floor(base.length * 0.6)));
    expect(cut.revisions.length).toBe(1);
    expect(cut.revisions[0]!.reconstructed).toBe(true);
    expect(() => cut.pages()).not.toThrow();
    const garbage = openRawPdf(latin(`%PDF-1.4\n${"\u0000\u00ff(<<[".repeat(5000)}`));
    expect(garbage.catalog()).toBeUndefined();
  });
});
