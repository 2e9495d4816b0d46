import type { MemoryEntry } from "../../core/tenant-memory.js";
import type { DocumentModel } from "../../document/model.js";
import type { Box } from "../../document/page-layout.js";
import { documentLines, type Line } from "../../document/text-lines.js";
import { findIbans } from "../../document/values/bank-identifiers.js";
import type { TenantKeys } from "./keys.js";

/**
 * What the tenant memory keeps of one document, computed once in the check step from the document model:
 * keyed hashes and MinHash signatures (core/tenant-memory.ts says what and why), and beside them, for this
 * document only, the plain values with their places on the page (the findings point at them; they are never
 * stored in clear).
 */

/** Signature length and LSH banding: 16 bands of 4 rows (Jaccard 0.7 → candidate 99 %, 0.3 → 12 %). */
export const SIGNATURE = 64;
export const BANDS = 16;
const ROWS = SIGNATURE / BANDS;
/** At most this many cells are remembered per document (the first ones in reading order). */
export const MAX_CELLS = 600;

export interface PlacedValue {
  text: string;
  page: number;
  bbox?: Box;
}

export interface FingerprintCell extends PlacedValue {
  x: number;
  y: number;
  hash: string;
}

export interface Fingerprint {
  entry: MemoryEntry;
  cells: FingerprintCell[];
  holder?: PlacedValue;
  issuer?: string;
  identifiers: (PlacedValue & { kind: string; hash: string })[];
  template: TemplateDescription;
}

export interface TemplateDescription {
  producer: string;
  page: string;
  fonts: string[];
  /** The first page's logo as a difference hash (logo.ts); absent when the page draws no picture. */
  logo?: string;
}

export interface FingerprintInput {
  detection: string;
  sha256: string;
  docType: string;
  at: string;
}

const norm = (s: string) => s.normalize("NFKC").replace(/\s+/g, " ").trim().toLowerCase();
/** The fixed wording of a text: every digit masked, so amounts, dates and numbers read alike. */
export const masked = (s: string) => norm(s).replace(/\d/g, "#");
const fontName = (f: string) => f.replace(/^[A-Z]{6}\+/, "");

export function fingerprint(
  doc: DocumentModel,
  input: FingerprintInput,
  k: TenantKeys,
  gathered: { logo?: string } = {},
): Fingerprint {
  const lines = documentLines(doc);
  // One keyed digest per distinct token: the cells' hashes and both signatures are made from them.
  const digests = new Map<string, Buffer>();
  const digest = (t: string) => {
    let d = digests.get(t);
    if (!d) {
      d = k.token(t);
      digests.set(t, d);
    }
    return d;
  };
  const cells = placedCells(lines, (text) => digest(norm(text)).toString("base64url").slice(0, 11));
  const template = templateOf(doc, gathered.logo);
  const templateKey = k.hash("template", JSON.stringify(template));
  const issuer = issuerOf(lines);
  const holder = holderOf(lines, issuer);
  const identifiers = identifiersOf(doc, lines).map((i) => ({
    ...i,
    hash: k.hash(`id:${i.kind}`, i.value),
    text: i.value,
  }));
  const content = minhash(cells.map((c) => digest(norm(c.text))));
  const wording = minhash(
    cells.map((c) => digest(`${c.page}|${Math.round(c.x / 12)}|${Math.round(c.y / 12)}|${masked(c.text)}`)),
  );
  const file = k.hash("file", input.sha256);
  const issuerHash = issuer ? k.hash("issuer", norm(issuer)) : undefined;
  const holderHash = holder ? k.hash("holder", norm(holder.text)) : undefined;
  const keys = [
    `f.${file}`,
    ...(cells.length >= 4 ? bandKeys(content, k) : []),
    ...identifiers.map((i) => `i.${i.hash}`),
    `t.${templateKey}/${issuerHash ?? "-"}`,
    ...(issuerHash ? [`it.${issuerHash}/${templateKey}`] : []),
  ];
  const entry: MemoryEntry = {
    v: 1,
    detection: input.detection,
    at: input.at,
    docType: input.docType,
    file,
    ...(issuerHash ? { issuer: issuerHash, issuerSealed: k.seal(issuer as string) } : {}),
    ...(holderHash ? { holder: holderHash } : {}),
    identifiers: identifiers.map((i) => ({ kind: i.kind, hash: i.hash, sealed: k.seal(i.value) })),
    template: templateKey,
    templateSealed: k.seal(JSON.stringify(template)),
    content: encodeSignature(content),
    wording: encodeSignature(wording),
    cells: cells.map((c) => `${c.page}:${c.x}:${c.y}:${c.hash}`).join(" "),
    cellsSealed: k.seal(JSON.stringify(cells.map((c) => c.text))),
    keys: [...new Set(keys)],
  };
  return {
    entry,
    cells,
    ...(holder ? { holder } : {}),
    ...(issuer ? { issuer } : {}),
    identifiers,
    template,
  };
}

