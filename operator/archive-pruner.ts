import type { TenantMemory } from "../core/tenant-memory.js";
import { dueArchivedDetections, pruneArchivedDetection } from "../core/archive.js";
import type { Clock, ObjectStore } from "../core/ports.js";
import type { Logger } from "../core/step-context.js";
import type { OperatorMetrics } from "./metrics.js";
import { periodicPass } from "./periodic-pass.js";

export interface ArchivePrunerDeps {
  objects: ObjectStore;
  bucket: string;
  clock: Clock;
  log: Logger;
  /** DOCVERIFY_RETENTION_SECONDS: how long after it finished a detection's verdict and files are kept. */
  retentionSeconds: number;
  metrics?: Pick<OperatorMetrics, "archivedPruned">;
  /** The tenant memory: a pruned detection is forgotten (issue 23). */
  memory?: TenantMemory;
}

export interface PruneResult {
  /** Archived detections pruned in this pass. */
  pruned: number;
  /** Objects deleted. */
  objects: number;
}

/**
 * Retention for archived detections, as the reconciler does it for live ones: once a detection's retention
 * period is over, its verdict (and so its reasoning) and its stored files go; the record keeps its status,
 * score and durable fields. It reads only what is due: the archive keeps a time-ordered queue of retention
 * entries by completion time (core/archive.ts, `records-due/`), listed from the oldest up to
 * now minus the retention period. Runs in the operator (the
 * leader, in the cluster) every DOCVERIFY_ARCHIVE_SWEEP_SECONDS.
 */
export function createArchivePruner(deps: ArchivePrunerDeps) {
  const { objects, bucket, clock, log } = deps;

  async function pruneOnce(): Promise<PruneResult> {
    const result: PruneResult = { pruned: 0, objects: 0 };
    const completedBefore = new Date(clock.now().getTime() - deps.retentionSeconds * 1000);
    for await (const due of dueArchivedDetections(objects, bucket, completedBefore)) {
      await deps.memory?.forget(due.id);
      const removed = await pruneArchivedDetection(objects, bucket, due);
      result.pruned++;
      result.objects += removed;
      deps.metrics?.archivedPruned();
      log.info(
        { detection: due.id, removedObjects: removed },
        "retention period over; archived verdict and stored files pruned",
      );
    }
    return result;
  }

  const periodic = periodicPass(pruneOnce, log, "archive retention pass failed; retrying next period");
  return {
    /** One pass over what is due; concurrent calls share the pass in progress. */
    prune: periodic.run,
    /** Prunes now and then every `intervalMs` until stopped; a failed pass is logged and retried next time. */
    start: periodic.start,
    stop: periodic.stop,
  };
}

export type ArchivePruner = ReturnType<typeof createArchivePruner>;
