import { createHash } from "node:crypto";
import { z } from "zod";
import { defineStored } from "./stored.js";

/**
 * The record that a client was removed from the clients file (docs/decisions.md, "Idempotent creates and
 * credential revocation"): every credential issued to that client before `not_before` — access tokens,
 * reviewer links, upload URLs — stays refused, also after the client is added back with the same secret.
 * Written by the api replica that sees the removal, read by every replica at start and when the client
 * comes back; kept in the service bucket so a restart or another replica knows it too.
 */
export const ClientRevocation = z.object({
  client_id: z.string().min(1),
  /** Milliseconds since the epoch: credentials issued before this instant are void. */
  not_before: z.number().int().nonnegative(),
});
export type ClientRevocation = z.infer<typeof ClientRevocation>;

/** One object per client (no two replicas write the same object for different clients). */
export const CLIENT_REVOCATION = defineStored({
  what: "the client's revocation record",
  key: (clientId: string) =>
    `auth/revoked-clients/${createHash("sha256").update(clientId).digest("hex").slice(0, 40)}.json`,
  schema: ClientRevocation,
});
