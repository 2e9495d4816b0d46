/**
 * Reads the simple properties of an XMP packet into a flat map keyed by canonical prefix
 * (`xmp:CreateDate`, `pdf:Producer`, `dc:title`, ...), whatever prefixes the writer declared (old Acrobat
 * wrote `xap:` for the xmp namespace). Both element form (`<xmp:CreateDate>...</xmp:CreateDate>`) and
 * attribute form (`<rdf:Description xmp:CreateDate="..."/>`) are read; rdf:Alt/Seq/Bag values are the
 * list items joined with "; ". Structured values (e.g. xmpMM:History) are left out.
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

const ENTITIES: Record<string, string> = { amp: "&", lt: "<", gt: ">", quot: '"', apos: "'" };

function decodeXml(s: string): string {
  return s.replace(/&(#x[0-9a-fA-F]+|#\d+|amp|lt|gt|quot|apos);/g, (_m, e: string) => {
    if (e.startsWith("#x")) return String.fromCodePoint(Number.parseInt(e.slice(2), 16));
    if (e.startsWith("#")) return String.fromCodePoint(Number(e.slice(1)));
    return ENTITIES[e] ?? "";
  });
}

export function parseXmp(xml: string): Record<string, string> {
  const out: Record<string, string> = {};
  const cleaned = xml.replace(/<!--[\s\S]*?-->/g, "").replace(/<\?[\s\S]*?\?>/g, "");
  const prefixes = new Map<string, string>();
  for (const m of cleaned.matchAll(/xmlns:([\w.-]+)\s*=\s*(["'])(.*?)\2/g)) {
    const uri = m[3] as string;
    prefixes.set(m[1] as string, CANONICAL_PREFIX[uri] ?? (m[1] as string));
  }
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
