import { rawPdfOf } from "./pdf-raw/cache.js";
import type { RawPdf } from "./pdf-raw/document.js";
import { DecodeError } from "./pdf-raw/filters.js";
import { get, isStream, textOf } from "./pdf-raw/objects.js";

/**
 * The XMP edit history (xmpMM:History, a sequence of stEvt resource events) and the raw XMP packet of a
 * PDF's catalog, read from the file's own bytes. Both the attribute form (`<rdf:li stEvt:action="saved"
 * .../>`) and the element form (`<stEvt:action>saved</stEvt:action>`) are read; prefixes are resolved
 * by namespace URI, whatever the writer called them.
 */

export interface HistoryEvent {
  action?: string;
  softwareAgent?: string;
  when?: string;
  changed?: string;
  instanceID?: string;
  parameters?: string;
}

const ST_EVT = "http://ns.adobe.com/xap/1.0/sType/ResourceEvent#";
const XMP_MM = "http://ns.adobe.com/xap/1.0/mm/";
const FIELDS = ["action", "softwareAgent", "when", "changed", "instanceID", "parameters"] as const;

const decodeXml = (s: string) =>
  s
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&quot;/g, '"')
    .replace(/&apos;/g, "'")
    .replace(/&#x([0-9a-fA-F]+);/g, (_m, h: string) => String.fromCodePoint(Number.parseInt(h, 16)))
    .replace(/&#(\d+);/g, (_m, d: string) => String.fromCodePoint(Number(d)))
    .replace(/&amp;/g, "&");

export function parseXmpHistory(xml: string): HistoryEvent[] {
  const prefixes = (uri: string) =>
    [...xml.matchAll(/xmlns:([\w.-]+)\s*=\s*(["'])(.*?)\2/g)]
      .filter((m) => m[3] === uri)
      .map((m) => m[1] as string);
  const evt = prefixes(ST_EVT);
  const mm = prefixes(XMP_MM);
  if (evt.length === 0 || mm.length === 0) return [];
  const out: HistoryEvent[] = [];
  for (const p of mm) {
    const re = new RegExp(`<${p}:History\\b[^>]*>([\\s\\S]*?)</${p}:History>`, "g");
    for (const h of xml.matchAll(re)) {
      const body = h[1] ?? "";
      for (const li of body.matchAll(/<rdf:li\b([^>]*?)(?:\/>|>([\s\S]*?)<\/rdf:li>)/g)) {
        const attrs = li[1] ?? "";
        const inner = li[2] ?? "";
        const e: HistoryEvent = {};
        for (const f of FIELDS) {
          for (const ep of evt) {
            const a = new RegExp(`${ep}:${f}\\s*=\\s*(["'])([\\s\\S]*?)\\1`).exec(attrs + inner);
            const el = new RegExp(`<${ep}:${f}>([\\s\\S]*?)</${ep}:${f}>`).exec(inner);
            const v = a?.[2] ?? el?.[1];
            if (v !== undefined && e[f] === undefined) e[f] = decodeXml(v).trim();
          }
        }
        if (Object.keys(e).length > 0) out.push(e);
        if (out.length >= 1000) return out;
      }
    }
  }
  return out;
}

/** The catalog's XMP packet as of a revision (decoded), or undefined. */
export function xmpText(raw: RawPdf, rev = raw.last): string | undefined {
  const s = raw.resolve(get(raw.catalog(rev), "Metadata"), rev);
  if (!isStream(s)) return undefined;
  try {
    const data = raw.decode(s);
    return Buffer.from(data.subarray(0, 4 * 1024 * 1024)).toString("utf8");
  } catch (err) {
    if (err instanceof DecodeError) return undefined;
    throw err;
  }
}

/** The Info dictionary's text entries as of a revision. */
export function infoStrings(raw: RawPdf, rev = raw.last): Record<string, string> {
  const d = raw.info(rev);
  const out: Record<string, string> = {};
  if (!d) return out;
  for (const [k, v] of d.map) {
    const t = textOf(raw.resolve(v, rev));
    if (t !== undefined) out[k] = t;
  }
  return out;
}

/** The XMP history of a PDF document (empty for images or when there is none). */
export function historyOf(doc: { bytes: Uint8Array; contentType: string }): HistoryEvent[] {
  if (doc.contentType !== "application/pdf") return [];
  const xml = xmpText(rawPdfOf(doc));
  return xml ? parseXmpHistory(xml) : [];
}
