import { serve } from "@hono/node-server";
import { createApp } from "../api/app.js";
import { createClientRegistry } from "../api/auth/clients.js";
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
 * Builds the API from its ports and serves it, in both runtimes: the clients registry and the token service
 * from the clients file and the signing key, upload URLs on DOCVERIFY_PUBLIC_URL or the port actually bound
 * (PORT=0 picks a free one). `banner` is printed on stderr once listening (the e2e harness waits for it).
 */
export function serveApi(
  ports: ApiPorts,
  opts: { clientsFile: ClientsFile; signingKey: Uint8Array; log: Logger; banner: (url: string) => string },
) {
  const { config } = ports;
  const deps: ApiDeps = {
    ...ports,
    clients: createClientRegistry(opts.clientsFile),
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
