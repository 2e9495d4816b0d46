/**
 * Where `%PDF-` starts within the first 1024 bytes (readers accept that much junk before the header), or
 * -1. Dependency-free so the prepare step can sniff a PDF without loading a PDF parser.
 */
export function pdfHeaderOffset(bytes: Uint8Array): number {
  return Buffer.from(bytes.buffer, bytes.byteOffset, Math.min(bytes.length, 1024 + 5)).indexOf("%PDF-");
}
