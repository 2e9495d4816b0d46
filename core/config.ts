import { z } from "zod";
import type { MemorySettings } from "./tenant-memory.js";
import { DEFAULT_DOCUMENT_BUDGET, type DocumentBudget } from "./document-budget.js";
import {
  DEFAULT_MAX_RESOURCE_BYTES,
  MAX_RESOURCE_BYTES_LIMIT,
  MIN_RESOURCE_BYTES_LIMIT,
} from "./resource-size.js";

/**
 * Service configuration from the environment. Names are fixed by ARCHITECTURE.md ("Configuration");
 * further settings use the DOCVERIFY_ prefix and are listed in the README.
 */
const bool = z
  .string()
  .optional()
  .transform((v, ctx) => {
    if (v === undefined || v === "") return undefined;
    const s = v.trim().toLowerCase();
    if (["1", "true", "yes", "on"].includes(s)) return true;
    if (["0", "false", "no", "off"].includes(s)) return false;
    ctx.addIssue({ code: "custom", message: `expected true or false, got "${v}"` });
    return z.NEVER;
  });
const int = (min: number) =>
  z
    .string()
    .optional()
    .transform((v, ctx) => {
      if (v === undefined || v === "") return undefined;
      const n = Number(v);
      if (!Number.isInteger(n) || n < min) {
        ctx.addIssue({ code: "custom", message: `expected a whole number ≥ ${min}, got "${v}"` });
        return z.NEVER;
      }
      return n;
    });
/** `80,443,8000-8999`: ports and inclusive ranges, each 1-65535. */
const portList = z
  .string()
  .optional()
  .transform((v, ctx) => {
    if (v === undefined || v.trim() === "") return undefined;
    const out: [number, number][] = [];
    for (const part of v.split(",").map((p) => p.trim())) {
      const m = /^(\d{1,5})(?:-(\d{1,5}))?$/.exec(part);
      const lo = m ? Number(m[1]) : Number.NaN;
      const hi = m?.[2] !== undefined ? Number(m[2]) : lo;
      if (!m || lo < 1 || hi > 65535 || lo > hi) {
        ctx.addIssue({
          code: "custom",
          message: `expected ports or ranges 1-65535 separated by commas (e.g. 80,443,8000-8999), got "${part}"`,
        });
        return z.NEVER;
      }
      out.push([lo, hi]);
    }
    return out;
  });
const str = z
  .string()
  .optional()
  .transform((v) => (v === undefined || v === "" ? undefined : v));

