import { createHash } from "node:crypto";
import { z } from "zod";
import { DETECTION_KIND, type Detection, DetectionSpec, DetectionStatus } from "./detection.js";
import { removeDetectionFiles } from "./detection-files.js";
import type { ObjectStore } from "./ports.js";
import { API_GROUP_VERSION, labelValue } from "./resource.js";
import { defineStored, readStored, readStoredAt, type StoredRead, writeStored } from "./stored.js";
import { Verdict } from "./verdict.js";

/**
 * The archive of finished detections in the object store (docs/decisions.md, "Archive"). A terminal
 * Detection is archived some time after it finished: its record is written here, then the resource is
 * deleted, so the resource store (etcd) holds only the detections that run or finished recently, while
 * GET, DELETE, list and retention work on both. The same code serves both runtimes.
 *
 * Layout in the service bucket, `<c>` being the client's label value (the client id, or a hash of it) and
 * `<p>` a detection's newest-first path (its ULID with every character inverted, so that S3's ascending
 * key order lists the newest first, under three folders of its time part, so that a listing that starts
 * after a key never walks more than one folder of each level):
 *
 *   records/<c>/<p>.json                               the record (ArchiveRecord)
 *   records-index/<c>/status/<phase>/<p>               empty marker: the listing by status
 *   records-index/<c>/batch/<b>/<p>                    empty marker: the listing by batch_id (<b>: its label value)
 *   records-index/<c>/batch-status/<b>/<phase>/<p>     empty marker: both filters
 *   records-due/<completion time, ms, 13 digits>/<c>/<ulid inverted>   retention: in completion order
 *   runs/<id>/verdict.json                             the verdict, beside the step results, until retention
 *
 * The record never changes once written: retention deletes the verdict object with the step results (the
 * verdict then reads null), and DELETE deletes everything, record last. Nothing rewrites a record, so a
 * DELETE can never be undone by a concurrent retention pass.
 */

const CROCKFORD = "0123456789abcdefghjkmnpqrstvwxyz";
const INVERTED = [...CROCKFORD].reverse().join("");
const ULID_RE = /^[0-9a-hjkmnp-tv-z]{26}$/;

/** Names the archive takes: the API's ids and a job's (`det-` + a lowercase ULID). Others stay resources. */
export const ARCHIVABLE_NAME_RE = /^det-[0-9a-hjkmnp-tv-z]{26}$/;
export const isArchivable = (name: string) => ARCHIVABLE_NAME_RE.test(name);

const sha256Hex = (s: string) => createHash("sha256").update(s).digest("hex");
/** The client's folder: the value of its `docverify.io/client` label. */
export const archiveClientSegment = (clientId: string) => labelValue(clientId, sha256Hex);
const batchSegment = (batchId: string) => labelValue(batchId, sha256Hex);

function invert(ulid: string): string {
  let out = "";
  for (const ch of ulid) out += INVERTED[CROCKFORD.indexOf(ch)];
  return out;
}
/** The id of a newest-first leaf (the inverse of `newestFirst`), or undefined for a foreign key. */
function idOfLeaf(leaf: string): string | undefined {
  return ULID_RE.test(leaf) ? `det-${invert(leaf)}` : undefined;
}
/** A detection id's newest-first sort key: its ULID, every character inverted. */
export function newestFirst(id: string): string {
  if (!isArchivable(id)) throw new RangeError(`${id} is not an archivable detection id`);
  return invert(id.slice(4));
}
/** `<p>`: three folders of the inverted time (≈12 days / ≈17 min / ≈1 s) and the inverted ULID. */
const pathOf = (id: string) => {
  const inv = newestFirst(id);
  return `${inv.slice(0, 4)}/${inv.slice(4, 6)}/${inv.slice(6, 8)}/${inv}`;
};

export type ArchivedPhase = "Completed" | "Failed";