function placedCells(lines: readonly Line[], hashOf: (text: string) => string): FingerprintCell[] {
  const out: FingerprintCell[] = [];
  for (const line of lines) {
    line.cells.forEach((cell, i) => {
      const text = cell.text.replace(/\s+/g, " ").trim();
      if (!text || out.length >= MAX_CELLS) return;
      // Without a layout (OCR'd plain text) the line and cell numbers stand for the place.
      const x = cell.bbox ? Math.round(cell.bbox[0]) : i;
      const y = cell.bbox ? Math.round(line.y ?? cell.bbox[1]) : line.index;
      out.push({
        text,
        page: line.page,
        x,
        y,
        hash: hashOf(text),
        ...(cell.bbox ? { bbox: cell.bbox } : {}),
      });
    });
  }
  return out;
}

/**
 * The template: the producer and its version, the first page's size, the fonts (subset prefixes dropped),
 * and the first page's logo when it has one (`logoHash`, gathered before: it decodes pixels).
 */
export function templateOf(doc: DocumentModel, logo?: string): TemplateDescription {
  const pdf = doc.pdf;
  const producer = [pdf?.info.Producer ?? pdf?.xmp?.["pdf:Producer"], pdf?.info.Creator]
    .filter(Boolean)
    .join(" / ");
  const first = pdf?.pages[0] ?? doc.imagePages?.[0];
  const page = first ? `${Math.round(first.width)}x${Math.round(first.height)}` : "";
  const fonts = new Set<string>();
  for (const p of pdf?.pages ?? [])
    for (const r of p.layout?.runs ?? []) if (r.font) fonts.add(fontName(r.font));
  return { producer: producer || doc.contentType, page, fonts: [...fonts].sort(), ...(logo ? { logo } : {}) };
}

/** The claimed issuer: the first cell of the first page with a word of letters and no digits. */
function issuerOf(lines: readonly Line[]): string | undefined {
  for (const line of lines.slice(0, 8)) {
    if (line.page !== 1) break;
    for (const c of line.cells) {
      const t = c.text.trim();
      if (/\d/.test(t) || t.length > 60) continue;
      if ((t.match(/\p{L}/gu) ?? []).length >= 4) return t;
    }
  }
  return undefined;
}

const HOLDER_LABEL =
  /^(account holder|account name|name|employee|employee name|customer|customer name|bill to|billed to|invoice to|kontoinhaber|inhaber|name des mitarbeiters|mitarbeiter|arbeitnehmer|kunde|titulaire|titulaire du compte|salarié|nom|client)\s*:?$/i;
const NAME_LIKE = /^(?:\p{Lu}[\p{L}'’.-]*)(?:\s+(?:\p{Lu}[\p{L}'’.-]*|de|van|von|der|la|le|du)){1,4}$/u;

/**
 * The holder's name: the value after a holder label ("Account holder", "Employee", "Titulaire" …), or the
 * first name-like line of the first page whose next line holds a digit (the first line of an address block).
 */
function holderOf(lines: readonly Line[], issuer: string | undefined): PlacedValue | undefined {
  for (const line of lines) {
    const [label, value] = line.cells;
    if (label && value && HOLDER_LABEL.test(label.text.trim()) && !/\d/.test(value.text))
      return placed(value.text, line.page, value.bbox);
  }
  for (let i = 0; i + 1 < lines.length; i++) {
    const line = lines[i] as Line;
    if (line.page !== 1) break;
    const cell = line.cells[0];
    const t = cell?.text.trim() ?? "";
    if (!cell || t === issuer || t.length > 40 || !NAME_LIKE.test(t)) continue;
    const next = (lines[i + 1] as Line).cells[0];
    const aligned = !cell.bbox || !next?.bbox || Math.abs(cell.bbox[0] - next.bbox[0]) < 3;
    if (next && aligned && /\d/.test(next.text)) return placed(t, line.page, cell.bbox);
  }
  return undefined;
}

