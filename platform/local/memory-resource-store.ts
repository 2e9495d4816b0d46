import { randomUUID } from "node:crypto";
import {
  type ListOptions,
  type ResourceStore,
  StoreError,
  type WatchEvent,
  type WatchHandle,
} from "../../core/ports.js";
import type { Resource } from "../../core/resource.js";
import { checkResourceSize, DEFAULT_MAX_RESOURCE_BYTES } from "../../core/resource-size.js";

/**
 * Kubernetes semantics in memory: resourceVersion, Conflict on a stale write, generation, finalizers and
 * deletionTimestamp, ordered watch from a version with Gone past the remembered window.
 * The durable standalone store (resource-store.ts) persists through the `persist` hook.
 */
export interface MemoryStoreOptions {
  /** How many past events a watch can resume from. */
  historySize?: number;
  now?: () => Date;
  /** Called after every change, before it is visible to readers or watchers. */
  persist?: (change: { type: "put" | "delete"; object: Resource; resourceVersion: number }) => Promise<void>;
  /** Shared counter so resourceVersions grow across several kinds (like etcd's revision). */
  revision?: { value: number };
  /** The size guard (core/resource-size.ts): a larger object is refused with TooLarge. */
  maxObjectBytes?: number;
}

const clone = <T>(v: T): T => structuredClone(v);

function deepFreeze<T>(v: T): T {
  if (v && typeof v === "object" && !Object.isFrozen(v)) {
    Object.freeze(v);
    for (const x of Object.values(v)) deepFreeze(x);
  }
  return v;
}

