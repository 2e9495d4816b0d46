import { z } from "zod";
import { keys } from "./detection.js";
import type { ObjectStore } from "./ports.js";
import { defineStored, readStored, type StoredRead, writeStored } from "./stored.js";

/** Upload ids: `upl-` + a lowercase ULID. */
export const UPLOAD_ID_RE = /^upl-[0-9a-hjkmnp-tv-z]{26}$/;

/**
 * The reservation of an upload, stored as JSON beside its bytes (`keys.uploadMeta(id)`). The API writes it
 * (POST /v1/uploads, the PUT, and the claim when a detection is created from it); the prepare step reads it;
 * the upload sweeper reads it to decide when an upload's files go. The one schema for all three.
 */
export const UploadReservation = z.object({
  /** The client that reserved the upload; no other client can use it. */
  client_id: z.string(),
  /** The document's file name (POST body, or the PUT's Content-Disposition). */
  filename: z.string().nullable(),
  /** The content type the client declared at POST /v1/uploads (compared with the real one by `file.type`). */
  content_type: z.string().nullable(),
  /** The size the client declared at POST /v1/uploads; the PUT must deliver exactly this many bytes. */
  size_bytes: z.number().int().nonnegative().nullable().default(null),
  /** When the upload URL and an unused reservation expire (ISO time). */
  expires_at: z.string(),
  /** Bytes stored by the last good PUT (0: nothing uploaded yet). */
  size: z.number().int().nonnegative(),
  /**
   * The detection this upload started. An upload starts one detection only: set once by POST /v1/detection,
   * after which the upload accepts no PUT and no second detection, and its files go with that detection.
   */
  detection: z.string().optional(),
  /**
   * The last write of the document the claim was made on (its object's lastModified, ISO time): the prepare
   * step takes only those bytes (a presigned PUT to the storage could still replace them in the cluster).
   */
  document_modified_at: z.string().optional(),
});
export type UploadReservation = z.infer<typeof UploadReservation>;
/** What a writer provides (size_bytes may be left out). */
export type UploadReservationInput = z.input<typeof UploadReservation>;

/** The stored kind of a reservation (core/stored.ts). */
export const UPLOAD_RESERVATION = defineStored({
  what: "the upload's reservation",
  key: (uploadId: string) => keys.uploadMeta(uploadId),
  schema: UploadReservation,
});

/** An upload's reservation: ok, missing or invalid; object store outages are thrown. */
export const readUploadReservation = (
  objects: ObjectStore,
  bucket: string,
  uploadId: string,
): Promise<StoredRead<UploadReservation>> => readStored(objects, bucket, UPLOAD_RESERVATION, uploadId);

export async function writeUploadReservation(
  objects: ObjectStore,
  bucket: string,
  uploadId: string,
  reservation: UploadReservationInput,
): Promise<void> {
  await writeStored(objects, bucket, UPLOAD_RESERVATION, reservation, uploadId);
}

/** The upload id of an object key under `uploads/`, or undefined. */
export function uploadIdOfKey(key: string): string | undefined {
  const m = /^uploads\/([^/]+)\//.exec(key);
  return m?.[1];
}
