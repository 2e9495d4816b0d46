import { readArchivedDetection } from "../core/archive.js";
import { type Detection, keys } from "../core/detection.js";
import type { Clock, ObjectInfo, ObjectStore, ResourceStore } from "../core/ports.js";
import type { Logger } from "../core/step-context.js";
import { readUploadReservation, uploadIdOfKey } from "../core/upload.js";
import type { OperatorMetrics } from "./metrics.js";
import { periodicPass } from "./periodic-pass.js";

export interface UploadSweeperDeps {
  objects: ObjectStore;
  bucket: string;
  detections: ResourceStore<Detection>;
  clock: Clock;
  log: Logger;
  /**
   * Extra time before expiry-based deletions that could race a create: a claim whose detection is not (yet)
   * in the store, and files without a reservation (only a deletion cut short leaves those: the reservation
   * is written before its URL is handed out). Also how long such orphans may stay after their last write.
   * Default 5 minutes.
   */
  graceMs?: number;
  metrics?: Pick<OperatorMetrics, "uploadDeleted">;
}

/** Why an upload goes: a token for the metric's label and a sentence for the log. */
interface Removal {
  reason: "expired_unused" | "stale_claim" | "detection_pruned" | "orphaned";
  message: string;
}

const DEFAULT_GRACE_MS = 5 * 60_000;

export interface SweepResult {
  /** Uploads looked at. */
  uploads: number;
  /** Uploads whose files were deleted. */
  removed: number;
  /** Objects deleted. */
  objects: number;
}

/**
 * Deletes the files of uploads nobody can use any more: an upload that expired without starting a
 * detection, and files left behind without a reservation. An upload that started a detection is that
 * detection's: its files go with it through the reconciler's finalizer (DELETE) and retention
 * (core/detection-files.ts), so the sweeper leaves it alone while the detection exists (as a resource or in
 * the archive) and is not pruned.
 * The sweeper only reads the reservation and the detections: it runs in the operator (the leader, in the
 * cluster) beside the reconcilers.
 */
export function createUploadSweeper(deps: UploadSweeperDeps) {
  const { objects, bucket, detections, clock, log } = deps;
  const graceMs = deps.graceMs ?? DEFAULT_GRACE_MS;

  /** The uploads under `uploads/`, each with its objects, in key order (one listing). */
  async function* uploads(): AsyncGenerator<{ id: string; objects: ObjectInfo[] }> {
    let current: { id: string; objects: ObjectInfo[] } | undefined;
    for await (const obj of objects.list(bucket, "uploads/")) {
      const id = uploadIdOfKey(obj.key);
      if (id === undefined) continue;
      if (current && current.id !== id) {
        yield current;
        current = undefined;
      }
      current ??= { id, objects: [] };
      current.objects.push(obj);
    }
    if (current) yield current;
  }

  /** Why upload `id` goes now, or undefined when it stays. */
  async function verdict(
    id: string,
    files: ObjectInfo[],
    now: number,
    detectionsByName: () => Promise<Map<string, Detection>>,
  ): Promise<Removal | undefined> {
    const read = await readUploadReservation(objects, bucket, id);
    if (read.kind !== "ok") {
      const newest = Math.max(...files.map((f) => f.lastModified.getTime()));
      return now - newest > graceMs
        ? {
            reason: "orphaned",
            message: `files without a ${read.kind === "missing" ? "missing" : "unreadable"} reservation`,
          }
        : undefined;
    }
    const r = read.value;
    const expiresAt = Date.parse(r.expires_at);
    if (r.detection === undefined)
      return now > expiresAt ? { reason: "expired_unused", message: "expired unused" } : undefined;
    // The owner is a live resource or, once archived, a record in the archive (read resource first).
    const owner =
      (await detectionsByName()).get(r.detection) ??
      (await readArchivedDetection(objects, bucket, r.client_id, r.detection));
    if (owner?.status?.prunedAt) {
      return {
        reason: "detection_pruned",
        message: `its detection ${r.detection} is past its retention period`,
      };
    }
    if (owner) return undefined; // the detection's finalizer or retention removes it
    return now > expiresAt + graceMs
      ? { reason: "stale_claim", message: `expired; its detection ${r.detection} does not exist` }
      : undefined;
  }

  async function sweepOnce(): Promise<SweepResult> {
    const now = clock.now().getTime();
    let byName: Promise<Map<string, Detection>> | undefined;
    // One listing of the detections per sweep, and only when a claimed upload needs it.
    const detectionsByName = () => {
      byName ??= detections.list().then(({ items }) => new Map(items.map((d) => [d.metadata.name, d])));
      return byName;
    };
    const result: SweepResult = { uploads: 0, removed: 0, objects: 0 };
    for await (const upload of uploads()) {
      result.uploads++;
      const why = await verdict(upload.id, upload.objects, now, detectionsByName);
      if (!why) continue;
      const n = await objects.deletePrefix(bucket, keys.uploadPrefix(upload.id));
      result.removed++;
      result.objects += n;
      deps.metrics?.uploadDeleted(why.reason);
      log.info({ uploadId: upload.id, removedObjects: n, reason: why.message }, "upload deleted");
    }
    if (result.removed > 0) log.info({ ...result }, "upload sweep finished");
    return result;
  }

  const periodic = periodicPass(sweepOnce, log, "upload sweep failed; retrying next period");
  return {
    /** One pass over every upload; concurrent calls share the pass in progress. */
    sweep: periodic.run,
    /** Sweeps now and then every `intervalMs` until stopped; a failed pass is logged and retried next time. */
    start: periodic.start,
    stop: periodic.stop,
  };
}

export type UploadSweeper = ReturnType<typeof createUploadSweeper>;