const prefixes = {
  records: (c: string) => `records/${c}/`,
  status: (c: string, phase: ArchivedPhase) => `records-index/${c}/status/${phase.toLowerCase()}/`,
  batch: (c: string, b: string) => `records-index/${c}/batch/${b}/`,
  batchStatus: (c: string, b: string, phase: ArchivedPhase) =>
    `records-index/${c}/batch-status/${b}/${phase.toLowerCase()}/`,
};
const DUE_PREFIX = "records-due/";

/** Object keys of the archive. */
export const archiveKeys = {
  record: (clientId: string, id: string) =>
    `${prefixes.records(archiveClientSegment(clientId))}${pathOf(id)}.json`,
  verdict: (id: string) => `runs/${id}/verdict.json`,
  due: (completedAtMs: number, clientId: string, id: string) =>
    `${DUE_PREFIX}${String(Math.max(0, Math.floor(completedAtMs))).padStart(13, "0")}/${archiveClientSegment(clientId)}/${newestFirst(id)}`,
  duePrefix: DUE_PREFIX,
} as const;

/** The markers (index entries) of an archived detection. */
function markerKeys(
  clientId: string,
  id: string,
  phase: ArchivedPhase,
  batchId: string | undefined,
): string[] {
  const c = archiveClientSegment(clientId);
  const p = pathOf(id);
  const out = [`${prefixes.status(c, phase)}${p}`];
  if (batchId !== undefined) {
    const b = batchSegment(batchId);
    out.push(`${prefixes.batch(c, b)}${p}`, `${prefixes.batchStatus(c, b, phase)}${p}`);
  }
  return out;
}

/** The record of an archived detection: the resource as it was (its verdict kept apart), and its retention. */
export const ArchiveRecord = z.object({
  version: z.literal(1),
  archivedAt: z.string(),
  /** True when the detection has a verdict in `archiveKeys.verdict(id)` (until retention). */
  verdict: z.boolean(),
  detection: z.object({
    metadata: z.object({
      name: z.string(),
      uid: z.string().optional(),
      creationTimestamp: z.string().optional(),
      generation: z.number().int().optional(),
      labels: z.record(z.string(), z.string()).optional(),
    }),
    spec: DetectionSpec,
    status: DetectionStatus,
  }),
});
export type ArchiveRecord = z.infer<typeof ArchiveRecord>;

/** The stored kinds of the archive (core/stored.ts): a detection's record, and its verdict kept apart. */
export const ARCHIVE_RECORD = defineStored({
  what: "the archived record",
  key: (clientId: string, id: string) => archiveKeys.record(clientId, id),
  schema: ArchiveRecord,
});
export const ARCHIVED_VERDICT = defineStored({
  what: "the archived verdict",
  key: (id: string) => archiveKeys.verdict(id),
  schema: Verdict,
});

/** What the reconciler archives: a terminal detection with an archivable name. */
export function archivablePhase(d: Detection): ArchivedPhase | undefined {
  const phase = d.status?.phase;
  return (phase === "Completed" || phase === "Failed") && isArchivable(d.metadata.name) ? phase : undefined;
}

/** When a terminal detection finished: the time its retention counts from. */
function completedAtMs(d: {
  metadata: { creationTimestamp?: string };
  status?: { completedAt?: string };
}): number {
  const t = Date.parse(d.status?.completedAt ?? d.metadata.creationTimestamp ?? "");
  return Number.isFinite(t) ? t : 0;
}

/**
 * Writes the archive of a terminal detection: the verdict, the markers, the retention entry (unless it
 * was pruned already) and, last, the record (the commit point: a detection is in the archive once its
 * record exists). Idempotent: a pass repeated after a crash writes the same objects again.
 */
