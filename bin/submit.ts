import { randomUUID } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { mkdir, readFile, stat, writeFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { normalizeRegion } from "../core/regions.js";
import { DOC_TYPE_ALIASES, DOC_TYPE_INPUTS, DOC_TYPES } from "../core/verdict.js";

const HELP = `Usage: docverify submit <file-or-url> [options]

Submits a document to a running docverify service and waits for its verdict.
A local file is uploaded (POST /v1/uploads with its name, type and size, then PUT);
an http(s) URL is sent as source_url. Every option is checked before anything is sent.

Options:
  --doc-type <type>       declared document type (default: other); one of:
                          ${DOC_TYPES.join(", ")}
                          (or an alias the service stores as one of these: ${Object.keys(DOC_TYPE_ALIASES).slice(0, 4).join(", ")} …)
  --region <code>         ISO 3166-1 alpha-2 region of the document (default: US)
  --sample                a sample run (X-Sample-Run: true)
  --idempotency-key <k>   the create's Idempotency-Key (default: a new UUID); the create is retried
                          with it after a lost answer, a 5xx or a 409, so a retry never makes a second
                          detection; pass your own to resume an interrupted submit of the same file
  --url <base>            service base URL (default: $DOCVERIFY_URL or http://127.0.0.1:8080)
  --client-id <id>        client id (default: $DOCVERIFY_CLIENT_ID, or the standalone development client)
  --client-secret <s>     client secret (default: $DOCVERIFY_CLIENT_SECRET, or the development client's)
  --timeout <seconds>     how long to wait for the verdict (default: 600)
  --no-wait               print the created detection's id (with --json: the detection) and return at once
  --json                  print the final DetectionDetail as JSON instead of a summary
  --evidence <dir>        when COMPLETED, write the evidence to <dir> (created if missing): evidence.json
                          (GET /v1/detection/{id}/evidence) and the page images page-<n>.png (and
                          page-<n>-first-saved.png for pages an incremental update changed), and print
                          the reviewer page's link (valid 15 minutes by default)
  --version               print the version and exit
  -h, --help              print this help and exit

Exit status: 0 COMPLETED (or created, with --no-wait), 1 FAILED or an error, 2 a usage error.
`;

type Json = Record<string, unknown>;

/** Where the command writes and what it reads from its environment (tests pass their own). */
export interface SubmitIo {
  out(text: string): void;
  err(text: string): void;
  env: Record<string, string | undefined>;
  /** Waits between polls (tests pass a shorter one). */
  pollMs?: number;
}

const processIo: SubmitIo = {
  out: (t) => process.stdout.write(t),
  err: (t) => process.stderr.write(t),
  env: process.env,
};

/** A failure the user can act on: its message is a sentence, printed as is. */
class SubmitError extends Error {
  override name = "SubmitError";
  constructor(
    message: string,
    readonly exitCode: 1 | 2 = 1,
  ) {
    super(message);
  }
}

/** The package version (package.json beside bin/ in the source tree, or above dist/bin/ when built). */
export function packageVersion(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 4; i++) {
    const file = path.join(dir, "package.json");
    if (existsSync(file)) {
      const pkg = JSON.parse(readFileSync(file, "utf8")) as { name?: string; version?: string };
      if (pkg.name === "docverify" && pkg.version) return pkg.version;
    }
    dir = path.dirname(dir);
  }
  return "unknown";
}

/** Content types the service accepts, by file extension (declared at POST /v1/uploads). */
const CONTENT_TYPES: Record<string, string> = {
  ".pdf": "application/pdf",
  ".jpg": "image/jpeg",
  ".jpeg": "image/jpeg",
  ".png": "image/png",
  ".tif": "image/tiff",
  ".tiff": "image/tiff",
};

interface Plan {
  base: string;
  body: Json;
  file?: { path: string; name: string; size: number; contentType?: string };
  sample: boolean;
  /** The create's Idempotency-Key. */
  idempotencyKey: string;
  wait: boolean;
  json: boolean;
  timeoutSeconds: number;
  /** Where to write the evidence (absolute), when asked. */
  evidenceDir?: string;
}

