import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { compactVerify, createLocalJWKSet, decodeProtectedHeader, type JSONWebKeySet } from "jose";
import pino from "pino";
import { runCheckStep } from "../checks/step.js";
import {
  ATTESTATION_ALG,
  type AttestationPayload,
  AttestationPayload as PayloadSchema,
  attestedFindings,
} from "../core/attestation.js";
import type { CheckResult } from "../core/check-result.js";
import { loadConfig } from "../core/config.js";
import type { StepContext } from "../core/step-context.js";
import { DOC_TYPES, type DocType } from "../core/verdict.js";
import { createLocalObjectStore } from "../platform/local/object-store.js";
import { runPrepareStep } from "../prepare/step.js";

const HELP = `Usage: docverify verify <file> <attestation> --jwks <url-or-file> [options]

Verifies an attestation of a docverify detection (GET /v1/detection/{id}/attestation):
  1. its signature, with the service's public keys (GET /.well-known/jwks.json, or a saved copy);
  2. that <file> is the document it attests: its SHA-256 equals the payload's document_sha256;
  3. that the checks, run again here on <file>, find the same findings (check, code and severity)
     as the attested ones. Checks whose version differs from the attested one are named: a newer
     check may find differently. Pages, boxes and the score are not compared; the score is signed
     but re-scoring needs the detection's policy, which this command does not read.

<attestation> is a file holding the compact JWS (or the JSON answer {"attestation": "..."}), or the
JWS itself.

Options:
  --jwks <url-or-file>    the service's JWKS: an http(s) URL or a file (required)
  --no-rerun              verify the signature and the file's hash only
  --trust-anchors <pem>   trust anchors for signature.pdf (default: $DOCVERIFY_TRUST_ANCHORS), as the
                          service used them: without them a signed PDF's findings may differ
  --json                  print the result as JSON
  -h, --help              print this help and exit

Exit status: 0 verified, 1 not verified (bad signature, other file, different findings), 2 a usage error.
`;

/** Where the command writes and what it reads from its environment (tests pass their own). */
export interface VerifyIo {
  out(text: string): void;
  err(text: string): void;
  env: Record<string, string | undefined>;
  fetch?: typeof fetch;
}

const processIo: VerifyIo = {
  out: (t) => process.stdout.write(t),
  err: (t) => process.stderr.write(t),
  env: process.env,
};

class UsageError extends Error {}

const JWS_RE = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;

async function readAttestation(arg: string): Promise<string> {
  if (JWS_RE.test(arg) && !existsSync(arg)) return arg;
  let text: string;
  try {
    text = (await readFile(arg, "utf8")).trim();
  } catch (err) {
    throw new UsageError(`cannot read the attestation ${arg}: ${(err as Error).message}`);
  }
  if (text.startsWith("{")) {
    const value = (JSON.parse(text) as { attestation?: unknown }).attestation;
    if (typeof value !== "string") throw new UsageError(`${arg} has no "attestation" string`);
    text = value.trim();
  }
  if (!JWS_RE.test(text)) throw new UsageError(`${arg} holds no compact JWS`);
  return text;
}

async function readJwks(source: string, io: VerifyIo): Promise<JSONWebKeySet> {
  let text: string;
  if (/^https?:\/\//.test(source)) {
    const res = await (io.fetch ?? fetch)(source, { signal: AbortSignal.timeout(30_000) });
    if (!res.ok) throw new Error(`GET ${source} answered ${res.status}`);
    text = await res.text();
  } else {
    try {
      text = await readFile(source, "utf8");
    } catch (err) {
      throw new UsageError(`cannot read the JWKS ${source}: ${(err as Error).message}`);
    }
  }
  const jwks = JSON.parse(text) as JSONWebKeySet;
  if (!Array.isArray(jwks.keys)) throw new Error(`${source} is not a JWK Set (no "keys" array)`);
  return jwks;
}

/** One finding as compared: check, code and severity. */
const findingKey = (f: { check_id: string; code: string; severity: number | null }) =>
  `${f.check_id} ${f.code} severity ${f.severity ?? "-"}`;

