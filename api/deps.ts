import type { TenantMemory } from "../core/tenant-memory.js";
import type { Registry } from "prom-client";
import type { Config } from "../core/config.js";
import type { Detection } from "../core/detection.js";
import type { DetectionJob } from "../core/detection-job.js";
import type { Clock, ObjectStore, ResourceStore } from "../core/ports.js";
import type { Logger } from "../core/step-context.js";
import type { UsageCounter } from "../core/usage-counter.js";
import type { WindowCounter } from "../core/window-counter.js";
import type { ClientRegistry } from "./auth/clients.js";
import type { AttestationSigner } from "./attestation/signer.js";
import type { ClientRevocations } from "./auth/revocations.js";
import type { TokenService } from "./auth/tokens.js";
import type { UploadLocks } from "./uploads/reservation.js";

/** The ports and settings the API is built from (bin/ wires the adapters; tests pass local ones). */
export interface ApiDeps {
  detections: ResourceStore<Detection>;
  /** DetectionJobs (POST /jobs); absent when the deployment runs no job controller: /jobs answers 503. */
  jobs?: ResourceStore<DetectionJob>;
  objects: ObjectStore;
  /** The tenant memory: an archived detection's DELETE forgets it (issue 23). */
  memory?: TenantMemory;
  /** The service's own bucket (S3_BUCKET). */
  bucket: string;
  clients: ClientRegistry;
  tokens: TokenService;
  /** Clients removed from the clients file, whose earlier credentials stay void (api/auth/revocations.ts). */
  revocations: ClientRevocations;
  usage: UsageCounter;
  /** Short-lived counters shared by every replica: /token throttling and the per-client rate limit. */
  counters: WindowCounter;
  config: Config;
  log: Logger;
  metrics: Registry;
  clock: Clock;
  /** Readiness of the dependencies (store, object store, scheduler); /readyz answers 503 when not ok. */
  ready: () => Promise<{ ok: boolean; reason?: string }>;
  /** Base URL clients reach the service at, for signed upload URLs (e.g. http://127.0.0.1:8080). */
  publicUrl: string;
  /**
   * Signs attestations and publishes their public keys (GET /.well-known/jwks.json); null when the deployment
   * has no attestation key (cluster without DOCVERIFY_ATTESTATION_KEY_FILE): the attestation route answers 503.
   */
  attestation: AttestationSigner | null;
  /** Waits `ms` (holding throttled answers); default a timer. Tests pass one that records instead. */
  sleep?: (ms: number) => Promise<void>;
}

/** The authenticated caller of a /v1 request. */
export interface Principal {
  clientId: string;
  scopes: string[];
  /** When the token was issued, in ms since the epoch (credential revocation compares it). */
  issuedAtMs?: number;
  /** The token's credential binding (api/auth/credential-binding.ts), absent on a token without one. */
  binding?: string;
}

/** Hono environment: ports reach handlers through typed context variables. */
export interface AppEnv {
  Variables: {
    deps: ApiDeps;
    requestId: string;
    principal: Principal;
    /** Serialises the PUT and the claim of one upload (api/uploads/reservation.ts). */
    uploadLocks: UploadLocks;
  };
}