const EnvSchema = z.object({
  PORT: int(0),
  HOST: str,
  DOCVERIFY_DATA_DIR: str,
  DOCVERIFY_MEMORY: z.enum(["on", "off"]).optional(),
  DOCVERIFY_MEMORY_KEY: str,
  DOCVERIFY_MEMORY_KEY_FILE: str,
  DOCVERIFY_CLIENTS_FILE: str,
  DOCVERIFY_POLICIES: str,
  DOCVERIFY_POLICIES_RELOAD_SECONDS: int(1),
  DOCVERIFY_TOKEN_TTL_SECONDS: int(1),
  DOCVERIFY_RETENTION_SECONDS: int(1),
  DOCVERIFY_ALLOW_PRIVATE_SOURCES: bool,
  DOCVERIFY_ALLOWED_SOURCE_PORTS: portList,
  DOCVERIFY_ALLOWED_PRIVATE_ADDRESSES: str,
  DOCVERIFY_TRUST_ANCHORS: str,
  DOCVERIFY_AGENT_ENGINE: z.enum(["rules", "llm"]).optional(),
  DOCVERIFY_LLM_URL: str,
  DOCVERIFY_LLM_MODEL: str,
  DOCVERIFY_LLM_API_KEY: str,
  DOCVERIFY_LLM_TIMEOUT_SECONDS: int(1),
  DOCVERIFY_LLM_MAX_TOKENS: int(1),
  DOCVERIFY_LLM_MAX_INPUT_CHARS: int(1000),
  DOCVERIFY_LLM_FALLBACK: z.enum(["none", "rules"]).optional(),
  DOCVERIFY_TOKEN_SIGNING_KEY: str,
  DOCVERIFY_TOKEN_SIGNING_KEY_FILE: str,
  DOCVERIFY_ATTESTATION_KEY_FILE: str,
  DOCVERIFY_ATTESTATION_PREVIOUS_KEYS: str,
  DOCVERIFY_DEFAULT_REGION: z
    .string()
    .regex(/^[A-Za-z]{2}$/, "expected a two-letter ISO 3166-1 code")
    .optional(),
  DOCVERIFY_MAX_DOCUMENT_BYTES: int(1),
  DOCVERIFY_DOWNLOAD_TIMEOUT_SECONDS: int(1),
  DOCVERIFY_STEP_TIMEOUT_SECONDS: int(1),
  DOCVERIFY_STEP_MAX_ATTEMPTS: int(1),
  DOCVERIFY_STEP_MEMORY_MB: int(128),
  DOCVERIFY_MAX_PAGES: int(1),
  DOCVERIFY_MAX_DECODED_MB: int(1),
  DOCVERIFY_MAX_OPERATORS: int(1),
  DOCVERIFY_MAX_IMAGE_MEGAPIXELS: int(1),
  DOCVERIFY_DETECTION_DEADLINE_SECONDS: int(1),
  DOCVERIFY_CONCURRENCY: int(1),
  DOCVERIFY_WORKERS: int(0),
  DOCVERIFY_RATE_LIMIT_PER_MINUTE: int(1),
  DOCVERIFY_TOKEN_FAILURE_WINDOW_SECONDS: int(1),
  DOCVERIFY_TOKEN_MAX_FAILURES_PER_ADDRESS: int(0),
  DOCVERIFY_TOKEN_MAX_FAILURES_PER_CLIENT: int(0),
  DOCVERIFY_TOKEN_VERIFY_CONCURRENCY: int(1),
  DOCVERIFY_TRUSTED_PROXY_HOPS: int(0),
  DOCVERIFY_UPLOAD_TTL_SECONDS: int(1),
  DOCVERIFY_UPLOAD_SWEEP_SECONDS: int(1),
  DOCVERIFY_REVIEW_LINK_TTL_SECONDS: int(1),
  DOCVERIFY_ARCHIVE_AFTER_SECONDS: int(0),
  DOCVERIFY_ARCHIVE_SWEEP_SECONDS: int(1),
  DOCVERIFY_MAX_RESOURCE_BYTES: int(MIN_RESOURCE_BYTES_LIMIT).pipe(
    z
      .number()
      .max(
        MAX_RESOURCE_BYTES_LIMIT,
        `expected at most ${MAX_RESOURCE_BYTES_LIMIT} (1 MiB, below etcd's own limit)`,
      )
      .optional(),
  ),
  DOCVERIFY_LOG_LEVEL: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).optional(),
  DOCVERIFY_PUBLIC_URL: str,
  REDIS_URL: str,
  S3_ENDPOINT: str,
  S3_PUBLIC_ENDPOINT: str,
  S3_BUCKET: str,
  S3_REGION: str,
  S3_ACCESS_KEY: str,
  S3_SECRET_KEY: str,
  S3_USE_SSL: bool,
  KUBE_NAMESPACE: str,
});