/** Checks every option and the target before anything is sent; a SubmitError (exit 2) says what is wrong. */
async function plan(
  values: ReturnType<typeof parse>["values"],
  positionals: string[],
  io: SubmitIo,
): Promise<Plan> {
  const target = positionals[0];
  if (!target || positionals.length > 1) {
    throw new SubmitError(
      positionals.length > 1
        ? `Give exactly one file or URL; got ${positionals.length}: ${positionals.join(", ")}.`
        : "Give the file or the http(s) URL of the document to submit.",
      2,
    );
  }
  const docType = values["doc-type"] ?? "other";
  if (!(DOC_TYPE_INPUTS as readonly string[]).includes(docType)) {
    throw new SubmitError(
      `--doc-type "${docType}" is not a document type; use one of: ${DOC_TYPES.join(", ")}.`,
      2,
    );
  }
  const region = normalizeRegion(values.region ?? "US");
  if (!region) {
    throw new SubmitError(
      `--region "${values.region}" is not an ISO 3166-1 alpha-2 region code; use a code such as US, GB or DE.`,
      2,
    );
  }
  const timeoutSeconds = values.timeout === undefined ? 600 : Number(values.timeout);
  if (!Number.isFinite(timeoutSeconds) || timeoutSeconds <= 0) {
    throw new SubmitError(`--timeout "${values.timeout}" is not a number of seconds greater than 0.`, 2);
  }
  const base = (values.url ?? io.env.DOCVERIFY_URL ?? "http://127.0.0.1:8080").replace(/\/+$/, "");
  let baseUrl: URL | undefined;
  try {
    baseUrl = new URL(base);
  } catch {
    baseUrl = undefined;
  }
  if (!baseUrl || !/^https?:$/.test(baseUrl.protocol)) {
    throw new SubmitError(`The service URL "${base}" is not an http(s) URL; pass it with --url.`, 2);
  }
  const idempotencyKey = values["idempotency-key"] ?? randomUUID();
  if (!/^[A-Za-z0-9._~:+/=-]{1,255}$/.test(idempotencyKey)) {
    throw new SubmitError(
      `--idempotency-key "${idempotencyKey}" is not a key the service accepts: use 1-255 characters of A-Z a-z 0-9 . _ ~ : + / = - (e.g. a UUID).`,
      2,
    );
  }
  const body: Json = { doc_type: docType, region };
  const result: Plan = {
    base,
    body,
    sample: values.sample === true,
    idempotencyKey,
    wait: values["no-wait"] !== true,
    json: values.json === true,
    timeoutSeconds,
  };
  if (values.evidence !== undefined) {
    if (!result.wait) {
      throw new SubmitError("--evidence needs the verdict: leave out --no-wait to write the evidence.", 2);
    }
    const dir = path.resolve(values.evidence);
    const info = await stat(dir).catch(() => undefined);
    if (info && !info.isDirectory())
      throw new SubmitError(`--evidence ${values.evidence} is not a directory.`, 2);
    result.evidenceDir = dir;
  }
  if (/^https?:\/\//i.test(target)) {
    try {
      new URL(target);
    } catch {
      throw new SubmitError(`"${target}" is not a valid URL.`, 2);
    }
    body.source_url = target;
    return result;
  }
  const file = path.resolve(target);
  const info = await stat(file).catch(() => undefined);
  if (!info) throw new SubmitError(`${target} does not exist (and is not an http(s) URL).`, 2);
  if (!info.isFile()) throw new SubmitError(`${target} is not a file.`, 2);
  if (info.size === 0) throw new SubmitError(`${target} is empty.`, 2);
  result.file = {
    path: file,
    name: path.basename(file),
    size: info.size,
    contentType: CONTENT_TYPES[path.extname(file).toLowerCase()],
  };
  return result;
}

export async function runSubmit(argv: string[], io: SubmitIo = processIo): Promise<number> {
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(argv);
  } catch (err) {
    io.err(`docverify submit: ${(err as Error).message}\nRun docverify submit --help for the options.\n`);
    return 2;
  }
  const { values, positionals } = parsed;
  if (values.help) {
    io.out(HELP);
    return 0;
  }
  if (values.version) {
    io.out(`docverify ${packageVersion()}\n`);
    return 0;
  }
  try {
    const p = await plan(values, positionals, io);
    const creds = await credentials(values["client-id"], values["client-secret"], io.env);
    if (!creds) {
      throw new SubmitError(
        "No credentials: pass --client-id and --client-secret (or set DOCVERIFY_CLIENT_ID and DOCVERIFY_CLIENT_SECRET).",
        2,
      );
    }
    return await submit(p, creds, io);
  } catch (err) {
    if (err instanceof SubmitError) {
      io.err(`docverify submit: ${err.message}\n`);
      return err.exitCode;
    }
    throw err;
  }
}

