import { CoordinationV1Api, type KubeConfig, type V1Lease } from "@kubernetes/client-node";
import { StoreError } from "../../core/ports.js";
import type { Logger } from "../../core/step-context.js";
import { toStoreError } from "./kube-errors.js";

/**
 * Leader election on a coordination.k8s.io/v1 Lease, as client-go's leaderelection does it: the leader
 * renews the Lease every retryPeriod; it stops leading when it could not renew for renewDeadline; another
 * candidate takes over once it has seen the same record unchanged for leaseDuration (measured on its own
 * clock, so clock skew between replicas does not matter). Every write carries the resourceVersion it read.
 */
export interface LeaderElectionOptions {
  namespace: string;
  /** Lease name, e.g. "docverify-operator". */
  name: string;
  /** This replica, e.g. its Pod name + a random suffix. */
  identity: string;
  leaseDurationMs?: number;
  renewDeadlineMs?: number;
  retryPeriodMs?: number;
  log: Logger;
  onStartedLeading: () => void | Promise<void>;
  /** Leadership was lost (renewal failed past renewDeadline, or another replica holds the Lease). */
  onStoppedLeading: () => void | Promise<void>;
  onNewLeader?: (identity: string) => void;
  now?: () => number;
}

export interface LeaderElector {
  /** Campaigns until stop(); leads whenever it holds the Lease. */
  start(): void;
  isLeader(): boolean;
  /** Stops campaigning; a leader releases the Lease so another replica takes over at once. */
  stop(): Promise<void>;
}

export const LEADER_ELECTION_DEFAULTS = {
  leaseDurationMs: 15_000,
  renewDeadlineMs: 10_000,
  retryPeriodMs: 2_000,
};

export type LeaseAction = "create" | "renew" | "takeover" | "wait";

/**
 * A Lease's spec as it travels: times are MicroTime strings (`2006-01-02T15:04:05.000000Z`). The typed
 * client declares them as Date but passes strings through; a Date would be sent with milliseconds, which
 * the apiserver refuses for a MicroTime.
 */
export interface LeaseSpec {
  holderIdentity?: string;
  leaseDurationSeconds?: number;
  acquireTime?: string;
  renewTime?: string;
  leaseTransitions?: number;
}

/** RFC 3339 with microseconds, as metav1.MicroTime wants it. */
export function microTime(d: Date): string {
  return d.toISOString().replace(/\.(\d{3})Z$/, ".$1000Z");
}

/**
 * What a candidate does with the Lease it read: create it (none yet), renew it (it holds it), take it over
 * (released, or unchanged for longer than its duration since `observedAtMs`), or wait (someone else leads).
 */
export function leaseAction(args: {
  spec: LeaseSpec | undefined;
  identity: string;
  observedAtMs: number;
  nowMs: number;
  leaseDurationMs: number;
}): LeaseAction {
  const { spec, identity } = args;
  if (!spec) return "create";
  if (spec.holderIdentity === identity) return "renew";
  if (!spec.holderIdentity) return "takeover";
  const durationMs = (spec.leaseDurationSeconds ?? args.leaseDurationMs / 1000) * 1000;
  return args.observedAtMs + durationMs <= args.nowMs ? "takeover" : "wait";
}

/** The Lease spec after `action` by `identity` at `now`. */
export function nextLeaseSpec(
  current: LeaseSpec | undefined,
  action: Exclude<LeaseAction, "wait">,
  identity: string,
  now: Date,
  leaseDurationMs: number,
): LeaseSpec {
  const leaseDurationSeconds = Math.max(1, Math.round(leaseDurationMs / 1000));
  if (action === "renew" && current) {
    return { ...current, holderIdentity: identity, leaseDurationSeconds, renewTime: microTime(now) };
  }
  return {
    holderIdentity: identity,
    leaseDurationSeconds,
    acquireTime: microTime(now),
    renewTime: microTime(now),
    leaseTransitions: action === "create" ? 0 : (current?.leaseTransitions ?? 0) + 1,
  };
}

/** A key that changes whenever the record does (holder or renew time). */
function recordKey(spec: LeaseSpec | undefined): string {
  const t = spec?.renewTime as unknown;
  const renew = t instanceof Date ? t.toISOString() : String(t ?? "");
  return `${spec?.holderIdentity ?? ""}|${renew}|${spec?.leaseTransitions ?? 0}`;
}
const specOf = (lease: V1Lease | undefined) => lease?.spec as LeaseSpec | undefined;

