import { type KubeConfig, Watch } from "@kubernetes/client-node";
import { type BackoffPolicy, backoffMs } from "../../core/backoff.js";
import { StoreError, type WatchEventType, type WatchHandle } from "../../core/ports.js";
import { isGoneStatus, toStoreError } from "./kube-errors.js";

export interface WatchStreamOptions {
  /** Start after this version; undefined = every current object as ADDED, then changes. */
  resourceVersion?: string;
  labelSelector?: string;
  /** Server-side duration of one watch request; the stream resumes from the last version after it. */
  requestSeconds?: number;
  /** What the error messages call the collection, e.g. "Detections". */
  what: string;
}

export interface WatchStreamHandlers<T> {
  onEvent(type: WatchEventType, object: T): void;
  /** The stream ended for good: Gone (list again and watch from the list's version) or another error. */
  onError(err: Error): void;
}

/** Between attempts to resume a dropped watch: 0.5 s, 1 s, 2 s (then the caller relists). */
const RESUME_BACKOFF: BackoffPolicy = { firstMs: 500, maxMs: 2_000 };

/**
 * A watch on one collection that survives the apiserver closing the request: it resumes from the last
 * version it saw (bookmarks included), so no event is lost or repeated. It ends with onError on 410 Gone
 * (the version is compacted away: the caller relists) and on any other failure (the caller decides).
 */
export function watchStream<T extends { metadata?: { resourceVersion?: string } }>(
  kc: KubeConfig,
  path: string,
  opts: WatchStreamOptions,
  handlers: WatchStreamHandlers<T>,
): WatchHandle {
  let stopped = false;
  let current: AbortController | undefined;
  let lastVersion = opts.resourceVersion;
  // Below the client's 30 s inactivity timeout, so a quiet watch ends normally and is resumed.
  const requestSeconds = opts.requestSeconds ?? 25;
  let failuresInARow = 0;

  const fail = (err: Error) => {
    if (stopped) return;
    stopped = true;
    current?.abort();
    handlers.onError(err);
  };

  const start = () => {
    if (stopped) return;
    const watch = new Watch(kc);
    const query: Record<string, string | number | boolean | undefined> = {
      allowWatchBookmarks: true,
      timeoutSeconds: requestSeconds,
      resourceVersion: lastVersion,
      labelSelector: opts.labelSelector,
    };
    watch
      .watch(
        path,
        query,
        (type: string, obj: unknown) => {
          if (stopped) return;
          failuresInARow = 0;
          if (type === "ERROR") {
            fail(
              isGoneStatus(obj)
                ? new StoreError(
                    "Gone",
                    `The watch of ${opts.what} expired (${statusMessage(obj)}); list again`,
                  )
                : toStoreError(
                    { code: (obj as { code?: number })?.code, body: obj },
                    {
                      verb: "watch",
                      what: opts.what,
                    },
                  ),
            );
            return;
          }
          const o = obj as T;
          const rv = o?.metadata?.resourceVersion;
          if (rv) lastVersion = rv;
          if (type === "BOOKMARK") return;
          if (type === "ADDED" || type === "MODIFIED" || type === "DELETED") handlers.onEvent(type, o);
        },
        (err: unknown) => {
          current = undefined;
          if (stopped) return;
          if (!err) {
            // The server ended the request (timeoutSeconds): resume from the last version seen.
            failuresInARow = 0;
            setImmediate(start);
            return;
          }
          const mapped = toStoreError(err, { verb: "watch", what: opts.what });
          // A dropped connection or a silent one: resume from the last version (a version that is too old
          // then answers 410); give up after a few failures in a row so the caller can relist.
          if (mapped instanceof StoreError && mapped.reason === "Unavailable" && failuresInARow < 3) {
            failuresInARow++;
            setTimeout(start, backoffMs(failuresInARow, RESUME_BACKOFF)).unref();
            return;
          }
          fail(mapped);
        },
      )
      .then(
        (ac) => {
          if (stopped) ac.abort();
          else current = ac;
        },
        (err: unknown) => fail(toStoreError(err, { verb: "watch", what: opts.what })),
      );
  };

  start();
  return {
    stop: () => {
      stopped = true;
      current?.abort();
    },
  };
}

function statusMessage(obj: unknown): string {
  const m = (obj as { message?: unknown })?.message;
  return typeof m === "string" ? m : "410 Gone";
}