async function submit(p: Plan, creds: { id: string; secret: string }, io: SubmitIo): Promise<number> {
  const say = (line: string) => {
    if (!p.json) io.err(`${line}\n`);
  };
  const token = await getToken(p.base, creds);
  const auth = { authorization: `Bearer ${token}` };
  if (p.file) {
    const declared: Json = { filename: p.file.name, size_bytes: p.file.size };
    if (p.file.contentType) declared.content_type = p.file.contentType;
    const upload = await call(
      p.base,
      "POST",
      "/v1/uploads",
      { ...auth, "content-type": "application/json" },
      JSON.stringify(declared),
    );
    say(`Uploading ${p.file.name} (${p.file.size} bytes)…`);
    let put: Response;
    try {
      put = await fetch(String(upload.upload_url), {
        method: "PUT",
        headers: { "content-type": p.file.contentType ?? "application/octet-stream" },
        body: await readFile(p.file.path),
      });
    } catch (err) {
      throw new SubmitError(`The upload could not be sent (${(err as Error).message}).`);
    }
    if (!put.ok) throw new SubmitError(`The upload was refused: ${await explain(put)}`);
    p.body.upload_id = upload.upload_id;
  }
  const headers: Record<string, string> = {
    ...auth,
    "content-type": "application/json",
    "idempotency-key": p.idempotencyKey,
  };
  if (p.sample) headers["x-sample-run"] = "true";
  const created = await createDetection(p.base, headers, JSON.stringify(p.body), say);
  const id = String(created.id);
  say(`Detection ${id} created (${created.status}).`);
  if (!p.wait) {
    io.out(p.json ? `${JSON.stringify(created, null, 2)}\n` : `${id}\n`);
    return 0;
  }

  const deadline = Date.now() + p.timeoutSeconds * 1000;
  let last = "";
  let detail: Json = created;
  const started = Date.now();
  while (detail.status !== "COMPLETED" && detail.status !== "FAILED") {
    if (Date.now() > deadline) {
      throw new SubmitError(
        `Gave up waiting for ${id} after ${p.timeoutSeconds} s (still ${detail.status}); it goes on in the service: poll GET /v1/detection/${id}.`,
      );
    }
    await new Promise((r) => setTimeout(r, io.pollMs ?? 1000));
    detail = await call(p.base, "GET", `/v1/detection/${id}`, auth);
    const s = String(detail.status);
    if (s !== last) {
      say(`  ${((Date.now() - started) / 1000).toFixed(1)} s  ${s}`);
      last = s;
    }
  }
  let written: EvidenceWritten | undefined;
  if (p.evidenceDir && detail.status === "COMPLETED") written = await writeEvidence(p, id, auth);
  io.out(p.json ? `${JSON.stringify(detail, null, 2)}\n` : formatSummary(detail));
  if (written) {
    const lines = [
      `Evidence:  ${written.findings} finding${written.findings === 1 ? "" : "s"} in ${written.groups} group${written.groups === 1 ? "" : "s"}; evidence.json and ${written.images} page image${written.images === 1 ? "" : "s"} written to ${p.evidenceDir}`,
      ...(written.reviewUrl
        ? [
            `Review page: ${written.reviewUrl}${written.reviewUntil ? ` (valid until ${written.reviewUntil})` : ""}`,
          ]
        : []),
    ];
    // With --json stdout is the DetectionDetail alone; the lines go to stderr.
    (p.json ? io.err : io.out)(`${lines.join("\n")}\n`);
  } else if (p.evidenceDir && detail.status !== "COMPLETED") {
    io.err(`No evidence written: the detection is ${detail.status}.\n`);
  }
  return detail.status === "COMPLETED" ? 0 : 1;
}

interface EvidenceWritten {
  findings: number;
  groups: number;
  images: number;
  reviewUrl?: string;
  reviewUntil?: string;
}