/** The multiset difference a − b of finding keys. */
function minus(a: string[], b: string[]): string[] {
  const left = new Map<string, number>();
  for (const k of b) left.set(k, (left.get(k) ?? 0) + 1);
  const out: string[] = [];
  for (const k of a) {
    const n = left.get(k) ?? 0;
    if (n > 0) left.set(k, n - 1);
    else out.push(k);
  }
  return out;
}

/**
 * Runs the prepare and check steps in this process on `bytes`, as the service did (a temporary local
 * object store; the reviewer's page images are not rendered), with the clock at the attested completion.
 */
export async function rerunChecks(
  bytes: Buffer,
  filename: string,
  payload: AttestationPayload,
  trustAnchorsFile: string | undefined,
): Promise<{ checks: CheckResult[] } | { failure: string }> {
  const root = await mkdtemp(path.join(os.tmpdir(), "docverify-verify-"));
  try {
    const config = loadConfig({
      DOCVERIFY_DATA_DIR: root,
      ...(trustAnchorsFile ? { DOCVERIFY_TRUST_ANCHORS: trustAnchorsFile } : {}),
    });
    const objects = createLocalObjectStore(path.join(root, "objects"));
    await objects.ensureBucket(config.bucket);
    await objects.ensureBucket("verify");
    const key = `input/${path.basename(filename).replace(/[^A-Za-z0-9._-]+/g, "_") || "document"}`;
    await objects.put("verify", key, bytes);
    const completed = new Date(payload.completed_at);
    const now = Number.isNaN(completed.getTime()) ? new Date() : completed;
    const ctx: StepContext = {
      objects,
      bucket: config.bucket,
      config,
      log: pino({ level: "silent" }),
      clock: { now: () => now },
    };
    const docType = (DOC_TYPES as readonly string[]).includes(payload.doc_type)
      ? (payload.doc_type as DocType)
      : "other";
    const spec = {
      source: { object: { bucket: "verify", key } },
      docType,
      region: /^[A-Z]{2}$/.test(payload.region) ? payload.region : "US",
      submittedBy: "verify",
      sample: false,
      priority: "interactive" as const,
    };
    const detection = "det-verify";
    const prepared = await runPrepareStep({ detection, step: "prepare", attempt: 1, spec }, ctx);
    if (prepared.failure || !prepared.document) {
      return { failure: `the prepare step refused the file (${prepared.failure?.code ?? "no document"})` };
    }
    const checked = await runCheckStep(
      { detection, step: "check", attempt: 1, spec, document: prepared.document },
      ctx,
      { evidence: false },
    );
    if (checked.failure) return { failure: `the check step failed (${checked.failure.code})` };
    return { checks: checked.checks };
  } finally {
    await rm(root, { recursive: true, force: true });
  }
}

