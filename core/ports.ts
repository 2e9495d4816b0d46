/**
 * Ports: the interfaces the api, operator, checks and agent depend on. Adapters live in platform/
 * (local = standalone, kube/s3/redis = cluster); only bin/ wires them.
 */
import type { Readable } from "node:stream";
import type { Priority, StepName } from "./detection.js";
import type { Resource } from "./resource.js";

// ---------------------------------------------------------------------------------------------
// Resource store (Kubernetes semantics)
// ---------------------------------------------------------------------------------------------

export type StoreErrorReason =
  | "NotFound"
  | "AlreadyExists"
  | "Conflict"
  | "Gone"
  | "Invalid"
  | "TooLarge"
  | "Unavailable";

/**
 * Errors of a ResourceStore. Conflict = stale resourceVersion; Gone = watch resourceVersion too old;
 * TooLarge = the object is over the size guard (core/resource-size.ts), refused before it is written.
 */
export class StoreError extends Error {
  override name = "StoreError";
  constructor(
    readonly reason: StoreErrorReason,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}
export const isStoreError = (e: unknown, reason?: StoreErrorReason): e is StoreError =>
  e instanceof StoreError && (reason === undefined || e.reason === reason);

export type WatchEventType = "ADDED" | "MODIFIED" | "DELETED";
export interface WatchEvent<T> {
  type: WatchEventType;
  object: T;
}

export interface ListOptions {
  /** Exact-match label selector (every entry must match). */
  labels?: Record<string, string>;
  /**
   * Read from the store itself, never from a cache that may lag other writers (an informer): the
   * idempotency lookup (api/idempotency.ts) must see a create another replica just answered.
   */
  consistent?: boolean;
}

export interface WatchHandle {
  stop(): void;
}

/**
 * A namespaced collection of one kind, with the semantics of the Kubernetes API:
 * - create sets metadata.uid, resourceVersion, generation = 1, creationTimestamp; AlreadyExists on a taken name.
 * - every write bumps resourceVersion (a decimal string that grows across the whole store);
 *   a write whose metadata.resourceVersion is set and stale fails with Conflict.
 * - update writes metadata (labels, annotations, finalizers) and spec; status is ignored. generation grows
 *   when spec changes. updateStatus writes status only.
 * - delete: without finalizers the object goes at once (DELETED event); with finalizers it gets
 *   metadata.deletionTimestamp (MODIFIED event) and goes when an update empties its finalizers.
 * - watch delivers every change after `resourceVersion` (all current objects as ADDED when omitted), in
 *   order; Gone (via onError) when that version is older than the store remembers: relist and watch again.
 * - objects returned by get and list are read-only: an adapter may share (and freeze) them between callers,
 *   so copy one before changing it.
 * - a write of an object larger than the store's size guard (core/resource-size.ts, the same in every
 *   adapter) fails with TooLarge and changes nothing.
 */
export interface ResourceStore<T extends Resource> {
  create(obj: T): Promise<T>;
  get(name: string): Promise<T | undefined>;
  list(opts?: ListOptions): Promise<{ items: T[]; resourceVersion: string }>;
  update(obj: T): Promise<T>;
  updateStatus(obj: T): Promise<T>;
  delete(name: string): Promise<void>;
  watch(
    opts: { resourceVersion?: string },
    onEvent: (event: WatchEvent<T>) => void,
    onError: (err: StoreError) => void,
  ): WatchHandle;
}

// ---------------------------------------------------------------------------------------------
// Object store (S3 semantics)
// ---------------------------------------------------------------------------------------------

export interface ObjectInfo {
  key: string;
  size: number;
  contentType?: string;
  lastModified: Date;
  metadata?: Record<string, string>;
}

export class ObjectNotFoundError extends Error {
  override name = "ObjectNotFoundError";
  constructor(
    readonly bucket: string,
    readonly key: string,
  ) {
    super(`No object ${key} in bucket ${bucket}.`);
  }
}

export interface PutOptions {
  contentType?: string;
  metadata?: Record<string, string>;
}

export interface ListObjectsOptions {
  /** Only keys after this one (exclusive, in key order): S3's `start-after`. Need not be a key itself. */
  startAfter?: string;
  /**
   * Keys fetched per request (S3's max-keys, at most 1000): a caller that reads one page of a large
   * listing asks for about that many, so the store reads no more than the page.
   */
  pageSize?: number;
}

export interface ObjectStore {
  /** Creates the bucket when missing. */
  ensureBucket(bucket: string): Promise<void>;
  put(
    bucket: string,
    key: string,
    body: Buffer | string | Readable,
    opts?: PutOptions,
  ): Promise<{ size: number }>;
  /** Whole object; ObjectNotFoundError when missing. */
  get(bucket: string, key: string): Promise<Buffer>;
  getStream(bucket: string, key: string): Promise<Readable>;
  stat(bucket: string, key: string): Promise<ObjectInfo | undefined>;
  /**
   * Every object under prefix, in key order (pages through large listings), or only those after
   * `startAfter`. A caller may stop early: the store reads no further than the pages it was asked for.
   */
  list(bucket: string, prefix: string, opts?: ListObjectsOptions): AsyncIterable<ObjectInfo>;
  delete(bucket: string, key: string): Promise<void>;
  /** Deletes every object under prefix; returns how many. */
  deletePrefix(bucket: string, prefix: string): Promise<number>;
  /**
   * A URL a client can PUT the object's bytes to without further credentials, valid `expiresSeconds`.
   * Undefined when the store cannot presign (standalone: the API signs its own upload URLs).
   */
  presignPut?(bucket: string, key: string, expiresSeconds: number): Promise<string>;
}

// ---------------------------------------------------------------------------------------------
// Scheduler (admission by priority and capacity, exactly once per key)
// ---------------------------------------------------------------------------------------------

export interface Scheduler {
  /**
   * Asks for a slot for `key` (a detection's uid or name). Idempotent: a key already waiting or
   * admitted is not queued twice. Higher priority is admitted first (interactive > batch > sample),
   * FIFO within a priority.
   */
  submit(key: string, priority: Priority): Promise<void>;
  /** True while `key` holds a slot. */
  isAdmitted(key: string): Promise<boolean>;
  /** Gives the slot back (or forgets a waiting key). Idempotent. */
  release(key: string): Promise<void>;
  /** Called when a key is admitted (the reconciler requeues it). */
  onAdmitted(listener: (key: string) => void): void;
  /** Figures for metrics. */
  stats(): Promise<{ waiting: number; admitted: number; capacity: number }>;
  close(): Promise<void>;
}

// ---------------------------------------------------------------------------------------------
// Workload runner (one step of one detection)
// ---------------------------------------------------------------------------------------------

export interface WorkloadSpec {
  /** Deterministic: `<detection>-<step>-<attempt>`. */
  name: string;
  step: StepName;
  /** The detection that owns the workload (ownerReference in the cluster). */
  owner: { name: string; uid?: string };
  /** Environment of the step process (configuration + DOCVERIFY_STEP_INPUT). */
  env: Record<string, string>;
  /** Hard limit: the workload is killed and reported failed with reason DeadlineExceeded. */
  timeoutSeconds: number;
}

export type WorkloadState = "Pending" | "Running" | "Succeeded" | "Failed";

export interface WorkloadStatus {
  name: string;
  step: StepName;
  owner: string;
  state: WorkloadState;
  exitCode?: number;
  /** Why it failed, as a token: Error, DeadlineExceeded, OOMKilled, Lost, ... */
  reason?: string;
  /** The step's summary line (≤ 4 KB; standalone: last stdout line; cluster: termination message). */
  message?: string;
  startedAt?: string;
  finishedAt?: string;
}

export interface WorkloadRunner {
  /** Starts the workload; a workload of that name that already exists is success (no second start). */
  start(spec: WorkloadSpec): Promise<void>;
  /** Undefined when no workload of that name exists (never started, deleted, or lost with a restart). */
  get(name: string): Promise<WorkloadStatus | undefined>;
  /** Removes a finished workload or kills a running one. Idempotent. */
  delete(name: string): Promise<void>;
  /** Called with the owning detection's name when one of its workloads changes state. */
  onChange(listener: (owner: string) => void): void;
  close(): Promise<void>;
}

// ---------------------------------------------------------------------------------------------
// Clock
// ---------------------------------------------------------------------------------------------

export interface Clock {
  now(): Date;
}
export const systemClock: Clock = { now: () => new Date() };

// ---------------------------------------------------------------------------------------------
// Webhook sender (one HTTP attempt of one delivery; operator/webhook-deliverer.ts decides the rest)
// ---------------------------------------------------------------------------------------------

/** How one attempt ended (core/webhooks.ts ATTEMPT_OUTCOMES, but the sender never says endpoint_removed). */
export interface WebhookSendResult {
  outcome: "delivered" | "http_error" | "redirect" | "refused" | "timeout" | "unreachable" | "too_large";
  /** The receiver's HTTP status, when it answered. */
  status?: number;
  /** One sentence for the delivery log. */
  message: string;
  durationMs: number;
}

/**
 * POSTs one signed delivery under the address policy of source downloads (checked on every attempt,
 * redirects never followed), with a deadline and a cap on the answer read. Never throws for what the
 * receiver does.
 */
export interface WebhookSender {
  send(req: { url: string; headers: Record<string, string>; body: string }): Promise<WebhookSendResult>;
  close(): Promise<void>;
}
