import type { RawPdf } from "../../document/pdf-raw/document.js";
import {
  get,
  isDict,
  isName,
  isRef,
  isString,
  nameOf,
  numberOf,
  type PdfDict,
  type PdfValue,
  textOf,
} from "../../document/pdf-raw/objects.js";
import { terminalFields } from "../../document/pdf-raw/revision-changes.js";

/**
 * The signatures a PDF carries: every signature field's value (AcroForm), plus any signature dictionary
 * in the bytes that no field points to. For each: its /ByteRange checked against the file, the CMS blob
 * from the gap the range leaves, the revision whose end the range covers, and its DocMDP level.
 */

export interface PdfSignature {
  field: string | null;
  objNum: number;
  /** "Sig" or "DocTimeStamp". */
  type: string;
  subFilter?: string;
  /** Signing time the signature dictionary claims (/M, a PDF date string). */
  claimedTime?: string;
  /** /Name in the signature dictionary. */
  name?: string;
  /** DocMDP permission level when this is a certification signature. */
  docMdp?: 1 | 2 | 3;
  /** FieldMDP: the form fields the signature locks against later changes. */
  fieldLock?: { action: "All" | "Include" | "Exclude"; fields: string[] };
  byteRange?: [number, number, number, number];
  /** Why the byte range is unusable, when it is. */
  rangeProblem?: string;
  /** The CMS blob (DER, zero padding included). */
  contents?: Uint8Array;
  /** The bytes the signature covers. */
  signed?: Uint8Array;
  /** Index of the revision whose end the signed range reaches (-1 when it ends elsewhere). */
  signedRevision: number;
  coversWholeFile: boolean;
}

function docMdpLevel(raw: RawPdf, sig: PdfDict): 1 | 2 | 3 | undefined {
  const refs = raw.resolve(get(sig, "Reference"));
  if (!Array.isArray(refs)) return undefined;
  for (const r of refs.slice(0, 16)) {
    const d = raw.dict(r);
    if (!d || !isName(get(d, "TransformMethod"), "DocMDP")) continue;
    const p = numberOf(get(raw.dict(get(d, "TransformParams")), "P")) ?? 2;
    return p <= 1 ? 1 : p >= 3 ? 3 : 2;
  }
  return undefined;
}

function fieldLock(raw: RawPdf, sig: PdfDict, field: PdfDict | undefined): PdfSignature["fieldLock"] {
  const refs = raw.resolve(get(sig, "Reference"));
  const params: PdfDict[] = [];
  if (Array.isArray(refs))
    for (const r of refs.slice(0, 16)) {
      const d = raw.dict(r);
      if (d && isName(get(d, "TransformMethod"), "FieldMDP")) {
        const tp = raw.dict(get(d, "TransformParams"));
        if (tp) params.push(tp);
      }
    }
  const lock = raw.dict(get(field, "Lock"));
  if (lock) params.push(lock);
  for (const tp of params) {
    const action = nameOf(get(tp, "Action"));
    if (action !== "All" && action !== "Include" && action !== "Exclude") continue;
    const list = raw.resolve(get(tp, "Fields"));
    const fields = Array.isArray(list)
      ? list.slice(0, 1000).flatMap((x) => textOf(raw.resolve(x)) ?? [])
      : [];
    return { action, fields };
  }
  return undefined;
}

function checkRange(
  raw: RawPdf,
  v: PdfValue | undefined,
): { range?: [number, number, number, number]; problem?: string } {
  const arr = raw.resolve(v);
  if (
    !Array.isArray(arr) ||
    arr.length !== 4 ||
    arr.some((x) => typeof x !== "number" || !Number.isSafeInteger(x) || x < 0)
  ) {
    return { problem: "its /ByteRange is not four non-negative whole numbers" };
  }
  const [a, b, c, d] = arr as [number, number, number, number];
  const size = raw.bytes.length;
  if (a !== 0) return { problem: `its /ByteRange starts at byte ${a}, not at the start of the file` };
  if (c < a + b) return { problem: "its /ByteRange's two parts overlap" };
  if (c + d > size)
    return { problem: `its /ByteRange reaches byte ${c + d}, past the end of the ${size}-byte file` };
  if (raw.bytes[b] !== 0x3c || raw.bytes[c - 1] !== 0x3e) {
    return { problem: "its /ByteRange does not leave out exactly the signature value" };
  }
  return { range: [a, b, c, d] };
}