export async function runVerify(argv: string[], io: VerifyIo = processIo): Promise<number> {
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(argv);
  } catch (err) {
    io.err(`docverify verify: ${(err as Error).message}\nRun docverify verify --help for the options.\n`);
    return 2;
  }
  if (parsed.help) {
    io.out(HELP);
    return 0;
  }
  const lines: string[] = [];
  const report: Record<string, unknown> = {};
  const finish = (ok: boolean) => {
    report.verified = ok;
    if (parsed.json) io.out(`${JSON.stringify(report, null, 2)}\n`);
    else io.out(`${[...lines, ok ? "VERIFIED" : "NOT VERIFIED"].join("\n")}\n`);
    return ok ? 0 : 1;
  };
  try {
    const jws = await readAttestation(parsed.attestation);
    const jwks = await readJwks(parsed.jwks, io);
    const header = decodeProtectedHeader(jws);
    let payload: AttestationPayload;
    try {
      if (header.alg !== ATTESTATION_ALG)
        throw new Error(`alg ${String(header.alg)} is not ${ATTESTATION_ALG}`);
      const verified = await compactVerify(jws, createLocalJWKSet(jwks), { algorithms: [ATTESTATION_ALG] });
      payload = PayloadSchema.parse(JSON.parse(new TextDecoder().decode(verified.payload)));
    } catch (err) {
      report.signature = { ok: false, kid: header.kid ?? null, reason: (err as Error).message };
      lines.push(`signature: INVALID (kid ${header.kid ?? "none"}): ${(err as Error).message}`);
      return finish(false);
    }
    report.signature = { ok: true, kid: header.kid ?? null };
    report.detection_id = payload.detection_id;
    lines.push(`signature: valid (kid ${header.kid}), detection ${payload.detection_id}`);

    let bytes: Buffer;
    try {
      bytes = await readFile(parsed.file);
    } catch (err) {
      throw new UsageError(`cannot read ${parsed.file}: ${(err as Error).message}`);
    }
    const sha256 = createHash("sha256").update(bytes).digest("hex");
    const sameFile = sha256 === payload.document_sha256;
    report.document = { ok: sameFile, sha256, attested: payload.document_sha256 };
    lines.push(
      sameFile
        ? `document: sha256 ${sha256} matches`
        : `document: MISMATCH: the file's sha256 is ${sha256}, the attestation's ${payload.document_sha256}`,
    );
    if (!sameFile) return finish(false);

    if (!parsed.rerun) {
      report.rerun = null;
      lines.push("re-run: skipped (--no-rerun)");
      return finish(true);
    }
    const anchors = parsed.trustAnchors ?? io.env.DOCVERIFY_TRUST_ANCHORS;
    const rerun = await rerunChecks(bytes, parsed.file, payload, anchors);
    if ("failure" in rerun) {
      report.rerun = { ok: false, reason: rerun.failure };
      lines.push(`re-run: FAILED: ${rerun.failure}`);
      return finish(false);
    }
    const attested = payload.findings.map(findingKey);
    const local = attestedFindings(rerun.checks).map(findingKey);
    const missing = minus(attested, local);
    const extra = minus(local, attested);
    const versions = new Map(payload.checks.map((c) => [c.id, c.version]));
    const changed = rerun.checks
      .filter((c) => versions.has(c.checkId) && versions.get(c.checkId) !== (c.version ?? null))
      .map(
        (c) =>
          `${c.checkId} (attested ${versions.get(c.checkId) ?? "unversioned"}, here ${c.version ?? "unversioned"})`,
      );
    const same = missing.length === 0 && extra.length === 0;
    report.rerun = { ok: same, findings: local.length, missing, extra, versions_differ: changed };
    lines.push(
      same
        ? `re-run: the same ${local.length} finding(s) (check, code, severity) as attested`
        : `re-run: DIFFERENT findings: ${missing.length} attested but not found here, ${extra.length} found here but not attested`,
    );
    for (const m of missing) lines.push(`  - attested, not found: ${m}`);
    for (const e of extra) lines.push(`  + found, not attested: ${e}`);
    if (changed.length > 0) lines.push(`  checks whose version differs: ${changed.join(", ")}`);
    return finish(same);
  } catch (err) {
    if (err instanceof UsageError) {
      io.err(`docverify verify: ${err.message}\n`);
      return 2;
    }
    io.err(`docverify verify: ${(err as Error).message}\n`);
    return 1;
  }
}

function parse(argv: string[]) {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      jwks: { type: "string" },
      "no-rerun": { type: "boolean" },
      "trust-anchors": { type: "string" },
      json: { type: "boolean" },
      help: { type: "boolean", short: "h" },
    },
  });
  if (values.help)
    return { help: true as const, file: "", attestation: "", jwks: "", rerun: true, json: false };
  if (positionals.length !== 2) throw new Error("expected two arguments: <file> <attestation>");
  if (!values.jwks) throw new Error("--jwks <url-or-file> is required");
  return {
    help: false as const,
    file: positionals[0] as string,
    attestation: positionals[1] as string,
    jwks: values.jwks,
    rerun: !values["no-rerun"],
    trustAnchors: values["trust-anchors"],
    json: values.json ?? false,
  };
}
