import { keys } from "../../core/detection.js";
import { ObjectNotFoundError, type ObjectStore } from "../../core/ports.js";
import { ApiError, invalid } from "../errors.js";
import { UploadReservation } from "./schema.js";

/** The reservation of an upload, or undefined when there is none (or it is unreadable). */
export async function readReservation(
  objects: ObjectStore,
  bucket: string,
  uploadId: string,
): Promise<UploadReservation | undefined> {
  let raw: Buffer;
  try {
    raw = await objects.get(bucket, keys.uploadMeta(uploadId));
  } catch (err) {
    if (err instanceof ObjectNotFoundError) return undefined;
    throw err;
  }
  try {
    const parsed = UploadReservation.safeParse(JSON.parse(raw.toString("utf8")));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

export async function writeReservation(
  objects: ObjectStore,
  bucket: string,
  uploadId: string,
  reservation: UploadReservation,
): Promise<void> {
  await objects.put(bucket, keys.uploadMeta(uploadId), JSON.stringify(reservation), {
    contentType: "application/json",
  });
}

const LOC = ["body", "upload_id"];

/**
 * What POST /v1/detection requires of an upload_id: reserved by this client, not expired, and holding a
 * document. Otherwise 422 at body.upload_id (another client's upload reads as unknown).
 */
export async function requireUsableUpload(
  objects: ObjectStore,
  bucket: string,
  uploadId: string,
  clientId: string,
  now: Date,
): Promise<UploadReservation> {
  const r = await readReservation(objects, bucket, uploadId);
  if (!r || r.client_id !== clientId) {
    throw invalid(
      LOC,
      "No upload with this upload_id exists for this client; create one with POST /v1/uploads.",
      "upload_not_found",
      uploadId,
    );
  }
  if (Date.parse(r.expires_at) < now.getTime()) {
    throw invalid(
      LOC,
      "This upload has expired; create a new one with POST /v1/uploads and upload the document again.",
      "upload_expired",
      uploadId,
    );
  }
  const stat = await objects.stat(bucket, keys.upload(uploadId));
  if (!stat || stat.size === 0) {
    throw invalid(
      LOC,
      "No document has been uploaded for this upload_id yet; PUT the file to the upload_url first.",
      "upload_empty",
      uploadId,
    );
  }
  return r;
}

export const uploadNotFound = () =>
  new ApiError(404, "not_found", "Upload not found; create a new one with POST /v1/uploads.");
