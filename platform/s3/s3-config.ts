import { type Config, ConfigError } from "../../core/config.js";

/** Connection settings of the S3-compatible object store (what `createS3ObjectStore` takes). */
export interface S3ObjectStoreOptions {
  /** Host name or IP of the S3 endpoint the service itself talks to. */
  endPoint: string;
  port: number;
  useSSL: boolean;
  accessKey: string;
  secretKey: string;
  /** Bucket region; when set, presigning needs no network call. */
  region?: string;
  /** URL base clients use (e.g. `http://s3.example.com:9000`); presigned URLs are signed for this host. */
  publicEndpoint?: string;
  /** Path-style requests (`host/bucket/key`), as MinIO, Ceph and most self-hosted stores expect. Default true. */
  pathStyle?: boolean;
  /** Multipart part size in bytes for streamed bodies (at least 5 MiB). Default 8 MiB. */
  partSize?: number;
}

/** S3 bucket naming rules (the subset every S3-compatible store accepts). */
const BUCKET_RE = /^(?!\d+\.\d+\.\d+\.\d+$)(?!xn--)[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/;

export function isValidS3BucketName(bucket: string): boolean {
  return BUCKET_RE.test(bucket) && !bucket.includes("..");
}

/**
 * Parses an endpoint given as a URL (`https://s3.example.com`, `http://minio:9000`) or as `host[:port]`.
 * `what` names the setting in error messages.
 */
export function parseS3Endpoint(
  value: string,
  what: string,
  defaultSsl: boolean,
): { endPoint: string; port: number; useSSL: boolean; fromUrl: boolean } {
  const fromUrl = /^[a-z][a-z0-9+.-]*:\/\//i.test(value);
  let url: URL;
  try {
    url = new URL(fromUrl ? value : `${defaultSsl ? "https" : "http"}://${value}`);
  } catch {
    throw new ConfigError(
      `${what} "${value}" is not a valid endpoint; use a URL such as http://minio:9000 or host:port.`,
    );
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new ConfigError(`${what} "${value}" must use http or https, not ${url.protocol.slice(0, -1)}.`);
  }
  if (
    (url.pathname !== "/" && url.pathname !== "") ||
    url.search ||
    url.hash ||
    url.username ||
    url.password
  ) {
    throw new ConfigError(
      `${what} "${value}" must be only scheme, host and port (no path, query or credentials); S3-compatible stores are served from the root.`,
    );
  }
  const useSSL = url.protocol === "https:";
  const host = url.hostname.replace(/^\[(.*)\]$/, "$1");
  if (!host) throw new ConfigError(`${what} "${value}" has no host name.`);
  return { endPoint: host, port: url.port ? Number(url.port) : useSSL ? 443 : 80, useSSL, fromUrl };
}

/**
 * Maps the service configuration (S3_ENDPOINT, S3_PUBLIC_ENDPOINT, S3_BUCKET, S3_REGION, S3_ACCESS_KEY,
 * S3_SECRET_KEY, S3_USE_SSL) to the options of `createS3ObjectStore` and the bucket to use.
 * S3_ENDPOINT is a URL (its scheme decides TLS) or `host[:port]` (S3_USE_SSL decides; port defaults to
 * 443 or 80). Path-style addressing is used except on amazonaws.com. Throws ConfigError naming the
 * setting and the fix.
 */
export function s3ConfigFromEnv(config: Config): { options: S3ObjectStoreOptions; bucket: string } {
  const s3 = config.s3;
  if (!s3.endpoint) {
    throw new ConfigError(
      "S3_ENDPOINT is not set; set it to your S3-compatible storage, e.g. http://minio.storage:9000.",
    );
  }
  const endpoint = parseS3Endpoint(s3.endpoint.trim(), "S3_ENDPOINT", s3.useSsl);
  if (endpoint.fromUrl && s3.useSsl && !endpoint.useSSL) {
    throw new ConfigError(
      `S3_ENDPOINT "${s3.endpoint}" says http but S3_USE_SSL is true; use an https:// URL or unset S3_USE_SSL.`,
    );
  }
  if (!s3.accessKey)
    throw new ConfigError("S3_ACCESS_KEY is not set; set it to the storage's access key id.");
  if (!s3.secretKey) throw new ConfigError("S3_SECRET_KEY is not set; set it to the storage's secret key.");
  if (!isValidS3BucketName(config.bucket)) {
    throw new ConfigError(
      `S3_BUCKET "${config.bucket}" is not a valid bucket name; use 3 to 63 lowercase letters, digits, '.' or '-', starting and ending with a letter or digit.`,
    );
  }
  let publicEndpoint: string | undefined;
  if (s3.publicEndpoint) {
    const pub = parseS3Endpoint(s3.publicEndpoint.trim(), "S3_PUBLIC_ENDPOINT", endpoint.useSSL);
    if (!pub.fromUrl) {
      throw new ConfigError(
        `S3_PUBLIC_ENDPOINT "${s3.publicEndpoint}" must be a full URL clients can reach, e.g. https://s3.example.com.`,
      );
    }
    publicEndpoint = s3.publicEndpoint.trim().replace(/\/$/, "");
  }
  return {
    bucket: config.bucket,
    options: {
      endPoint: endpoint.endPoint,
      port: endpoint.port,
      useSSL: endpoint.useSSL,
      accessKey: s3.accessKey,
      secretKey: s3.secretKey,
      ...(s3.region ? { region: s3.region } : {}),
      ...(publicEndpoint ? { publicEndpoint } : {}),
      pathStyle: !/(^|\.)amazonaws\.com(\.cn)?$/i.test(endpoint.endPoint),
    },
  };
}
