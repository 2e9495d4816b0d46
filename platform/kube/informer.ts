import { type BackoffPolicy, backoffMs } from "../../core/backoff.js";
import type { ListOptions, ResourceStore, StoreError, WatchEvent, WatchHandle } from "../../core/ports.js";
import type { Resource } from "../../core/resource.js";

export interface InformerOptions {
  /** Told when a watch ends and the cache is listed again, and when a relist fails. */
  log?: { warn(obj: object, msg: string): void; error(obj: object, msg: string): void };
}

/** Between failed relists: 0.5 s, 1 s, 2 s, ... capped at 30 s. */
const RELIST_BACKOFF: BackoffPolicy = { firstMs: 500, maxMs: 30_000 };

/** A store whose listing is served from an informer's cache; start() fills it, stop() ends its watch. */
export interface InformerStore<T extends Resource> extends ResourceStore<T> {
  /**
   * Lists and starts watching; resolves once the cache holds the first listing. A failed listing is
   * retried with backoff (the promise waits for it); until then `list` asks the store itself.
   */
  start(): Promise<void>;
  stop(): void;
  /** True once the first listing is in the cache. */
  synced(): boolean;
}

/** Versions are etcd revisions (decimal strings) on every store here; an unknown form counts as newer. */
function newer(a: Resource, than: Resource | undefined): boolean {
  if (!than) return true;
  const x = Number(a.metadata.resourceVersion);
  const y = Number(than.metadata.resourceVersion);
  return !(Number.isFinite(x) && Number.isFinite(y)) || x >= y;
}

function labelsMatch(obj: Resource, labels?: Record<string, string>): boolean {
  if (!labels) return true;
  const have = obj.metadata.labels ?? {};
  return Object.entries(labels).every(([k, v]) => have[k] === v);
}

/**
 * An informer in the manner of client-go's: it lists a kind once, then keeps a cache of it current from a
 * watch (a watch that ends, 410 Gone included, is replaced by a new list and watch, with backoff when the
 * list fails). The store it returns answers `list` from that cache, applying the label selector in
 * memory, so a request that lists (GET /v1/detection) costs the apiserver nothing; reads of one object
 * (`get`), writes and watches go to the underlying store. The store's own writes update the cache at
 * once (a create is listed by this replica right away); other replicas' writes arrive with the watch, a
 * few milliseconds later. The cache holds the live resources only: finished detections are archived.
 */
export function createInformerStore<T extends Resource>(
  store: ResourceStore<T>,
  opts: InformerOptions = {},
): InformerStore<T> {
  const cache = new Map<string, T>();
  let version = "";
  let isSynced = false;
  let stopped = false;
  let watch: WatchHandle | undefined;
  let failures = 0;
  let retry: NodeJS.Timeout | undefined;
  let firstSync: () => void = () => {};
  const synced = new Promise<void>((resolve) => {
    firstSync = resolve;
  });

  const upsert = (obj: T) => {
    const name = obj.metadata.name;
    if (newer(obj, cache.get(name))) cache.set(name, obj);
  };

  function onEvent(e: WatchEvent<T>): void {
    if (e.object.metadata.resourceVersion) version = e.object.metadata.resourceVersion;
    if (e.type === "DELETED") cache.delete(e.object.metadata.name);
    else upsert(e.object);
  }

  async function listAndWatch(): Promise<void> {
    if (stopped) return;
    watch?.stop();
    const { items, resourceVersion } = await store.list();
    cache.clear();
    for (const o of items) cache.set(o.metadata.name, o);
    version = resourceVersion;
    isSynced = true;
    firstSync();
    failures = 0;
    if (stopped) return;
    watch = store.watch({ resourceVersion }, onEvent, (err: StoreError) => {
      opts.log?.warn({ err: err.message }, "informer watch ended; listing again");
      relist();
    });
  }

  function relist(): void {
    if (stopped) return;
    void listAndWatch().catch((err: unknown) => {
      failures++;
      const waitMs = backoffMs(failures, RELIST_BACKOFF);
      opts.log?.error({ err, retryInMs: waitMs }, "informer relist failed; retrying");
      retry = setTimeout(relist, waitMs);
      retry.unref();
    });
  }

  return {
    start() {
      relist();
      return synced;
    },
    stop() {
      stopped = true;
      watch?.stop();
      if (retry) clearTimeout(retry);
    },
    synced: () => isSynced,

    async list(listOpts: ListOptions = {}) {
      // Before the first listing (not started, or it failed), or when asked for a consistent read, ask the store itself.
      if (!isSynced || listOpts.consistent) return store.list(listOpts);
      const items = [...cache.values()]
        .filter((o) => labelsMatch(o, listOpts.labels))
        .sort((a, b) => (a.metadata.name < b.metadata.name ? -1 : a.metadata.name > b.metadata.name ? 1 : 0));
      return { items, resourceVersion: version };
    },
    get: (name) => store.get(name),
    async create(obj) {
      const created = await store.create(obj);
      upsert(created);
      return created;
    },
    async update(obj) {
      const updated = await store.update(obj);
      upsert(updated);
      return updated;
    },
    async updateStatus(obj) {
      const updated = await store.updateStatus(obj);
      upsert(updated);
      return updated;
    },
    async delete(name) {
      const before = cache.get(name);
      await store.delete(name);
      // Gone, or being deleted (its finalizer runs): until the watch brings the deletion (or the
      // deletionTimestamp), the cached copy is marked as being deleted, so readers stop showing it now.
      const cached = cache.get(name);
      if (cached && cached === before) {
        cache.set(name, {
          ...cached,
          metadata: { ...cached.metadata, deletionTimestamp: new Date().toISOString() },
        });
      }
    },
    watch: (watchOpts, onWatchEvent, onError) => store.watch(watchOpts, onWatchEvent, onError),
  };
}
