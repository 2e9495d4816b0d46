import { Counter, Gauge, type Registry } from "prom-client";

/** A metric of `registry` by name, created on first use (createApp may run more than once per registry). */
function once<T>(registry: Registry, name: string, make: () => T): T {
  return (registry.getSingleMetric(name) as T | undefined) ?? make();
}

export interface AuthMetrics {
  throttled: Counter<"reason">;
  failures: Counter;
  counterErrors: Counter;
}

/** Prometheus metrics of POST /token throttling and the rate limit. */
export function authMetrics(
  registry: Registry,
  gate: () => { running: number; queued: number },
): AuthMetrics {
  once(
    registry,
    "docverify_token_verifications",
    () =>
      new Gauge({
        name: "docverify_token_verifications",
        help: "Client-secret verifications running or waiting for a slot, by state.",
        labelNames: ["state"] as const,
        registers: [registry],
        collect() {
          const s = gate();
          this.set({ state: "running" }, s.running);
          this.set({ state: "queued" }, s.queued);
        },
      }),
  );
  return {
    throttled: once(
      registry,
      "docverify_token_throttled_total",
      () =>
        new Counter({
          name: "docverify_token_throttled_total",
          help: "POST /token requests answered 429 without checking the secret, by reason (address, client, pair blocked; busy).",
          labelNames: ["reason"] as const,
          registers: [registry],
        }),
    ),
    failures: once(
      registry,
      "docverify_token_failed_authentications_total",
      () =>
        new Counter({
          name: "docverify_token_failed_authentications_total",
          help: "POST /token requests whose client_id and secret did not match.",
          registers: [registry],
        }),
    ),
    counterErrors: once(
      registry,
      "docverify_throttle_counter_errors_total",
      () =>
        new Counter({
          name: "docverify_throttle_counter_errors_total",
          help: "Calls to the throttling counters (Redis in a cluster) that failed; throttling fails open meanwhile.",
          registers: [registry],
        }),
    ),
  };
}

/** Counts reloads of the clients file by result (ok, error: the clients in use were kept). */
export function clientsReloadMetric(registry: Registry): Counter<"result"> {
  return once(
    registry,
    "docverify_clients_file_reloads_total",
    () =>
      new Counter({
        name: "docverify_clients_file_reloads_total",
        help: "Changes of the clients file seen, by result: ok (now in use) or error (the clients before were kept).",
        labelNames: ["result"] as const,
        registers: [registry],
      }),
  );
}