export interface Config {
  /** The attestation signing key: a private Ed25519 JWK (or PKCS#8 PEM) file (docs/api.md, "Attestations"). */
  attestationKeyFile?: string;
  /** A directory of public keys (JWK, JWKS or PEM files) of earlier attestation keys, kept in the JWKS. */
  attestationPreviousKeys?: string;
  port: number;
  host: string;
  dataDir: string;
  clientsFile?: string;
  /** Standalone: a policy file, or a directory of them (*.json, *.yaml), read again on change (docs/tuning.md). */
  policiesPath?: string;
  /** How often the policy files are looked at for changes. */
  policiesReloadSeconds: number;
  tokenTtlSeconds: number;
  retentionSeconds: number;
  allowPrivateSources: boolean;
  /** Ports a source URL (and every redirect) may name, as inclusive [low, high] ranges. */
  allowedSourcePorts: readonly (readonly [number, number])[];
  /**
   * Exact non-public addresses sources and webhook endpoints may still be at (an internal receiver, a test's
   * loopback server) while every other private address stays refused (DOCVERIFY_ALLOWED_PRIVATE_ADDRESSES).
   */
  allowedPrivateAddresses: readonly string[];
  trustAnchorsFile?: string;
  agentEngine: "rules" | "llm";
  llm: {
    /** OpenAI-compatible base URL ending before `/chat/completions`, e.g. `http://vllm:8000/v1`. */
    url?: string;
    model?: string;
    apiKey?: string;
    /** Per model call; a failed call is retried once. */
    timeoutSeconds: number;
    /** `max_tokens` of the model's answer. */
    maxTokens: number;
    /** Characters of the document's text sent to the model at most (the rest is cut with a note). */
    maxInputChars: number;
    /** What happens when the model fails twice: `none` fails the detection, `rules` uses the rules verdict. */
    fallback: "none" | "rules";
  };
  tokenSigningKey?: string;
  tokenSigningKeyFile?: string;
  defaultRegion: string;
  maxDocumentBytes: number;
  downloadTimeoutSeconds: number;
  stepTimeoutSeconds: number;
  stepMaxAttempts: number;
  /**
   * Memory of one step process, standalone (the cluster's is the step Pod's memory limit): V8's heap is
   * limited to 3/4 of it and a watchdog kills the process when its resident size passes it.
   */
  stepMemoryMb: number;
  /** What one document may cost the check step (document_too_complex beyond). */
  budget: DocumentBudget;
  detectionDeadlineSeconds: number;
  concurrency: number;
  workers: number;
  rateLimitPerMinute?: number;
  /** POST /token throttling (api/auth/token-throttle.ts). */
  tokenThrottle: {
    failureWindowSeconds: number;
    /** 0 = failures per address are not limited. */
    maxFailuresPerAddress: number;
    /** 0 = failures per client_id are not limited. */
    maxFailuresPerClient: number;
    /** Client secrets checked at once (scrypt). */
    verifyConcurrency: number;
  };
  /** Reverse proxies in front of the api that append X-Forwarded-For (0: the TCP peer is the client). */
  trustedProxyHops: number;
  uploadTtlSeconds: number;
  /** How often the operator deletes expired, unused uploads. */
  uploadSweepSeconds: number;
  /** Lifetime of a reviewer page link (`review_url` of GET /v1/detection/{id}/evidence). */
  reviewLinkTtlSeconds: number;
  /**
   * A terminal Detection is archived (its record written to the object store, the resource deleted) this
   * long after it finished; 0 keeps every Detection in the resource store (docs/decisions.md, "Archive").
   */
  archiveAfterSeconds: number;
  /** How often the operator prunes archived detections whose retention period is over. */
  archiveSweepSeconds: number;
  /** The resource size guard of both resource stores (core/resource-size.ts). */
  maxResourceBytes: number;
  logLevel: string;
  publicUrl?: string;
  bucket: string;
  redisUrl?: string;
  s3: {
    endpoint?: string;
    publicEndpoint?: string;
    region?: string;
    accessKey?: string;
    secretKey?: string;
    useSsl: boolean;
  };
  kubeNamespace?: string;
  /**
   * The tenant memory (issue 23; docs/api.md, "Tenant memory"): on by default; its key (at least 32 bytes)
   * from DOCVERIFY_MEMORY_KEY or the file DOCVERIFY_MEMORY_KEY_FILE, or standalone generated into the data
   * directory. Without a key in the cluster the check step remembers nothing (and says so in its log).
   */
  memory: MemorySettings;
}

export class ConfigError extends Error {
  override name = "ConfigError";
}

