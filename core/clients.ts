import { z } from "zod";
import { WebhookEndpoints } from "./webhooks.js";

/** One registered API client (DOCVERIFY_CLIENTS_FILE). */
export const ClientRegistration = z
  .object({
    client_id: z.string().min(1),
    client_secret: z.string().min(1).optional(),
    /** scrypt PHC string: `$scrypt$ln=<log2 N>,r=<r>,p=<p>$<salt b64>$<hash b64>`. */
    client_secret_hash: z.string().min(1).optional(),
    scopes: z.array(z.string()),
    sample_allowance: z.number().int().nonnegative().default(0),
    buckets: z.array(z.string()).default([]),
    /**
     * The tenant the client belongs to (several clients of one customer share a tenant memory, issue 23);
     * absent: the client is a tenant of its own.
     */
    tenant: z.string().min(1).max(200).optional(),
    /**
     * The client's detection policy (issue 26, docs/tuning.md): the name of a DetectionPolicy (cluster) or
     * of a policy file (standalone, DOCVERIFY_POLICIES); absent = the default rules.
     */
    policy: z
      .string()
      .regex(/^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/, "a policy name: a lowercase DNS label")
      .optional(),
    /** Where the client is told of finished detections and jobs (core/webhooks.ts). */
    webhooks: WebhookEndpoints,
  })
  .refine((c) => (c.client_secret === undefined) !== (c.client_secret_hash === undefined), {
    message: "each client needs exactly one of client_secret or client_secret_hash",
  });
export type ClientRegistration = z.infer<typeof ClientRegistration>;

export const ClientsFile = z
  .object({ clients: z.array(ClientRegistration) })
  .refine((f) => new Set(f.clients.map((c) => c.client_id)).size === f.clients.length, {
    message: "client_id values must be unique",
  });
export type ClientsFile = z.infer<typeof ClientsFile>;
