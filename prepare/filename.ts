/**
 * The document's file name as the source names it: Content-Disposition (`filename*` per RFC 5987/6266
 * first, then `filename`), else the last segment of the URL path (percent-decoded). Directory parts and
 * control characters are removed; the object key is sanitised separately (core/detection.ts keys).
 */

function clean(name: string | undefined): string | null {
  if (name === undefined) return null;
  const base = name.split(/[\\/]/).pop() ?? "";
  const stripped = base.replace(/[\u0000-\u001f\u007f]/g, "").trim();
  if (!stripped || stripped === "." || stripped === "..") return null;
  return stripped.slice(0, 255);
}

function decodeRfc5987(value: string): string | undefined {
  const m = /^([\w!#$%&+^`{}~-]+)'[\w-]*'(.*)$/.exec(value.trim());
  if (!m) return undefined;
  const charset = (m[1] as string).toLowerCase();
  const encoded = m[2] as string;
  try {
    if (charset === "utf-8") return decodeURIComponent(encoded);
    if (charset === "iso-8859-1") {
      const bytes = encoded.replace(/%([0-9a-fA-F]{2})/g, (_x, h: string) =>
        String.fromCharCode(Number.parseInt(h, 16)),
      );
      return bytes;
    }
  } catch {
    return undefined;
  }
  return undefined;
}

/** Parameters of a header value like `attachment; filename="a.pdf"; filename*=UTF-8''b.pdf`. */
function headerParams(header: string): Map<string, string> {
  const params = new Map<string, string>();
  const re = /;\s*([^\s=;]+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^;]*))/g;
  for (const m of header.matchAll(re)) {
    const name = (m[1] as string).toLowerCase();
    const value = m[2] !== undefined ? m[2].replace(/\\(.)/g, "$1") : (m[3] ?? "").trim();
    if (!params.has(name)) params.set(name, value);
  }
  return params;
}

export function filenameFromContentDisposition(header: string | undefined): string | null {
  if (!header) return null;
  const params = headerParams(header);
  const star = params.get("filename*");
  if (star !== undefined) {
    const decoded = clean(decodeRfc5987(star));
    if (decoded) return decoded;
  }
  return clean(params.get("filename"));
}

export function filenameFromUrl(url: string): string | null {
  let path: string;
  try {
    path = new URL(url).pathname;
  } catch {
    return null;
  }
  const last = path.split("/").pop();
  if (!last) return null;
  try {
    return clean(decodeURIComponent(last));
  } catch {
    return clean(last);
  }
}

export function filenameFromKey(key: string): string | null {
  return clean(key.split("/").pop());
}
