import {
  canonicalJson,
  type DetectionPolicy,
  type PolicySource,
  policyInForce,
  policyStatusFor,
} from "../core/detection-policy.js";
import { type Clock, isStoreError, type ResourceStore } from "../core/ports.js";
import type { Logger } from "../core/step-context.js";
import { createControllerLoop, type ReconcileResult } from "./controller-loop.js";

/**
 * The DetectionPolicy reconciler (issue 26, docs/tuning.md): validates every change of a policy resource and
 * writes its status (conditions Valid and InUse with the observed generation, and the version in force). An
 * invalid policy is refused with the field that is wrong in the Valid condition's message and an error log
 * line; the version in force before stays in force. Level-triggered and idempotent: the status is a pure
 * function of the spec and the status before (core/detection-policy.ts, `policyStatusFor`).
 */
export function createPolicyReconciler(deps: {
  store: ResourceStore<DetectionPolicy>;
  clock: Clock;
  log: Logger;
}) {
  async function reconcile(name: string): Promise<ReconcileResult> {
    const p = await deps.store.get(name);
    if (!p) return {};
    const status = policyStatusFor(p, deps.clock.now());
    // Compared with sorted keys: the apiserver gives the status back with its keys in its own order.
    if (canonicalJson(p.status ?? {}) === canonicalJson(status)) return {};
    const valid = status.conditions?.find((c) => c.type === "Valid");
    const log = deps.log.child({ policy: name, generation: p.metadata.generation });
    if (valid?.status === "False")
      log.error(
        { problem: valid.message, inForce: status.inForce?.version ?? null },
        "detection policy refused; the version in force stays",
      );
    else if (status.inForce?.version !== p.status?.inForce?.version)
      log.info({ version: status.inForce?.version }, "detection policy in force");
    try {
      await deps.store.updateStatus({ ...p, status });
    } catch (err) {
      if (isStoreError(err, "Conflict")) return { requeue: true };
      if (isStoreError(err, "NotFound")) return {};
      throw err;
    }
    return {};
  }
  return { reconcile };
}

/** Drives the policy reconciler on the controller loop: every policy event enqueues that policy. */
export function createPolicyController(opts: {
  store: ResourceStore<DetectionPolicy>;
  clock: Clock;
  log: Logger;
  resyncMs?: number;
}) {
  const reconciler = createPolicyReconciler(opts);
  const loop = createControllerLoop({
    kind: "policy",
    reconcile: (name) => reconciler.reconcile(name),
    concurrency: 1,
    log: opts.log,
    resyncMs: opts.resyncMs,
  });
  loop.watch(opts.store, "detectionpolicies", (p) => loop.queue.add(p.metadata.name), { resync: true });
  return {
    queue: loop.queue,
    reconciler,
    async start(): Promise<void> {
      await loop.start();
      opts.log.info("detection policy controller started");
    },
    stop: loop.stop,
  };
}

/** The operator's source of policies: the version in force of a policy resource. */
export function policySourceOf(store: ResourceStore<DetectionPolicy>): PolicySource {
  return {
    async inForce(name) {
      return policyInForce(await store.get(name));
    },
  };
}