export async function archiveDetection(
  objects: ObjectStore,
  bucket: string,
  d: Detection,
  opts: { now: Date },
): Promise<{ key: string }> {
  const phase = archivablePhase(d);
  if (!phase)
    throw new Error(`Detection ${d.metadata.name} cannot be archived (not terminal, or not an API id).`);
  const id = d.metadata.name;
  const client = d.spec.submittedBy;
  const { verdict, ...status } = d.status ?? {};
  // Everything but the record, at once; the record only after all of it is written.
  await Promise.all([
    ...(verdict ? [writeStored(objects, bucket, ARCHIVED_VERDICT, verdict, id)] : []),
    ...markerKeys(client, id, phase, d.spec.batchId).map((key) => objects.put(bucket, key, "")),
    ...(status.prunedAt === undefined
      ? [objects.put(bucket, archiveKeys.due(completedAtMs(d), client, id), "")]
      : []),
  ]);
  const { metadata } = d;
  const record: ArchiveRecord = {
    version: 1,
    archivedAt: opts.now.toISOString(),
    verdict: verdict != null,
    detection: {
      metadata: {
        name: id,
        ...(metadata.uid ? { uid: metadata.uid } : {}),
        ...(metadata.creationTimestamp ? { creationTimestamp: metadata.creationTimestamp } : {}),
        ...(metadata.generation !== undefined ? { generation: metadata.generation } : {}),
        ...(metadata.labels ? { labels: { ...metadata.labels } } : {}),
      },
      spec: d.spec,
      status,
    },
  };
  const key = await writeStored(objects, bucket, ARCHIVE_RECORD, record, client, id);
  return { key };
}

/** The record under `key` (core/stored.ts: ok, missing or invalid). */
const readRecordAt = (objects: ObjectStore, bucket: string, key: string) =>
  readStoredAt(objects, bucket, ARCHIVE_RECORD, key);

/** An archived verdict that could not be read back (the record itself is fine). */
export interface UnreadableVerdict {
  key: string;
  reason: string;
}

/**
 * The archived detection as a Detection resource, its verdict read back: null once retention (or a DELETE
 * under way) removed it, and null too when the verdict object is damaged (reported as `unreadableVerdict`:
 * the record's status, score and durable fields are intact, and the contract reads a verdict that is no
 * longer available as null).
 */
async function toDetection(
  objects: ObjectStore,
  bucket: string,
  rec: ArchiveRecord,
): Promise<{ detection: Detection; unreadableVerdict?: UnreadableVerdict }> {
  const { metadata, spec, status } = rec.detection;
  let verdict: Verdict | null = null;
  let unreadableVerdict: UnreadableVerdict | undefined;
  if (rec.verdict) {
    const read = await readStored(objects, bucket, ARCHIVED_VERDICT, metadata.name);
    if (read.kind === "ok") verdict = read.value;
    else if (read.kind === "invalid") unreadableVerdict = { key: read.key, reason: read.reason };
  }
  return {
    detection: {
      apiVersion: API_GROUP_VERSION,
      kind: DETECTION_KIND,
      metadata,
      spec,
      status: { ...status, verdict },
    },
    ...(unreadableVerdict ? { unreadableVerdict } : {}),
  };
}

/**
 * The archived detection `id` of client `clientId`: `ok` with the detection (and `unreadableVerdict` when
 * its verdict object is damaged), `missing` when it is not in the archive, `invalid` when its record is
 * there but damaged (not JSON, not a record, or a record of another detection or client).
 */
export type ArchivedRead =
  | { kind: "ok"; key: string; value: Detection; unreadableVerdict?: UnreadableVerdict }
  | Exclude<StoredRead<never>, { kind: "ok" }>;

export async function readArchived(
  objects: ObjectStore,
  bucket: string,
  clientId: string,
  id: string,
): Promise<ArchivedRead> {
  if (!isArchivable(id)) return { kind: "missing", key: "" };
  const read = await readRecordAt(objects, bucket, archiveKeys.record(clientId, id));
  if (read.kind !== "ok") return read;
  const rec = read.value;
  if (rec.detection.metadata.name !== id || rec.detection.spec.submittedBy !== clientId) {
    const issue = "the record names another detection or client";
    return { kind: "invalid", key: read.key, problem: "wrong_shape", at: "detection", issue, reason: issue };
  }
  const { detection, unreadableVerdict } = await toDetection(objects, bucket, rec);
  return { kind: "ok", key: read.key, value: detection, ...(unreadableVerdict ? { unreadableVerdict } : {}) };
}

