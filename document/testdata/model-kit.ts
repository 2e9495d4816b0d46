import type { DocType } from "../../core/verdict.js";
import type { DocumentModel } from "../model.js";
import { sniffContentType } from "../../prepare/content-sniff.js";
import { buildDocumentModel } from "../pdf-model.js";

/** Builds the DocumentModel a check sees, from bytes, as the runner would after prepare. */
export async function modelOf(
  bytes: Uint8Array,
  opts: { filename?: string | null; docType?: DocType; region?: string } = {},
): Promise<DocumentModel> {
  const { contentType } = await sniffContentType(bytes);
  if (!contentType) throw new Error("test document is not a supported type");
  return buildDocumentModel({
    bytes,
    contentType,
    filename: opts.filename === undefined ? "document.pdf" : opts.filename,
    declaredDocType: opts.docType ?? "bank_statement",
    region: opts.region ?? "GB",
  });
}
