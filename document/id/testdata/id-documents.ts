import { capture, type CaptureParams } from "../../../fixtures/ids/capture.js";
import { type IdFixture, idPlan } from "../../../fixtures/ids/plan.js";
import { renderId } from "../../../fixtures/ids/render.js";
import type { IdRendering } from "../../../fixtures/ids/specimen.js";
import type { DocumentModel } from "../../model.js";
import { buildDocumentModel } from "../../pdf-model.js";

/**
 * For the identity tests: documents as the check step models them (declared identity documents), from a
 * rendering captured with given parameters, or from a development fixture of the ids plan.
 */

/** The day the identity tests read documents on (expiry dates are held against it). */
export const ID_NOW = new Date("2026-06-01T00:00:00Z");

/** The model of an identity document's bytes. */
export function idDocumentModel(
  bytes: Uint8Array,
  contentType: "image/jpeg" | "application/pdf",
  region: "EU" | "US",
  filename: string | null = null,
): Promise<DocumentModel> {
  return buildDocumentModel({
    bytes,
    contentType,
    filename,
    declaredContentType: null,
    declaredDocType: "id_document",
    region,
  });
}

/** A rendering captured (scan or photo) with `params`, as a JPEG document. */
export async function capturedIdDocument(
  rendering: IdRendering,
  renderSeed: number,
  params: CaptureParams,
  captureSeed: number,
  region: "EU" | "US",
  filename: string,
): Promise<DocumentModel> {
  const rendered = await renderId(rendering, renderSeed);
  const shot = await capture(rendered.image, params, captureSeed);
  return idDocumentModel(new Uint8Array(shot.jpeg), "image/jpeg", region, filename);
}

/** A development fixture of the ids plan (`opts`: the plan's draw and sizes) and its document. */
export async function devIdFixture(
  id: string,
  region: "EU" | "US",
  opts: { draw?: number; genuinePerKind?: number; tamperedPerKind?: number } = {},
): Promise<{ fixture: IdFixture; doc: DocumentModel }> {
  const fixture = idPlan("dev", opts).find((x) => x.id === id);
  if (!fixture) throw new Error(`no development fixture ${id}`);
  const { bytes, contentType } = await fixture.make();
  return { fixture, doc: await idDocumentModel(bytes, contentType, region) };
}
