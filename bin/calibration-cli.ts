import { parseArgs } from "node:util";
import {
  type CalibrationReport,
  calibrationReport,
  type LabelledDetection,
  MIN_FIRED,
} from "../agent/calibration.js";
import { readArchivedDetection } from "../core/archive.js";
import { POLICY_SNAPSHOT } from "../core/detection-policy.js";
import { FEEDBACK, feedbackKeys } from "../core/feedback.js";
import { DEFAULT_POLICY, type DetectionPolicySpec } from "../core/policy.js";
import { readStored } from "../core/stored.js";
import { type CliIo, readPolicyFile } from "./policy-cli.js";
import { openTenantData, rescoreSubjectOf, type TenantData } from "./tenant-data.js";

const HELP = `Usage: docverify calibration-report --client <id> [options]

From the detections of <id> that its reviewers labelled (PUT /v1/detection/{id}/feedback): per check
code, how often it fired on documents labelled genuine and on documents labelled confirmed_fraud; then
severity overrides (a policy fragment to add to the client's policy) that raise the detection rate minus
the false-positive rate, with their effect estimated by 5-fold cross-validation (chosen on four fifths of
the history, measured on the fifth left out). Overrides are proposed only for codes that fired
on at least ${MIN_FIRED} labelled documents, and never above "specific" (docs/tuning.md says why).
Detections labelled unsure, and those whose results are gone (retention), are left out.

Options:
  --client <id>       the client whose labelled detections are read (required)
  --policy <file>     the policy to start from (default: the one the newest labelled detection was
                      scored under)
  --future <n>        size of the new set the intervals are for (default: as many as labelled)
  --data-dir <dir>    a standalone service's data folder (default: $DOCVERIFY_DATA_DIR or .data)
  --cluster           read the cluster's Detections and object store (KUBECONFIG, S3_* settings)
  --json              print the report as JSON
  -h, --help          print this help and exit
`;

const processIo: CliIo = {
  out: (t) => process.stdout.write(t),
  err: (t) => process.stderr.write(t),
  env: process.env,
};

/** The client's labelled detections (genuine / confirmed_fraud) whose results are still stored. */
export async function labelledDetections(
  data: TenantData,
  client: string,
): Promise<{ labelled: LabelledDetection[]; skipped: string[]; newestPolicy?: DetectionPolicySpec }> {
  const labelled: (LabelledDetection & { at: string })[] = [];
  const skipped: string[] = [];
  let newest: { at: string; id: string } | undefined;
  for await (const o of data.objects.list(data.bucket, feedbackKeys.markerPrefix(client))) {
    const id = o.key.slice(feedbackKeys.markerPrefix(client).length);
    const fb = await readStored(data.objects, data.bucket, FEEDBACK, id);
    if (fb.kind !== "ok" || fb.value.clientId !== client) {
      skipped.push(`${id}: its feedback is gone`);
      continue;
    }
    if (fb.value.label === "unsure") continue;
    const d =
      (await data.detections.get(id)) ?? (await readArchivedDetection(data.objects, data.bucket, client, id));
    if (!d || d.spec.submittedBy !== client) {
      skipped.push(`${id}: the detection is gone`);
      continue;
    }
    const s = await rescoreSubjectOf(data, d);
    if (!s.ok) {
      skipped.push(`${id}: ${s.reason}`);
      continue;
    }
    labelled.push({ subject: s.subject, label: fb.value.label, at: d.status?.completedAt ?? "" });
    if (!newest || (d.status?.completedAt ?? "") > newest.at)
      newest = { at: d.status?.completedAt ?? "", id };
  }
  let newestPolicy: DetectionPolicySpec | undefined;
  if (newest) {
    const snap = await readStored(data.objects, data.bucket, POLICY_SNAPSHOT, newest.id);
    if (snap.kind === "ok") newestPolicy = snap.value;
  }
  labelled.sort((a, b) => a.subject.id.localeCompare(b.subject.id));
  return {
    labelled: labelled.map(({ at: _at, ...l }) => l),
    skipped,
    ...(newestPolicy ? { newestPolicy } : {}),
  };
}

const pct = (x: number, n: number) => (n === 0 ? "-" : `${((100 * x) / n).toFixed(1)}%`);
const pctOf = (v: number) => `${(100 * v).toFixed(1)}%`;