function hexGap(raw: RawPdf, b: number, c: number): Uint8Array | undefined {
  const s = Buffer.from(raw.bytes.subarray(b + 1, c - 1))
    .toString("latin1")
    .replace(/\s+/g, "");
  if (!/^[0-9a-fA-F]*$/.test(s)) return undefined;
  return new Uint8Array(Buffer.from(s.length % 2 ? `${s}0` : s, "hex"));
}

export function findSignatures(raw: RawPdf): PdfSignature[] {
  const found = new Map<number, { dict: PdfDict; field: string | null; fieldDict?: PdfDict }>();
  for (const f of terminalFields(raw, raw.last)) {
    if (!f.isSignature) continue;
    const v = get(f.dict, "V");
    const d = raw.dict(v);
    if (d && isRef(v) && !found.has(v.num)) found.set(v.num, { dict: d, field: f.name, fieldDict: f.dict });
  }
  // Signature dictionaries no field points to (left over, or planted by hand).
  const b = Buffer.from(raw.bytes.buffer, raw.bytes.byteOffset, raw.bytes.length);
  let scanned = 0;
  for (
    let i = b.indexOf("/ByteRange", 0, "latin1");
    i !== -1 && scanned < 100;
    i = b.indexOf("/ByteRange", i + 10, "latin1")
  ) {
    scanned++;
    const window = b.subarray(Math.max(0, i - 200_000), i).toString("latin1");
    const headers = [...window.matchAll(/(?<![\d.])(\d{1,10})\s+(\d{1,5})\s+obj\b/g)];
    const last = headers.at(-1);
    if (!last) continue;
    const num = Number(last[1]);
    if (found.has(num)) continue;
    const obj = raw.objectAt(Math.max(0, i - 200_000) + (last.index ?? 0));
    if (obj && isDict(obj.value) && get(obj.value, "ByteRange") !== undefined)
      found.set(obj.num, { dict: obj.value, field: null });
  }

  const catalogPerms = raw.dict(get(raw.catalog(), "Perms"));
  const certifying = get(catalogPerms, "DocMDP");
  const out: PdfSignature[] = [];
  for (const [objNum, { dict, field, fieldDict }] of found) {
    const type = nameOf(get(dict, "Type")) ?? "Sig";
    const sig: PdfSignature = { field, objNum, type, signedRevision: -1, coversWholeFile: false };
    const sub = nameOf(get(dict, "SubFilter"));
    if (sub) sig.subFilter = sub;
    const m = textOf(raw.resolve(get(dict, "M")));
    if (m) sig.claimedTime = m;
    const name = textOf(raw.resolve(get(dict, "Name")));
    if (name) sig.name = name;
    const level = docMdpLevel(raw, dict) ?? (isRef(certifying) && certifying.num === objNum ? 2 : undefined);
    if (level) sig.docMdp = level;
    const lock = fieldLock(raw, dict, fieldDict);
    if (lock) sig.fieldLock = lock;
    const { range, problem } = checkRange(raw, get(dict, "ByteRange"));
    if (problem) sig.rangeProblem = problem;
    if (range) {
      const [a, len1, c, len2] = range;
      sig.byteRange = range;
      const contents = hexGap(raw, len1, c);
      const declared = get(dict, "Contents");
      if (!contents) sig.rangeProblem = "the gap its /ByteRange leaves is not a hexadecimal signature value";
      else if (isString(declared) && !Buffer.from(declared.bytes).equals(Buffer.from(contents)))
        sig.rangeProblem = "the gap its /ByteRange leaves is not its own /Contents value";
      else sig.contents = contents;
      sig.signed = new Uint8Array(
        Buffer.concat([raw.bytes.subarray(a, a + len1), raw.bytes.subarray(c, c + len2)]),
      );
      const end = c + len2;
      sig.coversWholeFile = end === raw.bytes.length;
      sig.signedRevision = raw.revisions.findIndex(
        (r) => Math.abs(r.end - end) <= 2 || (end <= r.end && end >= r.end - 2),
      );
    } else {
      const contents = get(dict, "Contents");
      if (isString(contents)) sig.contents = contents.bytes;
    }
    out.push(sig);
  }
  return out.sort(
    (x, y) =>
      (x.byteRange?.[3] ?? 0) + (x.byteRange?.[2] ?? 0) - ((y.byteRange?.[3] ?? 0) + (y.byteRange?.[2] ?? 0)),
  );
}