const IDENTIFIER_LABELS: [string, RegExp][] = [
  [
    "account",
    /^(account( number| no\.?)?|acct\.? no\.?|kontonummer|konto(-?nr\.?)?|n° de compte|numéro de compte|compte)\s*:?$/i,
  ],
  [
    "invoice",
    /^(invoice( number| no\.?| #)?|rechnungs(nummer|-?nr\.?)|n° de facture|numéro de facture|facture n°)\s*:?$/i,
  ],
  [
    "customer",
    /^(customer( number| no\.?| id)|kundennummer|kunden-?nr\.?|n° client|numéro client|référence client)\s*:?$/i,
  ],
  ["employee", /^(employee (number|no\.?|id)|personalnummer|personal-?nr\.?|matricule)\s*:?$/i],
];

/** Identifiers a fraudster reuses: IBANs anywhere, and account, invoice, customer and employee numbers by label. */
function identifiersOf(
  doc: DocumentModel,
  lines: readonly Line[],
): (PlacedValue & { kind: string; value: string })[] {
  const out: (PlacedValue & { kind: string; value: string })[] = [];
  const seen = new Set<string>();
  const add = (kind: string, raw: string, page: number, bbox?: Box) => {
    const value = raw.replace(/[\s−–-]/g, "").toUpperCase();
    if (value.length < 5 || !/\d/.test(value) || seen.has(`${kind}:${value}`)) return;
    seen.add(`${kind}:${value}`);
    out.push({ kind, value, ...placed(raw.trim(), page, bbox) });
  };
  for (const line of lines) {
    for (let i = 0; i + 1 < line.cells.length; i++) {
      const label = (line.cells[i]?.text ?? "").trim();
      const value = line.cells[i + 1];
      const kind = IDENTIFIER_LABELS.find(([, re]) => re.test(label))?.[0];
      if (kind && value) add(kind, value.text, line.page, value.bbox);
    }
    for (const cell of line.cells)
      for (const iban of findIbans(cell.text)) add("iban", iban, line.page, cell.bbox);
  }
  if (out.every((i) => i.kind !== "iban"))
    for (const iban of findIbans(doc.pdf?.pages.map((p) => p.text).join("\n") ?? "")) add("iban", iban, 1);
  return out.slice(0, 12);
}

function placed(text: string, page: number, bbox?: Box): PlacedValue {
  return { text: text.trim(), page, ...(bbox ? { bbox } : {}) };
}

// ---------------------------------------------------------------------------------------------
// MinHash and LSH
// ---------------------------------------------------------------------------------------------

/** MinHash of a set of tokens given as keyed digests: two 32-bit words each, mixed into SIGNATURE values. */
export function minhash(tokens: readonly Buffer[]): Uint32Array {
  const sig = new Uint32Array(SIGNATURE).fill(0xffffffff);
  for (const d of new Set(tokens)) {
    const h1 = d.readUInt32LE(0);
    const h2 = d.readUInt32LE(4) | 1;
    for (let i = 0; i < SIGNATURE; i++) {
      const v = fmix32((h1 + Math.imul(i, h2)) >>> 0);
      if (v < (sig[i] as number)) sig[i] = v;
    }
  }
  return sig;
}

function fmix32(h: number): number {
  let x = h;
  x ^= x >>> 16;
  x = Math.imul(x, 0x85ebca6b);
  x ^= x >>> 13;
  x = Math.imul(x, 0xc2b2ae35);
  x ^= x >>> 16;
  return x >>> 0;
}

export const encodeSignature = (sig: Uint32Array) =>
  Buffer.from(sig.buffer, sig.byteOffset, sig.byteLength).toString("base64");

export function decodeSignature(s: string): Uint32Array | undefined {
  const b = Buffer.from(s, "base64");
  if (b.length !== SIGNATURE * 4) return undefined;
  const out = new Uint32Array(SIGNATURE);
  for (let i = 0; i < SIGNATURE; i++) out[i] = b.readUInt32LE(i * 4);
  return out;
}

/** Estimated Jaccard similarity of two signatures: the share of equal minimums. */
export function similarity(a: Uint32Array, b: Uint32Array): number {
  let same = 0;
  for (let i = 0; i < SIGNATURE; i++) if (a[i] === b[i]) same++;
  return same / SIGNATURE;
}

/** The LSH index keys of a content signature: one keyed hash per band. */
function bandKeys(sig: Uint32Array, k: TenantKeys): string[] {
  const out: string[] = [];
  for (let b = 0; b < BANDS; b++) {
    const rows = Array.from(sig.subarray(b * ROWS, (b + 1) * ROWS)).join(",");
    out.push(`c${b}.${k.hash("band", `${b}:${rows}`)}`);
  }
  return out;
}
