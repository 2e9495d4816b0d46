import { existsSync } from "node:fs";
import { readFile, stat } from "node:fs/promises";
import path from "node:path";
import { parseArgs } from "node:util";

const HELP = `Usage: docverify submit <file-or-url> [options]

Submits a document to a running docverify service and waits for its verdict.
A local file is uploaded (POST /v1/uploads, then PUT); an http(s) URL is sent as source_url.

Options:
  --doc-type <type>       declared document type (default: other)
  --region <code>         ISO 3166-1 alpha-2 region of the document (default: US)
  --sample                a sample run (X-Sample-Run: true)
  --url <base>            service base URL (default: $DOCVERIFY_URL or http://127.0.0.1:8080)
  --client-id <id>        client id (default: $DOCVERIFY_CLIENT_ID, or the standalone development client)
  --client-secret <s>     client secret (default: $DOCVERIFY_CLIENT_SECRET, or the development client's)
  --timeout <seconds>     how long to wait for the verdict (default: 600)
  --no-wait               print the created detection and return at once
  --json                  print the final DetectionDetail as JSON instead of a summary
`;

type Json = Record<string, unknown>;

export async function runSubmit(argv: string[]): Promise<number> {
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(argv);
  } catch (err) {
    process.stderr.write(`docverify submit: ${(err as Error).message}\n\n${HELP}`);
    return 2;
  }
  const { values, positionals } = parsed;
  if (values.help) {
    process.stdout.write(HELP);
    return 0;
  }
  const target = positionals[0];
  if (!target || positionals.length > 1) {
    process.stderr.write(`docverify submit: give exactly one file or URL\n\n${HELP}`);
    return 2;
  }
  const base = (values.url ?? process.env.DOCVERIFY_URL ?? "http://127.0.0.1:8080").replace(/\/+$/, "");
  const creds = await credentials(values["client-id"], values["client-secret"]);
  if (!creds) {
    process.stderr.write(
      "docverify submit: no credentials; pass --client-id and --client-secret (or set DOCVERIFY_CLIENT_ID and DOCVERIFY_CLIENT_SECRET)\n",
    );
    return 2;
  }
  const say = (line: string) => {
    if (!values.json) process.stderr.write(`${line}\n`);
  };

  const token = await getToken(base, creds);
  const auth = { authorization: `Bearer ${token}` };
  const body: Json = { doc_type: values["doc-type"] ?? "other", region: values.region ?? "US" };
  if (/^https?:\/\//i.test(target)) {
    body.source_url = target;
  } else {
    const file = path.resolve(target);
    const info = await stat(file).catch(() => undefined);
    if (!info?.isFile()) {
      process.stderr.write(`docverify submit: ${target} is neither a file nor an http(s) URL\n`);
      return 2;
    }
    const upload = await call(
      base,
      "POST",
      "/v1/uploads",
      { ...auth, "content-type": "application/json" },
      JSON.stringify({ filename: path.basename(file) }),
    );
    say(`Uploading ${path.basename(file)} (${info.size} bytes)…`);
    const put = await fetch(String(upload.upload_url), {
      method: "PUT",
      headers: { "content-type": "application/octet-stream" },
      body: await readFile(file),
    });
    if (!put.ok) throw new Error(`upload failed: HTTP ${put.status} ${await put.text()}`);
    body.upload_id = upload.upload_id;
  }
  const headers: Record<string, string> = { ...auth, "content-type": "application/json" };
  if (values.sample) headers["x-sample-run"] = "true";
  const created = await call(base, "POST", "/v1/detection", headers, JSON.stringify(body));
  const id = String(created.id);
  say(`Detection ${id} created (${created.status}).`);
  if (values["no-wait"]) {
    process.stdout.write(`${JSON.stringify(created, null, 2)}\n`);
    return 0;
  }

  const deadline = Date.now() + Number(values.timeout ?? 600) * 1000;
  let last = "";
  let detail: Json = created;
  const started = Date.now();
  while (detail.status !== "COMPLETED" && detail.status !== "FAILED") {
    if (Date.now() > deadline) {
      process.stderr.write(
        `docverify submit: gave up waiting for ${id} after ${values.timeout ?? 600} s (status ${detail.status})\n`,
      );
      return 1;
    }
    await new Promise((r) => setTimeout(r, 1000));
    detail = await call(base, "GET", `/v1/detection/${id}`, auth);
    const s = String(detail.status);
    if (s !== last) {
      say(`  ${((Date.now() - started) / 1000).toFixed(1)} s  ${s}`);
      last = s;
    }
  }
  if (values.json) process.stdout.write(`${JSON.stringify(detail, null, 2)}\n`);
  else process.stdout.write(formatSummary(detail));
  return detail.status === "COMPLETED" ? 0 : 1;
}

function parse(argv: string[]) {
  return parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      "doc-type": { type: "string" },
      region: { type: "string" },
      sample: { type: "boolean" },
      url: { type: "string" },
      "client-id": { type: "string" },
      "client-secret": { type: "string" },
      timeout: { type: "string" },
      "no-wait": { type: "boolean" },
      json: { type: "boolean" },
      help: { type: "boolean", short: "h" },
    },
  });
}

async function credentials(
  id?: string,
  secret?: string,
): Promise<{ id: string; secret: string } | undefined> {
  id ??= process.env.DOCVERIFY_CLIENT_ID;
  secret ??= process.env.DOCVERIFY_CLIENT_SECRET;
  if (id && secret) return { id, secret };
  const file = path.resolve(process.env.DOCVERIFY_DATA_DIR ?? ".data", "dev-client.json");
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
    throw new Error(`cannot reach ${base} (${(err as Error).message}); is the service running?`);
  }
  const text = await res.text();
  let json: Json;
  try {
    json = JSON.parse(text) as Json;
  } catch {
    throw new Error(`${method} ${p}: HTTP ${res.status} with a body that is not JSON`);
  }
  if (!res.ok) {
    const d = json.detail;
    throw new Error(`${method} ${p}: HTTP ${res.status}: ${typeof d === "string" ? d : JSON.stringify(d)}`);
  }
  return json;
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
