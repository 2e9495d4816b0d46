import { createObjectStoreMemory } from "../platform/memory/object-store-memory.js";
import { serve } from "@hono/node-server";
import { createApp } from "../api/app.js";
import type { Registry } from "prom-client";
import { clientsReloadMetric } from "../api/auth/auth-metrics.js";
import { type ClientRegistry, createClientRegistry } from "../api/auth/clients.js";
import { warnUnknownScopes, watchClientsFile } from "../api/auth/clients-reload.js";
import { type ClientRevocations, recordClientChanges } from "../api/auth/revocations.js";
import { createTokenService } from "../api/auth/tokens.js";
import type { ApiDeps } from "../api/deps.js";
import type { ClientsFile } from "../core/clients.js";
import { systemClock } from "../core/ports.js";
import type { Logger } from "../core/step-context.js";

/** `http://host:port` with an IPv6 host in brackets. */
export const urlFor = (host: string, port: number) =>
  `http://${host.includes(":") ? `[${host}]` : host}:${port}`;

export type ApiPorts = Omit<ApiDeps, "clients" | "tokens" | "clock" | "publicUrl">;

/**
 * The clients registry: DOCVERIFY_CLIENTS_FILE, reloaded when it changes (api/auth/clients-reload.ts),
 * or a fixed list (standalone's development client). `close` stops watching.
 */
export async function openClients(
  source: { file: string } | { fixed: ClientsFile },
  opts: { log: Logger; metrics: Registry; revocations: ClientRevocations },
): Promise<{ clients: ClientRegistry; close(): void }> {
  if ("fixed" in source) {
    const clients = createClientRegistry(source.fixed);
    warnUnknownScopes(clients, opts.log);
    return { clients, close: () => undefined };
  }
  const reloads = clientsReloadMetric(opts.metrics);
  const { revocations } = opts;
  const clients = await watchClientsFile(source.file, {
    log: opts.log,
    onReload: (ok) => reloads.inc({ result: ok ? "ok" : "error" }),
    // A removed client's earlier credentials stay void, also when it is added back (docs/decisions.md).
    onChange: recordClientChanges(revocations, () => systemClock.now()),
  });
  try {
    await revocations.refresh(clients.ids());
  } catch (err) {
    opts.log.error(
      { err },
      "cannot read the clients' revocation records; they are read again when a client is added",
    );
  }
  return { clients, close: () => clients.close() };
}

/**
 * Builds the API from its ports and serves it, in both runtimes: the clients registry and the token service
 * from the clients file and the signing key, upload URLs on DOCVERIFY_PUBLIC_URL or the port actually bound
 * (PORT=0 picks a free one). `banner` is printed on stderr once listening (the e2e harness waits for it).
 */
export function serveApi(
  ports: ApiPorts,
  opts: { clients: ClientRegistry; signingKey: Uint8Array; log: Logger; banner: (url: string) => string },
) {
  const { config } = ports;
  const deps: ApiDeps = {
    ...ports,
    memory: ports.memory ?? createObjectStoreMemory(ports.objects, ports.bucket),
    clients: opts.clients,
    tokens: createTokenService({
      key: opts.signingKey,
      ttlSeconds: config.tokenTtlSeconds,
      clock: systemClock,
    }),
    clock: systemClock,
    publicUrl: config.publicUrl ?? urlFor(config.host, config.port),
  };
  const app = createApp(deps);
  const server = serve({ fetch: app.fetch, port: config.port, hostname: config.host }, (info) => {
    const url = urlFor(config.host, info.port);
    if (!config.publicUrl) deps.publicUrl = url;
    opts.log.info({ url }, "api listening");
    process.stderr.write(`${opts.banner(url)}\n`);
  });
  server.on("error", (err) => {
    opts.log.fatal({ err }, "cannot listen");
    process.exit(1);
  });
  return server;
}
