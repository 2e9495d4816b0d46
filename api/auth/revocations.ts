import { CLIENT_REVOCATION } from "../../core/client-revocation.js";
import type { ObjectStore } from "../../core/ports.js";
import type { Logger } from "../../core/step-context.js";
import { describeStoredRead, readStored, writeStored } from "../../core/stored.js";

/**
 * Which clients' credentials issued before some instant are void (core/client-revocation.ts): kept in
 * memory for the per-request check, written to and read from the object store so every replica and a
 * restarted service know it. The clients file's watcher calls `revoke` for each removed client and
 * `refresh` for each client added (back).
 */
export interface ClientRevocations {
  /** Milliseconds since the epoch before which `clientId`'s credentials were issued in vain, if any. */
  notBefore(clientId: string): number | undefined;
  /** Records that `clientId` was removed at `at` (later instants win; durable before it resolves). */
  revoke(clientId: string, at: Date): Promise<void>;
  /** Reads the stored records of `clientIds` (at start, and for clients added back). */
  refresh(clientIds: readonly string[]): Promise<void>;
}

/** In memory only (tests of other parts, and the fallback when nothing is wired). */
export function memoryRevocations(): ClientRevocations {
  const byClient = new Map<string, number>();
  return {
    notBefore: (id) => byClient.get(id),
    async revoke(id, at) {
      byClient.set(id, Math.max(byClient.get(id) ?? 0, at.getTime()));
    },
    async refresh() {},
  };
}

export function storedRevocations(objects: ObjectStore, bucket: string, log: Logger): ClientRevocations {
  const known = new Map<string, number>();
  return {
    notBefore: (id) => known.get(id),
    async revoke(id, at) {
      const t = Math.max(known.get(id) ?? 0, at.getTime());
      known.set(id, t);
      const stored = await readStored(objects, bucket, CLIENT_REVOCATION, id);
      const before = stored.kind === "ok" ? stored.value.not_before : 0;
      if (before >= t) {
        known.set(id, before);
        return;
      }
      await writeStored(objects, bucket, CLIENT_REVOCATION, { client_id: id, not_before: t }, id);
    },
    async refresh(ids) {
      for (const id of ids) {
        const stored = await readStored(objects, bucket, CLIENT_REVOCATION, id);
        if (stored.kind === "ok" && stored.value.client_id === id) {
          known.set(id, Math.max(known.get(id) ?? 0, stored.value.not_before));
        } else if (stored.kind === "invalid") {
          log.error(
            { clientId: id },
            `${describeStoredRead(CLIENT_REVOCATION.what, stored)} Credentials issued to ${id} before it was last removed are not refused until it is fixed or removed.`,
          );
        }
      }
    },
  };
}

/**
 * The clients file watcher's `onChange` (api/auth/clients-reload.ts): records each removed client's
 * removal, and reads the records of clients added (back), before the new clients are in use.
 */
export const recordClientChanges =
  (revocations: ClientRevocations, now: () => Date) =>
  async ({ added, removed }: { added: string[]; removed: string[] }): Promise<void> => {
    const at = now();
    for (const id of removed) await revocations.revoke(id, at);
    await revocations.refresh(added);
  };