/** Writes evidence.json and every page image of a completed detection to p.evidenceDir. */
async function writeEvidence(p: Plan, id: string, auth: Record<string, string>): Promise<EvidenceWritten> {
  const dir = p.evidenceDir as string;
  const evidence = await call(p.base, "GET", `/v1/detection/${id}/evidence`, auth);
  try {
    await mkdir(dir, { recursive: true });
    await writeFile(path.join(dir, "evidence.json"), `${JSON.stringify(evidence, null, 2)}\n`);
  } catch (err) {
    throw new SubmitError(`The evidence cannot be written to ${dir} (${(err as Error).message}).`);
  }
  let images = 0;
  const pages = ((evidence.pages as Json | null)?.items as Json[] | undefined) ?? [];
  for (const page of pages) {
    for (const [url, name] of [
      [page.image_url, `page-${page.number}.png`],
      [page.first_saved_url, `page-${page.number}-first-saved.png`],
    ] as const) {
      if (typeof url !== "string") continue;
      let res: Response;
      try {
        res = await fetch(url, { headers: auth });
      } catch (err) {
        throw new SubmitError(`The page image ${url} could not be fetched (${(err as Error).message}).`);
      }
      if (!res.ok) throw new SubmitError(`The page image ${url} was refused: ${await explain(res)}`);
      await writeFile(path.join(dir, name), Buffer.from(await res.arrayBuffer()));
      images++;
    }
  }
  return {
    findings: Number(evidence.findings_total ?? 0),
    groups: Number(evidence.groups_total ?? 0),
    images,
    ...(typeof evidence.review_url === "string" ? { reviewUrl: evidence.review_url } : {}),
    ...(typeof evidence.review_url_expires_at === "string"
      ? { reviewUntil: evidence.review_url_expires_at }
      : {}),
  };
}

function parse(argv: string[]) {
  return parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      "doc-type": { type: "string" },
      region: { type: "string" },
      sample: { type: "boolean" },
      "idempotency-key": { type: "string" },
      url: { type: "string" },
      "client-id": { type: "string" },
      "client-secret": { type: "string" },
      timeout: { type: "string" },
      "no-wait": { type: "boolean" },
      json: { type: "boolean" },
      evidence: { type: "string" },
      version: { type: "boolean" },
      help: { type: "boolean", short: "h" },
    },
  });
}

async function credentials(
  id: string | undefined,
  secret: string | undefined,
  env: Record<string, string | undefined>,
): Promise<{ id: string; secret: string } | undefined> {
  id ??= env.DOCVERIFY_CLIENT_ID;
  secret ??= env.DOCVERIFY_CLIENT_SECRET;
  if (id && secret) return { id, secret };
  const file = path.resolve(env.DOCVERIFY_DATA_DIR ?? ".data", "dev-client.json");
  if (!existsSync(file)) return undefined;
  const dev = JSON.parse(await readFile(file, "utf8")) as { client_id: string; client_secret: string };
  return { id: dev.client_id, secret: dev.client_secret };
}

async function getToken(base: string, c: { id: string; secret: string }): Promise<string> {
  const res = await call(
    base,
    "POST",
    "/token",
    { "content-type": "application/x-www-form-urlencoded" },
    new URLSearchParams({
      grant_type: "client_credentials",
      client_id: c.id,
      client_secret: c.secret,
    }).toString(),
  );
  return String(res.access_token);
}

/**
 * What an error answer says, as a sentence: the `detail` message, or each validation issue as
 * "field: message" (never the raw JSON).
 */
export async function explain(res: Response): Promise<string> {
  const text = await res.text();
  let detail: unknown;
  try {
    detail = (JSON.parse(text) as Json).detail;
  } catch {
    detail = undefined;
  }
  if (typeof detail === "string") return withPeriod(detail);
  if (Array.isArray(detail) && detail.length > 0) {
    const issues = detail.map((d: { loc?: unknown[]; msg?: string }) => {
      const loc = (d.loc ?? []).filter(
        (p, i) => !(i === 0 && ["body", "query", "path", "header"].includes(String(p))),
      );
      const field = loc.length ? `${loc.join(".")}: ` : "";
      return `${field}${d.msg ?? "invalid"}`;
    });
    return withPeriod(issues.join("; "));
  }
  return `the service answered HTTP ${res.status}${res.statusText ? ` (${res.statusText})` : ""}.`;
}

const withPeriod = (s: string) => (/[.!?]$/.test(s) ? s : `${s}.`);

/** Sentences for the API's answers, by operation. */
const WHAT: Record<string, string> = {
  "POST /token": "The service refused the credentials",
  "POST /v1/uploads": "The service refused the upload",
  "POST /v1/detection": "The service refused the detection",
};

/** Attempts of the create (the first and two retries with the same Idempotency-Key). */
const CREATE_ATTEMPTS = 3;
/** Answers after which the create is retried: it may or may not have happened, and the key makes it safe. */
const RETRIED_STATUSES = new Set([409, 500, 502, 503, 504]);

