import { CustomObjectsApi, type KubeConfig } from "@kubernetes/client-node";
import type { ListOptions, ResourceStore, WatchEvent, WatchHandle } from "../../core/ports.js";
import { StoreError } from "../../core/ports.js";
import { API_GROUP, API_VERSION, type Resource } from "../../core/resource.js";
import { checkResourceSize, DEFAULT_MAX_RESOURCE_BYTES } from "../../core/resource-size.js";
import { toStoreError } from "./kube-errors.js";
import { watchStream } from "./watch-stream.js";

export interface KubeResourceStoreOptions {
  namespace: string;
  /** e.g. "detections". */
  plural: string;
  /** e.g. "Detection" (for messages). */
  kind: string;
  /** Objects per list page. */
  pageSize?: number;
  /** Server-side length of one watch request before it is resumed. */
  watchRequestSeconds?: number;
  /**
   * The size guard (core/resource-size.ts), checked before a write is sent: the same limit as the
   * standalone store, far below etcd's own. Default DEFAULT_MAX_RESOURCE_BYTES.
   */
  maxObjectBytes?: number;
}

const FIELD_MANAGER = "docverify";

/** Turns a label map into a selector string (`a=b,c=d`). */
export function labelSelector(labels: Record<string, string> | undefined): string | undefined {
  if (!labels || Object.keys(labels).length === 0) return undefined;
  return Object.entries(labels)
    .map(([k, v]) => `${k}=${v}`)
    .join(",");
}

/**
 * ResourceStore over namespaced custom objects of group docverify.io/v1alpha1. Writes carry the
 * resourceVersion they were read with, so the apiserver answers 409 to a stale one (→ Conflict); status is
 * written through the /status subresource; watches resume across request ends and report Gone (410) so the
 * caller relists.
 */
export function createKubeResourceStore<T extends Resource>(
  kc: KubeConfig,
  opts: KubeResourceStoreOptions,
): ResourceStore<T> {
  const api = kc.makeApiClient(CustomObjectsApi);
  const base = { group: API_GROUP, version: API_VERSION, namespace: opts.namespace, plural: opts.plural };
  const what = (name?: string) => (name ? `${opts.kind} ${name}` : `${opts.kind}s`);
  const fail = (verb: string, name?: string) => (err: unknown) => {
    throw toStoreError(err, { verb, what: what(name) });
  };
  const pageSize = opts.pageSize ?? 500;
  const maxBytes = opts.maxObjectBytes ?? DEFAULT_MAX_RESOURCE_BYTES;
  const guard = (obj: T) => checkResourceSize(obj, maxBytes, opts.kind);

  return {
    async create(obj: T): Promise<T> {
      const body = { ...obj, metadata: { ...obj.metadata, namespace: opts.namespace } };
      delete body.metadata.resourceVersion;
      guard(body);
      return (await api
        .createNamespacedCustomObject({ ...base, body, fieldManager: FIELD_MANAGER })
        .catch(fail("create", obj.metadata.name))) as T;
    },

    async get(name: string): Promise<T | undefined> {
      try {
        return (await api.getNamespacedCustomObject({ ...base, name })) as T;
      } catch (err) {
        const e = toStoreError(err, { verb: "get", what: what(name) });
        if (e instanceof StoreError && e.reason === "NotFound") return undefined;
        throw e;
      }
    },

    async list(listOpts: ListOptions = {}): Promise<{ items: T[]; resourceVersion: string }> {
      const items: T[] = [];
      let resourceVersion = "";
      let cont: string | undefined;
      do {
        const page = (await api
          .listNamespacedCustomObject({
            ...base,
            labelSelector: labelSelector(listOpts.labels),
            limit: pageSize,
            _continue: cont,
          })
          .catch(fail("list"))) as {
          items?: T[];
          metadata?: { resourceVersion?: string; _continue?: string; continue?: string };
        };
        items.push(...(page.items ?? []));
        // Every page of one list is the snapshot of the first page's version.
        if (!resourceVersion) resourceVersion = page.metadata?.resourceVersion ?? "";
        cont = page.metadata?.continue ?? page.metadata?._continue;
      } while (cont);
      items.sort((a, b) =>
        a.metadata.name < b.metadata.name ? -1 : a.metadata.name > b.metadata.name ? 1 : 0,
      );
      return { items, resourceVersion };
    },

    async update(obj: T): Promise<T> {
      guard(obj);
      const name = obj.metadata.name;
      return (await api
        .replaceNamespacedCustomObject({ ...base, name, body: obj, fieldManager: FIELD_MANAGER })
        .catch(fail("update", name))) as T;
    },

    async updateStatus(obj: T): Promise<T> {
      guard(obj);
      const name = obj.metadata.name;
      return (await api
        .replaceNamespacedCustomObjectStatus({ ...base, name, body: obj, fieldManager: FIELD_MANAGER })
        .catch(fail("update the status of", name))) as T;
    },

    async delete(name: string): Promise<void> {
      await api
        .deleteNamespacedCustomObject({ ...base, name, propagationPolicy: "Background" })
        .catch(fail("delete", name));
    },

    watch(
      watchOpts: { resourceVersion?: string },
      onEvent: (event: WatchEvent<T>) => void,
      onError: (err: StoreError) => void,
    ): WatchHandle {
      return watchStream<T>(
        kc,
        `/apis/${API_GROUP}/${API_VERSION}/namespaces/${opts.namespace}/${opts.plural}`,
        {
          resourceVersion: watchOpts.resourceVersion,
          what: what(),
          requestSeconds: opts.watchRequestSeconds,
        },
        {
          onEvent: (type, object) => onEvent({ type, object }),
          onError: (err) =>
            onError(
              err instanceof StoreError ? err : new StoreError("Unavailable", err.message, { cause: err }),
            ),
        },
      );
    },
  };
}