/** A Kubernetes object name (DNS subdomain form); also safe as a file name. */
export const RESOURCE_NAME_RE = /^(?=.{1,253}$)[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/;

function labelsMatch(obj: Resource, labels?: Record<string, string>): boolean {
  if (!labels) return true;
  const have = obj.metadata.labels ?? {};
  return Object.entries(labels).every(([k, v]) => have[k] === v);
}

export class MemoryResourceStore<T extends Resource> implements ResourceStore<T> {
  private readonly objects = new Map<string, T>();
  private readonly history: { rv: number; event: WatchEvent<T> }[] = [];
  private readonly watchers = new Set<(e: WatchEvent<T>) => void>();
  private readonly historySize: number;
  private readonly now: () => Date;
  private readonly revision: { value: number };
  /** Serialises writes so persistence order = resourceVersion order. */
  private chain: Promise<unknown> = Promise.resolve();
  /** Events of this kind up to this version are no longer in `history` (trimmed, or before a load). */
  private forgottenThrough = 0;
  /** The version of the write being persisted (not yet visible), if any. */
  private inFlight: number | undefined;

  constructor(
    readonly kind: string,
    private readonly opts: MemoryStoreOptions = {},
  ) {
    this.historySize = opts.historySize ?? 10_000;
    this.now = opts.now ?? (() => new Date());
    this.revision = opts.revision ?? { value: 0 };
  }

  /** Loads objects as they were persisted (no events, no persistence). */
  load(objects: T[]): void {
    for (const o of objects) {
      this.objects.set(o.metadata.name, clone(o));
      const rv = Number(o.metadata.resourceVersion ?? 0);
      if (rv > this.revision.value) this.revision.value = rv;
    }
    // What happened before the load (deletions included) is unknown: a watch must start from now.
    this.forgottenThrough = Math.max(this.forgottenThrough, this.revision.value);
  }

  private serial<R>(fn: () => Promise<R>): Promise<R> {
    const run = this.chain.then(fn, fn);
    this.chain = run.catch(() => undefined);
    return run;
  }

  private emit(event: WatchEvent<T>, rv: number): void {
    this.history.push({ rv, event });
    if (this.history.length > this.historySize) {
      const dropped = this.history.splice(0, this.history.length - this.historySize);
      this.forgottenThrough = Math.max(this.forgottenThrough, dropped[dropped.length - 1]?.rv ?? 0);
    }
    for (const w of [...this.watchers]) w(clone(event));
  }

  private async commit(type: "put" | "delete", obj: T, event: WatchEvent<T>["type"]): Promise<T> {
    if (type === "put")
      checkResourceSize(obj, this.opts.maxObjectBytes ?? DEFAULT_MAX_RESOURCE_BYTES, this.kind);
    const rv = ++this.revision.value;
    obj.metadata.resourceVersion = String(rv);
    if (this.opts.persist) {
      this.inFlight = rv;
      try {
        await this.opts.persist({ type, object: obj, resourceVersion: rv });
      } finally {
        this.inFlight = undefined;
      }
    }
    if (type === "put") this.objects.set(obj.metadata.name, obj);
    else this.objects.delete(obj.metadata.name);
    this.emit({ type: event, object: clone(obj) }, rv);
    return clone(obj);
  }

  private current(name: string): T {
    const cur = this.objects.get(name);
    if (!cur) throw new StoreError("NotFound", `${this.kind} ${name} not found`);
    return cur;
  }

  private precondition(cur: T, obj: T): void {
    const want = obj.metadata.resourceVersion;
    if (want !== undefined && want !== cur.metadata.resourceVersion) {
      throw new StoreError(
        "Conflict",
        `Operation cannot be fulfilled on ${this.kind} ${obj.metadata.name}: the object has been modified; please apply your changes to the latest version and try again`,
      );
    }
  }

  create(obj: T): Promise<T> {
    return this.serial(async () => {
      const name = obj.metadata?.name;
      if (!name) throw new StoreError("Invalid", `${this.kind} needs metadata.name`);
      if (!RESOURCE_NAME_RE.test(name)) {
        throw new StoreError(
          "Invalid",
          `${this.kind} name "${name}" is invalid: use at most 253 lowercase letters, digits, '-' and '.', starting and ending with a letter or digit`,
        );
      }
      if (this.objects.has(name))
        throw new StoreError("AlreadyExists", `${this.kind} ${name} already exists`);
      const next = clone(obj);
      next.metadata = {
        ...next.metadata,
        uid: randomUUID(),
        generation: 1,
        creationTimestamp: this.now().toISOString(),
      };
      delete next.metadata.deletionTimestamp;
      return this.commit("put", next, "ADDED");
    });
  }

  /**
   * Reads answer deep-frozen snapshots, made once per version of an object and shared by every reader
   * until it changes (a GET of a detection then costs no copy). A caller that wants to change an object
   * copies it first, as every writer here does.
   */
  async get(name: string): Promise<T | undefined> {
    const o = this.objects.get(name);
    return o ? this.snapshot(o) : undefined;
  }

  private readonly snapshots = new WeakMap<T, T>();

  private snapshot(o: T): T {
    let s = this.snapshots.get(o);
    if (!s) {
      s = deepFreeze(clone(o));
      this.snapshots.set(o, s);
    }
    return s;
  }

  async list(opts: ListOptions = {}): Promise<{ items: T[]; resourceVersion: string }> {
    const items = [...this.objects.values()]
      .filter((o) => labelsMatch(o, opts.labels))
      .sort((a, b) => (a.metadata.name < b.metadata.name ? -1 : a.metadata.name > b.metadata.name ? 1 : 0))
      .map((o) => this.snapshot(o));
    // A write being persisted is not in `items` yet: answer a version below it, so a watch from the
    // returned version still delivers that write.
    const rv = this.inFlight === undefined ? this.revision.value : this.inFlight - 1;
    return { items, resourceVersion: String(rv) };
  }

  update(obj: T): Promise<T> {
    return this.serial(async () => {
      const cur = this.current(obj.metadata.name);
      this.precondition(cur, obj);
      const next = clone(cur);
      const specChanged = JSON.stringify(cur.spec) !== JSON.stringify(obj.spec);
      next.spec = clone(obj.spec);
      next.metadata.labels = clone(obj.metadata.labels);
      next.metadata.annotations = clone(obj.metadata.annotations);
      next.metadata.finalizers = obj.metadata.finalizers?.length ? [...obj.metadata.finalizers] : undefined;
      if (specChanged) next.metadata.generation = (cur.metadata.generation ?? 1) + 1;
      if (next.metadata.deletionTimestamp && !next.metadata.finalizers?.length) {
        return this.commit("delete", next, "DELETED");
      }
      return this.commit("put", next, "MODIFIED");
    });
  }

  updateStatus(obj: T): Promise<T> {
    return this.serial(async () => {
      const cur = this.current(obj.metadata.name);
      this.precondition(cur, obj);
      const next = clone(cur);
      next.status = clone(obj.status);
      return this.commit("put", next, "MODIFIED");
    });
  }

  delete(name: string): Promise<void> {
    return this.serial(async () => {
      const cur = this.current(name);
      if (cur.metadata.finalizers?.length) {
        if (cur.metadata.deletionTimestamp) return;
        const next = clone(cur);
        next.metadata.deletionTimestamp = this.now().toISOString();
        await this.commit("put", next, "MODIFIED");
        return;
      }
      await this.commit("delete", clone(cur), "DELETED");
    });
  }

  watch(
    opts: { resourceVersion?: string },
    onEvent: (event: WatchEvent<T>) => void,
    onError: (err: StoreError) => void,
  ): WatchHandle {
    let stopped = false;
    const deliver = (e: WatchEvent<T>) => {
      if (!stopped) onEvent(e);
    };
    // Snapshot and subscribe synchronously so no event falls between them.
    const from = opts.resourceVersion === undefined ? undefined : Number(opts.resourceVersion);
    let backlog: WatchEvent<T>[];
    if (from === undefined) {
      backlog = [...this.objects.values()].map((o) => ({ type: "ADDED" as const, object: clone(o) }));
    } else {
      if (!Number.isInteger(from) || from < 0) {
        queueMicrotask(() => {
          if (!stopped)
            onError(new StoreError("Invalid", `resourceVersion "${opts.resourceVersion}" is not a version`));
        });
        return { stop: () => (stopped = true) };
      }
      if (from < this.forgottenThrough) {
        const oldest = this.forgottenThrough;
        queueMicrotask(() => {
          if (!stopped) onError(new StoreError("Gone", `too old resource version: ${from} (${oldest})`));
        });
        return { stop: () => (stopped = true) };
      }
      backlog = this.history.filter((h) => h.rv > from).map((h) => clone(h.event));
    }
    const listener = (e: WatchEvent<T>) => deliver(e);
    const pending: WatchEvent<T>[] = [];
    let flushed = false;
    const buffering = (e: WatchEvent<T>) => (flushed ? listener(e) : pending.push(e));
    this.watchers.add(buffering);
    queueMicrotask(() => {
      for (const e of backlog) deliver(e);
      for (const e of pending) deliver(e);
      flushed = true;
    });
    return {
      stop: () => {
        stopped = true;
        this.watchers.delete(buffering);
      },
    };
  }
}
