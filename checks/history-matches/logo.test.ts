import { createHash } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { PDFDocument, StandardFonts } from "pdf-lib";
import sharp from "sharp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildDocumentModel } from "../../document/pdf-model.js";
import { createLocalObjectStore } from "../../platform/local/object-store.js";
import { createObjectStoreMemory } from "../../platform/memory/object-store-memory.js";
import { fingerprint } from "./fingerprint.js";
import { gatherHistory } from "./gather.js";
import { tenantKeys } from "./keys.js";
import { differenceHash, logoHash } from "./logo.js";

/**
 * The logo in the template key (issue 23, scope 1): statements of one issuer embedding one logo share the
 * template whatever their holder; the same layout with another logo is another template; a re-encoded,
 * rescaled copy of a logo keeps its difference hash (almost) whole.
 */
const KEY = new TextEncoder().encode("memory-key-of-the-logo-test-0123456789ab");
const BADGE = `<svg xmlns="http://www.w3.org/2000/svg" width="200" height="200" viewBox="0 0 100 100">
  <rect x="8" y="8" width="84" height="84" rx="14" fill="#0b4f8a"/><circle cx="50" cy="42" r="20" fill="#f2b705"/>
  <rect x="20" y="70" width="60" height="10" fill="#ffffff"/></svg>`;
const BARS = `<svg xmlns="http://www.w3.org/2000/svg" width="200" height="200" viewBox="0 0 100 100">
  <rect width="100" height="100" fill="#ffffff"/><rect x="10" y="10" width="14" height="80" fill="#b0122c"/>
  <rect x="34" y="30" width="14" height="60" fill="#b0122c"/><rect x="58" y="50" width="14" height="40" fill="#b0122c"/>
  <rect x="82" y="20" width="8" height="70" fill="#333333"/></svg>`;

const png = (svg: string, px: number) => sharp(Buffer.from(svg)).resize(px, px).png().toBuffer();
const jpeg = (svg: string, px: number) =>
  sharp(Buffer.from(svg)).resize(px, px).flatten({ background: "#ffffff" }).jpeg({ quality: 70 }).toBuffer();
const raw = async (image: Buffer) => {
  const { data, info } = await sharp(image).ensureAlpha().raw().toBuffer({ resolveWithObject: true });
  return { width: info.width, height: info.height, data: new Uint8ClampedArray(data) };
};
const bitsApart = (a: string, b: string) => {
  let n = 0;
  for (let i = 0; i < a.length; i++) {
    let x = Number.parseInt(a[i] as string, 16) ^ Number.parseInt(b[i] as string, 16);
    for (; x; x >>= 1) n += x & 1;
  }
  return n;
};

/** A one-page statement of "Northway Bank" for `holder`, with `logo` (PNG or JPEG bytes) top left. */
async function statement(holder: string, logo?: { bytes: Buffer; kind: "png" | "jpg" }): Promise<Uint8Array> {
  const pdf = await PDFDocument.create();
  pdf.setProducer("Statement Printer 4.2");
  pdf.setCreator("Northway core banking");
  const page = pdf.addPage([595, 842]);
  const font = await pdf.embedFont(StandardFonts.Helvetica);
  if (logo) {
    const img = logo.kind === "png" ? await pdf.embedPng(logo.bytes) : await pdf.embedJpg(logo.bytes);
    page.drawImage(img, { x: 40, y: 752, width: 60, height: 60 });
  }
  const lines = [
    "Northway Bank",
    "Account statement",
    `Account holder ${holder}`,
    "Opening balance 1,204.10",
    "Closing balance 1,530.55",
  ];
  for (const [i, t] of lines.entries()) page.drawText(t, { x: 120, y: 790 - i * 18, size: 11, font });
  return pdf.save({ useObjectStreams: false });
}

const model = (bytes: Uint8Array) =>
  buildDocumentModel({
    bytes,
    contentType: "application/pdf",
    filename: "s.pdf",
    declaredContentType: null,
    declaredDocType: "bank_statement",
    region: "GB",
  });
const input = (bytes: Uint8Array, id: string) => ({
  detection: id,
  sha256: createHash("sha256").update(bytes).digest("hex"),
  docType: "bank_statement",
  at: "t",
});

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "docverify-logo-"));
});
afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe("the logo in the template", () => {
  it("a rescaled JPEG copy of a logo keeps its difference hash; another logo does not", async () => {
    const badge = differenceHash(await raw(await png(BADGE, 200)));
    const badgeCopy = differenceHash(await raw(await jpeg(BADGE, 90)));
    const bars = differenceHash(await raw(await png(BARS, 200)));
    expect(badge).toMatch(/^[0-9a-f]{16}$/);
    expect(bitsApart(badge, badgeCopy)).toBeLessThanOrEqual(4);
    expect(bitsApart(badge, bars)).toBeGreaterThanOrEqual(16);
  });

  it("reads the first page's logo from the PDF; a page without a picture has none", async () => {
    const logo = { bytes: await png(BADGE, 200), kind: "png" as const };
    const a = await logoHash(await model(await statement("Ann Example", logo)));
    const b = await logoHash(await model(await statement("Bo Other", logo)));
    expect(a).toMatch(/^[0-9a-f]{16}$/);
    expect(b).toBe(a);
    // The PDF's image is decoded as a 64-pixel thumbnail: the same picture, a bit at most apart.
    expect(bitsApart(a as string, differenceHash(await raw(logo.bytes)))).toBeLessThanOrEqual(2);
    expect(await logoHash(await model(await statement("Ann Example")))).toBeUndefined();
  });

  it("one layout, two holders: one template; the same layout with another logo: another template", async () => {
    const keys = tenantKeys(KEY, "acme");
    const badge = { bytes: await png(BADGE, 200), kind: "png" as const };
    const bars = { bytes: await png(BARS, 200), kind: "png" as const };
    const memory = createObjectStoreMemory(createLocalObjectStore(dir), "memory-test");
    const gathered = async (bytes: Uint8Array, id: string) =>
      (await gatherHistory(await model(bytes), input(bytes, id), keys, memory)).fingerprint;
    const ann = await gathered(await statement("Ann Example", badge), "det-1");
    const bo = await gathered(await statement("Bo Other", badge), "det-2");
    const farm = await gathered(await statement("Ann Example", bars), "det-3");
    expect(ann.template.logo).toMatch(/^[0-9a-f]{16}$/);
    expect(bo.entry.template).toBe(ann.entry.template);
    expect(farm.entry.template).not.toBe(ann.entry.template);
    expect({ ...farm.template, logo: undefined }).toEqual({ ...ann.template, logo: undefined });
    // Without a logo the template is what it was before logos were part of it (earlier entries still match).
    const plainBytes = await statement("Ann Example");
    const plain = await gathered(plainBytes, "det-4");
    const old = fingerprint(await model(plainBytes), input(plainBytes, "det-4"), keys);
    expect(plain.template.logo).toBeUndefined();
    expect(plain.entry.template).toBe(old.entry.template);
  });
});