export function loadConfig(
  env: Record<string, string | undefined>,
  defaults: { host?: string } = {},
): Config {
  const parsed = EnvSchema.safeParse(env);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`);
    throw new ConfigError(`Invalid configuration: ${lines.join("; ")}`);
  }
  const e = parsed.data;
  return {
    port: e.PORT ?? 8080,
    host: e.HOST ?? defaults.host ?? "127.0.0.1",
    dataDir: e.DOCVERIFY_DATA_DIR ?? ".data",
    clientsFile: e.DOCVERIFY_CLIENTS_FILE,
    policiesPath: e.DOCVERIFY_POLICIES,
    policiesReloadSeconds: e.DOCVERIFY_POLICIES_RELOAD_SECONDS ?? 2,
    tokenTtlSeconds: e.DOCVERIFY_TOKEN_TTL_SECONDS ?? 3600,
    retentionSeconds: e.DOCVERIFY_RETENTION_SECONDS ?? 30 * 24 * 3600,
    allowPrivateSources: e.DOCVERIFY_ALLOW_PRIVATE_SOURCES ?? false,
    allowedSourcePorts: e.DOCVERIFY_ALLOWED_SOURCE_PORTS ?? [
      [80, 80],
      [443, 443],
    ],
    allowedPrivateAddresses: (e.DOCVERIFY_ALLOWED_PRIVATE_ADDRESSES ?? "")
      .split(",")
      .map((a) => a.trim())
      .filter((a) => a !== ""),
    trustAnchorsFile: e.DOCVERIFY_TRUST_ANCHORS,
    agentEngine: e.DOCVERIFY_AGENT_ENGINE ?? "rules",
    llm: {
      url: e.DOCVERIFY_LLM_URL,
      model: e.DOCVERIFY_LLM_MODEL,
      apiKey: e.DOCVERIFY_LLM_API_KEY,
      timeoutSeconds: e.DOCVERIFY_LLM_TIMEOUT_SECONDS ?? 60,
      maxTokens: e.DOCVERIFY_LLM_MAX_TOKENS ?? 1500,
      maxInputChars: e.DOCVERIFY_LLM_MAX_INPUT_CHARS ?? 60_000,
      fallback: e.DOCVERIFY_LLM_FALLBACK ?? "none",
    },
    tokenSigningKey: e.DOCVERIFY_TOKEN_SIGNING_KEY,
    tokenSigningKeyFile: e.DOCVERIFY_TOKEN_SIGNING_KEY_FILE,
    attestationKeyFile: e.DOCVERIFY_ATTESTATION_KEY_FILE,
    attestationPreviousKeys: e.DOCVERIFY_ATTESTATION_PREVIOUS_KEYS,
    defaultRegion: (e.DOCVERIFY_DEFAULT_REGION ?? "US").toUpperCase(),
    maxDocumentBytes: e.DOCVERIFY_MAX_DOCUMENT_BYTES ?? 50 * 1024 * 1024,
    downloadTimeoutSeconds: e.DOCVERIFY_DOWNLOAD_TIMEOUT_SECONDS ?? 60,
    stepTimeoutSeconds: e.DOCVERIFY_STEP_TIMEOUT_SECONDS ?? 120,
    stepMaxAttempts: e.DOCVERIFY_STEP_MAX_ATTEMPTS ?? 3,
    stepMemoryMb: e.DOCVERIFY_STEP_MEMORY_MB ?? 1536,
    budget: {
      maxPages: e.DOCVERIFY_MAX_PAGES ?? DEFAULT_DOCUMENT_BUDGET.maxPages,
      maxDecodedBytes:
        e.DOCVERIFY_MAX_DECODED_MB !== undefined
          ? e.DOCVERIFY_MAX_DECODED_MB * 1024 * 1024
          : DEFAULT_DOCUMENT_BUDGET.maxDecodedBytes,
      maxOperators: e.DOCVERIFY_MAX_OPERATORS ?? DEFAULT_DOCUMENT_BUDGET.maxOperators,
      maxImagePixels:
        e.DOCVERIFY_MAX_IMAGE_MEGAPIXELS !== undefined
          ? e.DOCVERIFY_MAX_IMAGE_MEGAPIXELS * 1_000_000
          : DEFAULT_DOCUMENT_BUDGET.maxImagePixels,
    },
    detectionDeadlineSeconds: e.DOCVERIFY_DETECTION_DEADLINE_SECONDS ?? 900,
    concurrency: e.DOCVERIFY_CONCURRENCY ?? 8,
    workers: e.DOCVERIFY_WORKERS ?? 2,
    rateLimitPerMinute: e.DOCVERIFY_RATE_LIMIT_PER_MINUTE,
    tokenThrottle: {
      failureWindowSeconds: e.DOCVERIFY_TOKEN_FAILURE_WINDOW_SECONDS ?? 900,
      maxFailuresPerAddress: e.DOCVERIFY_TOKEN_MAX_FAILURES_PER_ADDRESS ?? 10,
      maxFailuresPerClient: e.DOCVERIFY_TOKEN_MAX_FAILURES_PER_CLIENT ?? 20,
      verifyConcurrency: e.DOCVERIFY_TOKEN_VERIFY_CONCURRENCY ?? 2,
    },
    trustedProxyHops: e.DOCVERIFY_TRUSTED_PROXY_HOPS ?? 0,
    uploadTtlSeconds: e.DOCVERIFY_UPLOAD_TTL_SECONDS ?? 3600,
    uploadSweepSeconds: e.DOCVERIFY_UPLOAD_SWEEP_SECONDS ?? 300,
    reviewLinkTtlSeconds: e.DOCVERIFY_REVIEW_LINK_TTL_SECONDS ?? 900,
    archiveAfterSeconds: e.DOCVERIFY_ARCHIVE_AFTER_SECONDS ?? 3600,
    archiveSweepSeconds: e.DOCVERIFY_ARCHIVE_SWEEP_SECONDS ?? 60,
    maxResourceBytes: e.DOCVERIFY_MAX_RESOURCE_BYTES ?? DEFAULT_MAX_RESOURCE_BYTES,
    logLevel: e.DOCVERIFY_LOG_LEVEL ?? "info",
    publicUrl: e.DOCVERIFY_PUBLIC_URL,
    bucket: e.S3_BUCKET ?? "docverify",
    redisUrl: e.REDIS_URL,
    s3: {
      endpoint: e.S3_ENDPOINT,
      publicEndpoint: e.S3_PUBLIC_ENDPOINT,
      region: e.S3_REGION,
      accessKey: e.S3_ACCESS_KEY,
      secretKey: e.S3_SECRET_KEY,
      useSsl: e.S3_USE_SSL ?? false,
    },
    kubeNamespace: e.KUBE_NAMESPACE,
    memory: {
      enabled: e.DOCVERIFY_MEMORY !== "off",
      ...(e.DOCVERIFY_MEMORY_KEY ? { key: e.DOCVERIFY_MEMORY_KEY } : {}),
      ...(e.DOCVERIFY_MEMORY_KEY_FILE ? { keyFile: e.DOCVERIFY_MEMORY_KEY_FILE } : {}),
    },
  };
}
