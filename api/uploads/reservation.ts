import { readArchivedDetection } from "../../core/archive.js";
import { keys } from "../../core/detection.js";
import type { ObjectStore, ResourceStore } from "../../core/ports.js";
import type { Detection } from "../../core/detection.js";
import {
  readUploadReservation,
  type UploadReservation,
  type UploadReservationInput,
  writeUploadReservation,
} from "../../core/upload.js";
import { ApiError, invalid } from "../errors.js";

/** The reservation of an upload, or undefined when there is none (or it is unreadable). */
export async function readReservation(
  objects: ObjectStore,
  bucket: string,
  uploadId: string,
): Promise<UploadReservation | undefined> {
  const read = await readUploadReservation(objects, bucket, uploadId);
  return read.kind === "ok" ? read.value : undefined;
}

export const writeReservation = (
  objects: ObjectStore,
  bucket: string,
  uploadId: string,
  reservation: UploadReservationInput,
) => writeUploadReservation(objects, bucket, uploadId, reservation);

/**
 * Serialises the PUT and the claim of one upload inside this process, so a PUT that is still streaming
 * cannot replace the bytes of an upload that a detection has just claimed (standalone, where the PUT comes
 * through the API). Keys are released when their last holder finishes.
 */
export function createUploadLocks() {
  const tails = new Map<string, Promise<void>>();
  return async function withUploadLock<T>(uploadId: string, fn: () => Promise<T>): Promise<T> {
    const previous = tails.get(uploadId) ?? Promise.resolve();
    let release!: () => void;
    const mine = new Promise<void>((r) => {
      release = r;
    });
    const tail = previous.then(() => mine);
    tails.set(uploadId, tail);
    await previous;
    try {
      return await fn();
    } finally {
      release();
      if (tails.get(uploadId) === tail) tails.delete(uploadId);
    }
  };
}
export type UploadLocks = ReturnType<typeof createUploadLocks>;

const LOC = ["body", "upload_id"];

/** 409 for a PUT to an upload that already started a detection. */
export const uploadAlreadyUsed = (detection: string) =>
  new ApiError(
    409,
    "upload_used",
    `This upload already started detection ${detection} and cannot be changed; create a new upload with POST /v1/uploads for another document.`,
  );

/**
 * Claims an upload for the detection `name` that POST /v1/detection is about to create, or answers 422 at
 * body.upload_id: unknown or another client's, expired, already used by a detection (an upload starts one
 * detection only, also after that detection was deleted: its files, reservation included, go with it),
 * empty, or holding other than the declared size. The claim is written before the detection is created;
 * `release` undoes it when the creation fails.
 */
export async function claimUpload(opts: {
  objects: ObjectStore;
  bucket: string;
  detections: ResourceStore<Detection>;
  uploadId: string;
  clientId: string;
  detection: string;
  now: Date;
  maxBytes: number;
}): Promise<{ reservation: UploadReservation; release: () => Promise<void> }> {
  const { objects, bucket, uploadId } = opts;
  const r = await readReservation(objects, bucket, uploadId);
  if (!r || r.client_id !== opts.clientId) {
    throw invalid(
      LOC,
      "No upload with this upload_id exists for this client (an upload is removed with the detection it started, or when it expires unused); create one with POST /v1/uploads.",
      "upload_not_found",
      uploadId,
    );
  }
  if (r.detection !== undefined) {
    // A claim whose detection does not exist comes from a create that failed half-way: it may be retried.
    const owner =
      (await opts.detections.get(r.detection)) ??
      (await readArchivedDetection(objects, bucket, r.client_id, r.detection));
    if (owner) {
      throw invalid(
        LOC,
        `This upload already started detection ${r.detection}; an upload starts one detection only, so create a new upload with POST /v1/uploads.`,
        "upload_used",
        uploadId,
      );
    }
  }
  if (Date.parse(r.expires_at) < opts.now.getTime()) {
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
  if (r.size_bytes !== null && stat.size !== r.size_bytes) {
    throw invalid(
      LOC,
      `The uploaded document has ${stat.size} bytes but the upload declared size_bytes ${r.size_bytes}; upload the whole file again.`,
      "upload_size_mismatch",
      uploadId,
    );
  }
  if (stat.size > opts.maxBytes) {
    throw invalid(
      LOC,
      `The uploaded document has ${stat.size} bytes, more than this deployment's maximum of ${opts.maxBytes}.`,
      "upload_too_large",
      uploadId,
    );
  }
  // `size` and `document_modified_at` record what the detection was created from: the prepare step refuses
  // bytes written since.
  const claimed: UploadReservation = {
    ...r,
    size: stat.size,
    detection: opts.detection,
    document_modified_at: stat.lastModified.toISOString(),
  };
  await writeReservation(objects, bucket, uploadId, claimed);
  return {
    reservation: claimed,
    release: async () => {
      const current = await readReservation(objects, bucket, uploadId);
      if (current?.detection === opts.detection) {
        const { detection: _claim, document_modified_at: _modified, ...rest } = current;
        await writeReservation(objects, bucket, uploadId, { ...rest, size: r.size });
      }
    },
  };
}

export const uploadNotFound = () =>
  new ApiError(404, "not_found", "Upload not found; create a new one with POST /v1/uploads.");