export function createLeaderElector(kc: KubeConfig, opts: LeaderElectionOptions): LeaderElector {
  const api = kc.makeApiClient(CoordinationV1Api);
  const leaseDurationMs = opts.leaseDurationMs ?? LEADER_ELECTION_DEFAULTS.leaseDurationMs;
  const renewDeadlineMs = opts.renewDeadlineMs ?? LEADER_ELECTION_DEFAULTS.renewDeadlineMs;
  const retryPeriodMs = opts.retryPeriodMs ?? LEADER_ELECTION_DEFAULTS.retryPeriodMs;
  if (!(leaseDurationMs > renewDeadlineMs && renewDeadlineMs > retryPeriodMs)) {
    throw new Error("Leader election needs leaseDuration > renewDeadline > retryPeriod.");
  }
  const now = opts.now ?? Date.now;
  const { namespace, name, identity, log } = opts;
  let leader = false;
  let stopped = false;
  let loop: Promise<void> | undefined;
  let wake: (() => void) | undefined;
  let observed = { key: "", atMs: 0 };
  let lastLeader = "";

  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      const t = setTimeout(done, ms);
      function done() {
        clearTimeout(t);
        wake = undefined;
        resolve();
      }
      wake = done;
    });
  const jitter = (ms: number) => ms * (1 + Math.random() * 0.2);

  const read = async (): Promise<V1Lease | undefined> => {
    try {
      return await api.readNamespacedLease({ namespace, name });
    } catch (err) {
      const e = toStoreError(err, { verb: "get", what: `Lease ${name}` });
      if (e instanceof StoreError && e.reason === "NotFound") return undefined;
      throw e;
    }
  };

  /** One attempt: whether this replica holds the Lease afterwards, and who held it when read. */
  const tryAcquireOrRenew = async (): Promise<{ held: boolean; holder: string }> => {
    const lease = await read();
    const key = recordKey(specOf(lease));
    if (key !== observed.key) observed = { key, atMs: now() };
    const holder = lease?.spec?.holderIdentity ?? "";
    if (holder && holder !== lastLeader) {
      lastLeader = holder;
      opts.onNewLeader?.(holder);
    }
    const action = leaseAction({
      spec: specOf(lease),
      identity,
      observedAtMs: observed.atMs,
      nowMs: now(),
      leaseDurationMs,
    });
    if (action === "wait") return { held: false, holder };
    const spec = nextLeaseSpec(specOf(lease), action, identity, new Date(now()), leaseDurationMs);
    try {
      if (action === "create") {
        await api.createNamespacedLease({
          namespace,
          body: {
            apiVersion: "coordination.k8s.io/v1",
            kind: "Lease",
            metadata: { name, namespace },
            spec,
          } as unknown as V1Lease,
        });
      } else {
        await api.replaceNamespacedLease({
          namespace,
          name,
          body: { ...lease, spec } as unknown as V1Lease,
        });
      }
    } catch (err) {
      const e = toStoreError(err, { verb: action === "create" ? "create" : "update", what: `Lease ${name}` });
      // Another candidate wrote first: it leads (or renewed); look again next round.
      if (e instanceof StoreError && (e.reason === "Conflict" || e.reason === "AlreadyExists"))
        return { held: false, holder };
      throw e;
    }
    observed = { key: recordKey(spec), atMs: now() };
    if (action !== "renew") {
      lastLeader = identity;
      opts.onNewLeader?.(identity);
    }
    return { held: true, holder: identity };
  };

  /** Errors (apiserver unreachable, ...) count as "not held, holder unknown". */
  const attempt = async (): Promise<{ held: boolean; holder: string }> => {
    try {
      return await tryAcquireOrRenew();
    } catch (err) {
      log.warn(
        { err: err instanceof Error ? err.message : String(err), lease: name },
        "lease attempt failed",
      );
      return { held: false, holder: "" };
    }
  };

  const campaign = async (): Promise<void> => {
    while (!stopped) {
      // Acquire.
      while (!stopped && !(await attempt()).held) await sleep(jitter(retryPeriodMs));
      if (stopped) return;
      leader = true;
      log.info({ lease: name, identity }, "became the leader");
      await opts.onStartedLeading();
      // Renew until stop() or a renewal deadline passes.
      let renewedAt = now();
      while (!stopped) {
        await sleep(retryPeriodMs);
        if (stopped) break;
        const result = await attempt();
        if (result.held) {
          renewedAt = now();
          continue;
        }
        const heldByOther = result.holder !== "" && result.holder !== identity;
        if (heldByOther || now() - renewedAt >= renewDeadlineMs) {
          leader = false;
          log.warn({ lease: name, identity }, "lost the leadership");
          await opts.onStoppedLeading();
          break;
        }
      }
    }
  };

  const release = async (): Promise<void> => {
    try {
      const lease = await read();
      if (lease?.spec?.holderIdentity !== identity) return;
      const t = microTime(new Date(now()));
      await api.replaceNamespacedLease({
        namespace,
        name,
        body: {
          ...lease,
          spec: { ...lease.spec, holderIdentity: "", leaseDurationSeconds: 1, renewTime: t, acquireTime: t },
        } as unknown as V1Lease,
      });
      log.info({ lease: name, identity }, "released the lease");
    } catch (err) {
      log.warn(
        { err: err instanceof Error ? err.message : String(err), lease: name },
        "could not release the lease",
      );
    }
  };

  return {
    start() {
      if (loop) return;
      loop = campaign().catch((err: unknown) => {
        log.error({ err }, "leader election stopped on an error");
      });
    },
    isLeader: () => leader,
    async stop() {
      stopped = true;
      wake?.();
      await loop;
      if (leader) {
        leader = false;
        await release();
      }
    },
  };
}
