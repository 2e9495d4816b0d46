import path from "node:path";
import { readTextHead } from "../agent/step.js";
import type { RescoreSubject } from "../agent/rescore.js";
import { loadConfig } from "../core/config.js";
import { DETECTION_KIND, type Detection, keys } from "../core/detection.js";
import { ObjectNotFoundError, type ObjectStore, type ResourceStore } from "../core/ports.js";
import { readStepResult } from "../core/step-results.js";
import { openLocalResourceStore } from "../platform/local/resource-store.js";
import { objectStoreFor } from "./object-stores.js";

/**
 * What the tenant-tuning commands (`docverify policy dry-run`, `docverify calibration-report`) read: the
 * Detections and the object store of a standalone data folder, or of the cluster (--cluster: KUBECONFIG or
 * the Pod's service account, and the S3_* settings, as the operator has them).
 */
export interface TenantData {
  detections: ResourceStore<Detection>;
  objects: ObjectStore;
  bucket: string;
  close(): Promise<void>;
}

export async function openTenantData(opts: {
  cluster: boolean;
  dataDir?: string;
  env: Record<string, string | undefined>;
}): Promise<TenantData> {
  const config = loadConfig(opts.env);
  if (opts.cluster) {
    const { clusterObjectStore, clusterStores } = await import("./cluster.js");
    const { loadKubeConfig, resolveNamespace } = await import("./cluster-config.js");
    const kc = loadKubeConfig(opts.env);
    const namespace = resolveNamespace(kc, opts.env);
    return {
      detections: clusterStores(kc, namespace, config).detections,
      objects: await clusterObjectStore(config),
      bucket: config.bucket,
      close: async () => {},
    };
  }
  const dataDir = path.resolve(opts.dataDir ?? config.dataDir);
  return {
    detections: await openLocalResourceStore<Detection>({
      dir: path.join(dataDir, "resources", "detections"),
      kind: DETECTION_KIND,
      revision: { value: 0 },
      maxObjectBytes: config.maxResourceBytes,
    }),
    objects: objectStoreFor(dataDir),
    bucket: config.bucket,
    close: async () => {},
  };
}

/** The `last` most recently completed detections (of `client`, when given), newest first. */
export async function lastCompleted(data: TenantData, last: number, client?: string): Promise<Detection[]> {
  const { items } = await data.detections.list();
  return items
    .filter(
      (d) =>
        d.status?.phase === "Completed" &&
        !d.status.prunedAt &&
        !d.metadata.deletionTimestamp &&
        (client === undefined || d.spec.submittedBy === client),
    )
    .sort(
      (a, b) =>
        (b.status?.completedAt ?? "").localeCompare(a.status?.completedAt ?? "") ||
        b.metadata.name.localeCompare(a.metadata.name),
    )
    .slice(0, last);
}

/** What a re-score of `d` reads (its check results, text and agent engine), or why it cannot be read. */
export async function rescoreSubjectOf(
  data: TenantData,
  d: Detection,
): Promise<{ ok: true; subject: RescoreSubject } | { ok: false; reason: string }> {
  const id = d.metadata.name;
  const check = await readStepResult(data.objects, data.bucket, id, "check");
  if (check.kind !== "ok")
    return { ok: false, reason: `its check results are ${check.kind === "missing" ? "gone" : "unreadable"}` };
  let text = "";
  try {
    text = await readTextHead(data.objects, data.bucket, check.value.textKey ?? keys.text(id));
  } catch (err) {
    if (!(err instanceof ObjectNotFoundError)) throw err;
  }
  const agent = await readStepResult(data.objects, data.bucket, id, "agent");
  const policy = d.status?.policy ?? d.status?.verdict?.policy;
  return {
    ok: true,
    subject: {
      id,
      spec: d.spec,
      recorded: {
        score: d.status?.score ?? null,
        ...(policy ? { policy } : {}),
        ...(agent.kind === "ok" ? { engine: agent.value.engine } : {}),
      },
      check: check.value,
      text,
    },
  };
}
