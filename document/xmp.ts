import { rawPdfOf } from "./pdf-raw/cache.js";
import type { RawPdf } from "./pdf-raw/document.js";
import { DecodeError } from "./pdf-raw/filters.js";
import { get, isStream } from "./pdf-raw/objects.js";

/**
 * The one XMP reader: a PDF catalog's XMP packet from the file's own bytes (xmpText), its simple
 * properties as a flat map keyed by canonical prefix (parseXmp: `xmp:CreateDate`, `pdf:Producer`,
 * `dc:title`, ...) and its edit history (parseXmpHistory: the xmpMM:History sequence of stEvt resource
 * events). Prefixes are resolved by namespace URI, whatever the writer called them (old Acrobat wrote
 * `xap:` for the xmp namespace); both element form (`<xmp:CreateDate>...</xmp:CreateDate>`) and attribute
 * form (`<rdf:Description xmp:CreateDate="..."/>`, `<rdf:li stEvt:action="saved" .../>`) are read.
 */

const CANONICAL_PREFIX: Record<string, string> = {
  "http://ns.adobe.com/xap/1.0/": "xmp",
  "http://ns.adobe.com/pdf/1.3/": "pdf",
  "http://purl.org/dc/elements/1.1/": "dc",
  "http://ns.adobe.com/xap/1.0/mm/": "xmpMM",
  "http://ns.adobe.com/xap/1.0/rights/": "xmpRights",
  "http://ns.adobe.com/photoshop/1.0/": "photoshop",
  "http://ns.adobe.com/pdfx/1.3/": "pdfx",
  "http://www.aiim.org/pdfa/ns/id/": "pdfaid",
  "http://ns.adobe.com/tiff/1.0/": "tiff",
  "http://ns.adobe.com/exif/1.0/": "exif",
};
const ST_EVT = "http://ns.adobe.com/xap/1.0/sType/ResourceEvent#";
const XMP_MM = "http://ns.adobe.com/xap/1.0/mm/";

const ENTITIES: Record<string, string> = { amp: "&", lt: "<", gt: ">", quot: '"', apos: "'" };

function decodeXml(s: string): string {
  return s.replace(/&(#x[0-9a-fA-F]+|#\d+|amp|lt|gt|quot|apos);/g, (_m, e: string) => {
    if (e.startsWith("#x")) return String.fromCodePoint(Number.parseInt(e.slice(2), 16));
    if (e.startsWith("#")) return String.fromCodePoint(Number(e.slice(1)));
    return ENTITIES[e] ?? "";
  });
}

/** The namespace declarations of a packet, in order: [prefix, uri]. */
function declarations(xml: string): [string, string][] {
  return [...xml.matchAll(/xmlns:([\w.-]+)\s*=\s*(["'])(.*?)\2/g)].map((m) => [
    m[1] as string,
    m[3] as string,
  ]);
}

// ---------------------------------------------------------------------------------------------
// Simple properties
// ---------------------------------------------------------------------------------------------

/**
 * The simple properties of an XMP packet; rdf:Alt/Seq/Bag values are the list items joined with "; ".
 * Structured values (e.g. xmpMM:History, see parseXmpHistory) are left out.
 */
export function parseXmp(xml: string): Record<string, string> {
  const out: Record<string, string> = {};
  const cleaned = xml.replace(/<!--[\s\S]*?-->/g, "").replace(/<\?[\s\S]*?\?>/g, "");
  const prefixes = new Map<string, string>();
  for (const [prefix, uri] of declarations(cleaned)) prefixes.set(prefix, CANONICAL_PREFIX[uri] ?? prefix);
  const key = (prefix: string, local: string) => `${prefixes.get(prefix) ?? prefix}:${local}`;
  const put = (k: string, v: string) => {
    if (!(k in out)) out[k] = v;
  };

  for (const desc of cleaned.matchAll(/<rdf:Description\b([^>]*?)(\/>|>([\s\S]*?)<\/rdf:Description>)/g)) {
    const attrs = desc[1] ?? "";
    for (const a of attrs.matchAll(/([\w.-]+):([\w.-]+)\s*=\s*(["'])([\s\S]*?)\3/g)) {
      const prefix = a[1] as string;
      if (prefix === "xmlns" || prefix === "rdf" || prefix === "xml") continue;
      put(key(prefix, a[2] as string), decodeXml(a[4] as string).trim());
    }
    const body = desc[3];
    if (!body) continue;
    for (const p of body.matchAll(/<([\w.-]+):([\w.-]+)(\s[^>]*?)?(?:\/>|>([\s\S]*?)<\/\1:\2\s*>)/g)) {
      const prefix = p[1] as string;
      if (prefix === "rdf") continue;
      const inner = p[4];
      if (inner === undefined) continue;
      if (!/</.test(inner)) {
        put(key(prefix, p[2] as string), decodeXml(inner).trim());
        continue;
      }
      const items = [...inner.matchAll(/<rdf:li\b[^>]*?(?:\/>|>([\s\S]*?)<\/rdf:li>)/g)].map(
        (li) => li[1] ?? "",
      );
      if (items.length > 0 && items.every((i) => !/</.test(i))) {
        put(key(prefix, p[2] as string), items.map((i) => decodeXml(i).trim()).join("; "));
      }
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Edit history
// ---------------------------------------------------------------------------------------------

export interface HistoryEvent {
  action?: string;
  softwareAgent?: string;
  when?: string;
  changed?: string;
  instanceID?: string;
  parameters?: string;
}

const FIELDS = ["action", "softwareAgent", "when", "changed", "instanceID", "parameters"] as const;

/** The xmpMM:History events of a packet, at most 1000. */
export function parseXmpHistory(xml: string): HistoryEvent[] {
  const declared = declarations(xml);
  const prefixes = (uri: string) => declared.filter(([, u]) => u === uri).map(([p]) => p);
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

/** The XMP history of a PDF document (empty for images or when there is none). */
export function historyOf(doc: { bytes: Uint8Array; contentType: string }): HistoryEvent[] {
  if (doc.contentType !== "application/pdf") return [];
  const xml = xmpText(rawPdfOf(doc));
  return xml ? parseXmpHistory(xml) : [];
}