export function renderReport(r: CalibrationReport, base: DetectionPolicySpec): string {
  const lines: string[] = [];
  lines.push(
    `Labelled detections: ${r.labelled.genuine} genuine, ${r.labelled.fraud} confirmed fraud (starting from policy ${base.name} v${base.version}).`,
    "",
    "check code                                          genuine  fraud  proposal",
  );
  const proposed = new Map(r.proposal.severity.map((o) => [`${o.check} ${o.code}`, o.severity]));
  for (const c of r.codes) {
    const name = `${c.check} ${c.code}`;
    const p = proposed.get(name);
    lines.push(
      `${name.padEnd(50)} ${String(c.firedGenuine).padStart(7)} ${String(c.firedFraud).padStart(6)}  ${
        p !== undefined ? `severity ${p}` : c.eligible ? "keep" : `too few (< ${r.minFired})`
      }`,
    );
  }
  lines.push(
    "",
    `Under the current policy: false positives ${r.current.falsePositives}/${r.current.genuine} (${pct(r.current.falsePositives, r.current.genuine)}), detected ${r.current.detected}/${r.current.fraud} (${pct(r.current.detected, r.current.fraud)}).`,
    `With the proposed overrides, ${r.folds}-fold cross-validated: FPR ${pctOf(r.expected.fpr)} (95% interval for a new set ${pctOf(r.expected.fprInterval[0])}-${pctOf(r.expected.fprInterval[1])}), detection ${pctOf(r.expected.detection)} (${pctOf(r.expected.detectionInterval[0])}-${pctOf(r.expected.detectionInterval[1])}).`,
    "",
    r.proposal.severity.length === 0
      ? "No override proposed."
      : `Proposed overrides (add to the policy's severity list, raise its version):\n${JSON.stringify(r.proposal, null, 2)}`,
  );
  return `${lines.join("\n")}\n`;
}

export async function runCalibrationReport(argv: string[], io: CliIo = processIo): Promise<number> {
  let values: Record<string, string | boolean | undefined>;
  try {
    values = parseArgs({
      args: argv,
      options: {
        client: { type: "string" },
        policy: { type: "string" },
        future: { type: "string" },
        "data-dir": { type: "string" },
        cluster: { type: "boolean" },
        json: { type: "boolean" },
        help: { type: "boolean", short: "h" },
      },
    }).values;
  } catch (err) {
    io.err(`${err instanceof Error ? err.message : String(err)}\n\n${HELP}`);
    return 2;
  }
  if (values.help) {
    io.out(HELP);
    return 0;
  }
  if (typeof values.client !== "string") {
    io.err(`--client <id> is required.\n\n${HELP}`);
    return 2;
  }
  const future = values.future === undefined ? undefined : Number(values.future);
  if (future !== undefined && (!Number.isInteger(future) || future < 1)) {
    io.err("--future must be a whole number of 1 or more.\n");
    return 2;
  }
  let base: DetectionPolicySpec | undefined;
  if (typeof values.policy === "string") {
    const read = await readPolicyFile(values.policy);
    if (!read.ok) {
      io.err(`The policy in ${values.policy} is refused:\n${read.problems.map((p) => `  ${p}\n`).join("")}`);
      return 2;
    }
    base = read.policy;
  }
  const data = await openTenantData({
    cluster: values.cluster === true,
    ...(typeof values["data-dir"] === "string" ? { dataDir: values["data-dir"] } : {}),
    env: io.env,
  });
  try {
    const { labelled, skipped, newestPolicy } = await labelledDetections(data, values.client);
    const from = base ?? newestPolicy ?? DEFAULT_POLICY;
    const genuine = labelled.filter((l) => l.label === "genuine").length;
    if (genuine === 0 || genuine === labelled.length) {
      io.err(
        `Client ${values.client} has ${labelled.length} labelled detection(s) with results, ${genuine} genuine: the report needs documents labelled genuine and documents labelled confirmed_fraud.\n`,
      );
      return 1;
    }
    const report = calibrationReport(labelled, from, future !== undefined ? { futureSize: future } : {});
    if (values.json)
      io.out(
        `${JSON.stringify({ policy: { name: from.name, version: from.version }, ...report, skipped }, null, 2)}\n`,
      );
    else {
      io.out(renderReport(report, from));
      if (skipped.length) io.out(`\nLeft out: ${skipped.join("; ")}.\n`);
    }
    return 0;
  } finally {
    await data.close();
  }
}
