import type { Readable } from "node:stream";

/** Longest line kept from a step's output; the rest of a longer line is dropped. */
export const MAX_LINE_CHARS = 64 * 1024;

/**
 * Calls `onLine` for every line of `stream` (without the line break; a last line without one included).
 * Lines longer than MAX_LINE_CHARS are cut, so a step that never prints a newline cannot fill memory.
 */
export function forEachLine(stream: Readable, onLine: (line: string) => void): void {
  let buf = "";
  let skipping = false;
  stream.setEncoding("utf8");
  stream.on("data", (chunk: string) => {
    let rest = chunk;
    for (;;) {
      const nl = rest.indexOf("\n");
      if (nl < 0) {
        if (!skipping) {
          buf += rest;
          if (buf.length > MAX_LINE_CHARS) {
            buf = buf.slice(0, MAX_LINE_CHARS);
            skipping = true;
          }
        }
        return;
      }
      const line = skipping ? buf : (buf + rest.slice(0, nl)).slice(0, MAX_LINE_CHARS);
      onLine(line.endsWith("\r") ? line.slice(0, -1) : line);
      buf = "";
      skipping = false;
      rest = rest.slice(nl + 1);
    }
  });
  stream.on("end", () => {
    if (buf) onLine(buf);
    buf = "";
  });
}

/** `text` cut to at most `maxBytes` bytes of UTF-8, never inside a character. */
export function truncateUtf8(text: string, maxBytes: number): string {
  const bytes = Buffer.from(text, "utf8");
  if (bytes.length <= maxBytes) return text;
  let end = maxBytes;
  // Step back over continuation bytes (10xxxxxx) to the start of the cut character.
  while (end > 0 && ((bytes[end] ?? 0) & 0xc0) === 0x80) end--;
  return bytes.subarray(0, end).toString("utf8");
}