/** The archived detection `id` of client `clientId`, or undefined when it is not in the archive or unreadable. */
export async function readArchivedDetection(
  objects: ObjectStore,
  bucket: string,
  clientId: string,
  id: string,
): Promise<Detection | undefined> {
  const read = await readArchived(objects, bucket, clientId, id);
  return read.kind === "ok" ? read.value : undefined;
}

/** True when the archive holds a record for `id` of `clientId` (one stat, no read). */
export async function isInArchive(
  objects: ObjectStore,
  bucket: string,
  clientId: string,
  id: string,
): Promise<boolean> {
  if (!isArchivable(id)) return false;
  return (await objects.stat(bucket, archiveKeys.record(clientId, id))) !== undefined;
}

/**
 * Deletes an archived detection: its files (document, step results, verdict, upload), its markers and its
 * retention entry, and last its record, so a crash half-way leaves a record that a repeated DELETE finds
 * and finishes. False when there was no record.
 */
export async function removeArchivedDetection(
  objects: ObjectStore,
  bucket: string,
  clientId: string,
  id: string,
): Promise<boolean> {
  if (!isArchivable(id)) return false;
  const key = archiveKeys.record(clientId, id);
  const read = await readRecordAt(objects, bucket, key);
  if (read.kind === "missing") return false;
  const rec = read.kind === "ok" ? read.value : undefined;
  if (!rec || rec.detection.metadata.name !== id || rec.detection.spec.submittedBy !== clientId) {
    // An unreadable record still goes (with what its name alone locates).
    await removeDetectionFiles(objects, bucket, { metadata: { name: id }, spec: { source: {} } });
    await objects.delete(bucket, key);
    return true;
  }
  const { metadata, spec, status } = rec.detection;
  await removeDetectionFiles(objects, bucket, { metadata, spec });
  const phase = status.phase === "Failed" ? "Failed" : "Completed";
  for (const k of markerKeys(clientId, id, phase, spec.batchId)) await objects.delete(bucket, k);
  if (status.prunedAt === undefined)
    await objects.delete(bucket, archiveKeys.due(completedAtMs(rec.detection), clientId, id));
  await objects.delete(bucket, key);
  return true;
}

export interface ArchivePageOptions {
  /** Only detections of this phase. */
  phase?: ArchivedPhase;
  /** Only detections of this batch (job id). */
  batchId?: string;
  /** Only ids that sort before this one (the cursor: the last id of the previous page). */
  before?: string;
  /** At most this many. */
  limit: number;
  /**
   * Told of each damaged object met: a record (the detection is left out of the page) or a verdict (the
   * detection is listed with verdict null).
   */
  onUnreadable?: (u: { id: string; what: "record" | "verdict"; key: string; reason: string }) => void;
}

/** Runs `fn` over `items` with at most `limit` at once, keeping the order of the results. */
async function mapLimited<T, R>(items: readonly T[], limit: number, fn: (t: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(limit, items.length) }, async () => {
      while (next < items.length) {
        const i = next++;
        out[i] = await fn(items[i]!);
      }
    }),
  );
  return out;
}

/**
 * One page of a client's archived detections, newest first: a start-after listing of the record keys (or
 * of the status / batch markers when filtered) from the cursor, then the page's records read in parallel.
 * The cost is the page, not the history: the listing starts at the cursor and stops after the page.
 */
