import { keys } from "./detection.js";
import type { ObjectStore } from "./ports.js";
import { readUploadReservation } from "./upload.js";

/**
 * Deletes every file a detection has in the service bucket: its stored document, its step results (the
 * archived verdict among them, core/archive.ts), the reviewer's evidence (manifest and rendered page
 * images, docs/evidence.md), and the upload it was created from (reservation included, so the upload can
 * start no other detection). Used by
 * the finalizer (DELETE) and by retention. A job's input object stays in the client's own bucket (theirs):
 * only the copy under `documents/` is ours. Idempotent; returns how many objects went.
 */
export async function removeDetectionFiles(
  objects: ObjectStore,
  bucket: string,
  d: { metadata: { name: string }; spec: { source: { uploadId?: string } } },
): Promise<number> {
  const name = d.metadata.name;
  let removed = 0;
  for (const prefix of [keys.documentPrefix(name), keys.runPrefix(name), keys.evidencePrefix(name)]) {
    removed += await objects.deletePrefix(bucket, prefix);
  }
  const upload = d.spec.source.uploadId;
  if (upload !== undefined && (await uploadGoesWith(objects, bucket, upload, name))) {
    removed += await objects.deletePrefix(bucket, keys.uploadPrefix(upload));
  }
  return removed;
}

/**
 * True when upload `id`'s files go with detection `name`: its reservation names that detection, names none
 * (an upload used before uploads were claimed), or is gone. An upload claimed by another detection (a
 * hand-made resource, or the loser of a race) is left to its own detection. Only a well-formed id names an
 * upload folder, so a hand-made resource cannot widen the deletion.
 */
async function uploadGoesWith(
  objects: ObjectStore,
  bucket: string,
  id: string,
  name: string,
): Promise<boolean> {
  if (!/^[a-z0-9-]{1,64}$/.test(id)) return false;
  const read = await readUploadReservation(objects, bucket, id);
  if (read.kind !== "ok") return true;
  return read.value.detection === undefined || read.value.detection === name;
}