/**
 * POST /v1/detection with its Idempotency-Key, retried after a lost answer (the connection failed), a 5xx
 * or a 409 (the same key still being answered): the service answers a retry with the detection the first
 * attempt created, so a retry never makes a second one.
 */
async function createDetection(
  base: string,
  headers: Record<string, string>,
  body: string,
  say: (line: string) => void,
): Promise<Json> {
  for (let attempt = 1; ; attempt++) {
    let res: Response | undefined;
    let failure: string;
    try {
      res = await fetch(`${base}/v1/detection`, { method: "POST", headers, body });
      if (res.ok) return (await res.json()) as Json;
      failure = `HTTP ${res.status}`;
    } catch (err) {
      const c = (err as Error & { cause?: { code?: string; message?: string } }).cause;
      failure = c?.code ?? c?.message ?? (err as Error).message;
    }
    const retriable = res === undefined || RETRIED_STATUSES.has(res.status);
    if (!retriable || attempt >= CREATE_ATTEMPTS) {
      if (res) throw new SubmitError(`${WHAT["POST /v1/detection"]}: ${await explain(res)}`);
      throw new SubmitError(
        `Cannot reach the service at ${base} (${failure}); is it running, and is --url right? Run the same command with --idempotency-key ${headers["idempotency-key"]} to retry without a second detection.`,
      );
    }
    const retryAfter = Number(res?.headers.get("retry-after"));
    const waitS = Number.isFinite(retryAfter) && retryAfter > 0 ? Math.min(retryAfter, 10) : attempt;
    await res?.body?.cancel().catch(() => undefined);
    say(`The create was not answered (${failure}); retrying in ${waitS} s with the same Idempotency-Key…`);
    await new Promise((r) => setTimeout(r, waitS * 1000));
  }
}

async function call(
  base: string,
  method: string,
  p: string,
  headers: Record<string, string>,
  body?: string,
): Promise<Json> {
  let res: Response;
  try {
    res = await fetch(base + p, { method, headers, body });
  } catch (err) {
    const c = (err as Error & { cause?: { code?: string; message?: string } }).cause;
    const cause = c?.code ?? c?.message ?? (err as Error).message;
    throw new SubmitError(
      `Cannot reach the service at ${base} (${cause}); is it running, and is --url right?`,
    );
  }
  if (!res.ok) {
    const what = WHAT[`${method} ${p}`] ?? `${method} ${p} failed`;
    throw new SubmitError(`${what}: ${await explain(res)}`);
  }
  try {
    return (await res.json()) as Json;
  } catch {
    throw new SubmitError(
      `${method} ${p}: the service answered HTTP ${res.status} with a body that is not JSON.`,
    );
  }
}

/** A readable summary of a DetectionDetail for a person at a terminal. */
export function formatSummary(d: Json): string {
  const lines: string[] = [];
  lines.push(`Detection ${d.id}: ${d.status}`);
  if (d.filename) lines.push(`Document:  ${d.filename} (${d.content_type}, ${d.size_bytes} bytes)`);
  if (d.status === "FAILED") {
    lines.push(`Failure:   ${d.failure_code}: ${d.failure_message}`);
    if (d.agent_error) lines.push(`Agent:     ${d.agent_error}`);
    return `${lines.join("\n")}\n`;
  }
  const auth = d.authoritative as Json | null;
  if (auth) {
    lines.push(`Decided by ${auth.check_id} alone: trust ${auth.trust}`);
    lines.push(`  ${auth.directive}`);
  }
  const v = d.verdict as Json | null;
  if (v) {
    lines.push(`Fraud score: ${v.fraud_score}/100`);
    lines.push(
      `Document type: ${v.document_type_match ? `matches the declared type (${v.actual_doc_type})` : `does NOT match; looks like ${v.actual_doc_type}`}`,
    );
    const discovered = d.discovered as string[] | null;
    if (discovered?.length) lines.push(`Discovered: ${discovered.join(", ")}`);
    lines.push("Checks:");
    for (const c of (v.per_check as Json[]) ?? []) {
      lines.push(`  [${String(c.importance ?? "-").padStart(2)}] ${c.check_id}: ${c.reasoning ?? ""}`);
    }
    lines.push("", "Reasoning:", String(v.reasoning ?? "(expired)"));
  } else if (!auth) {
    lines.push("Verdict: none (expired after the retention period)");
  }
  if (d.agent_run_id) lines.push("", `Agent run: ${d.agent_run_id}`);
  return `${lines.join("\n")}\n`;
}