export async function listArchivedDetections(
  objects: ObjectStore,
  bucket: string,
  clientId: string,
  opts: ArchivePageOptions,
): Promise<Detection[]> {
  const c = archiveClientSegment(clientId);
  const b = opts.batchId === undefined ? undefined : batchSegment(opts.batchId);
  const onRecords = opts.phase === undefined && b === undefined;
  const prefix = onRecords
    ? prefixes.records(c)
    : b === undefined
      ? prefixes.status(c, opts.phase!)
      : opts.phase === undefined
        ? prefixes.batch(c, b)
        : prefixes.batchStatus(c, b, opts.phase);
  const suffix = onRecords ? ".json" : "";
  // A cursor that is no archivable id (a hand-made resource's name) cannot be placed among the keys:
  // list from the newest and skip down to it.
  const startAfter =
    opts.before !== undefined && isArchivable(opts.before)
      ? `${prefix}${pathOf(opts.before)}${suffix}`
      : undefined;
  const out: Detection[] = [];
  let batch: string[] = [];
  const flush = async () => {
    const found = await mapLimited(batch, 16, async (id) => {
      const read = await readRecordAt(objects, bucket, `${prefixes.records(c)}${pathOf(id)}.json`);
      if (read.kind === "invalid")
        opts.onUnreadable?.({ id, what: "record", key: read.key, reason: read.reason });
      if (read.kind !== "ok") return undefined;
      const rec = read.value;
      if (rec.detection.spec.submittedBy !== clientId) return undefined;
      if (opts.batchId !== undefined && rec.detection.spec.batchId !== opts.batchId) return undefined;
      const { detection, unreadableVerdict } = await toDetection(objects, bucket, rec);
      if (unreadableVerdict) opts.onUnreadable?.({ id, what: "verdict", ...unreadableVerdict });
      return detection;
    });
    for (const d of found) if (d && out.length < opts.limit) out.push(d);
    batch = [];
  };
  if (opts.limit <= 0) return out;
  for await (const o of objects.list(bucket, prefix, {
    startAfter,
    pageSize: Math.min(1000, opts.limit + 1),
  })) {
    const leaf = o.key.slice(o.key.lastIndexOf("/") + 1);
    const id = idOfLeaf(suffix && leaf.endsWith(suffix) ? leaf.slice(0, -suffix.length) : leaf);
    if (id === undefined) continue;
    if (opts.before !== undefined && !(id < opts.before)) continue;
    batch.push(id);
    // Read what is still missing from the page; a marker without a record (a deletion cut short) makes
    // the next round read one more.
    if (batch.length >= opts.limit - out.length) {
      await flush();
      if (out.length >= opts.limit) break;
    }
  }
  if (batch.length) await flush();
  return out;
}

/** An archived detection whose retention is due, as its entry in `records-due/` names it. */
export interface DueEntry {
  key: string;
  completedAtMs: number;
  clientSegment: string;
  id: string;
}

/**
 * The archived detections that finished at or before `completedBefore` and are not pruned yet, oldest
 * first (the entries are keyed by completion time, so the listing stops at the first one not yet due and
 * a changed retention period applies to what is archived already).
 */
export async function* dueArchivedDetections(
  objects: ObjectStore,
  bucket: string,
  completedBefore: Date,
): AsyncGenerator<DueEntry> {
  for await (const o of objects.list(bucket, DUE_PREFIX)) {
    const m = /^records-due\/(\d{13})\/([^/]+)\/([^/]+)$/.exec(o.key);
    const id = m ? idOfLeaf(m[3]!) : undefined;
    if (!m || id === undefined) continue;
    const completedAtMs = Number(m[1]);
    if (completedAtMs > completedBefore.getTime()) return;
    yield { key: o.key, completedAtMs, clientSegment: m[2]!, id };
  }
}

/**
 * Retention of one archived detection: removes its files (document, step results, the verdict, its
 * upload) and then its retention entry; the record stays (status, score and the durable fields, as a
 * pruned resource keeps them). Returns how many files went; idempotent.
 */
export async function pruneArchivedDetection(
  objects: ObjectStore,
  bucket: string,
  due: DueEntry,
): Promise<number> {
  const read = await readRecordAt(
    objects,
    bucket,
    `${prefixes.records(due.clientSegment)}${pathOf(due.id)}.json`,
  );
  const removed = read.kind === "ok" ? await removeDetectionFiles(objects, bucket, read.value.detection) : 0;
  await objects.delete(bucket, due.key);
  return removed;
}
