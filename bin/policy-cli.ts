import { readFile } from "node:fs/promises";
import { parseArgs } from "node:util";
import { parse as parseYaml } from "yaml";
import { type RescoreRow, rescore, summarizeRescore } from "../agent/rescore.js";
import { type DetectionPolicySpec, parsePolicy } from "../core/policy.js";
import { lastCompleted, openTenantData, rescoreSubjectOf } from "./tenant-data.js";

const HELP = `Usage: docverify policy dry-run --policy <file> [options]

Re-scores the last detections under the policy in <file> without re-running their checks, and shows
what would change: per detection the score recorded and the score under the policy, then how many
cross 50 (the score from which a document is reported as likely fraud). Nothing is written.

The policy file is JSON or YAML: name, version and the rest of a DetectionPolicy (docs/tuning.md). It
is validated first; an invalid policy is refused with the field that is wrong (exit status 2).

Options:
  --policy <file>     the policy to try (required)
  --last <n>          how many of the most recently completed detections (default 50)
  --client <id>       only the detections this client submitted
  --data-dir <dir>    a standalone service's data folder (default: $DOCVERIFY_DATA_DIR or .data)
  --cluster           read the cluster's Detections and object store (KUBECONFIG, S3_* settings)
  --json              print {rows, summary} as JSON
  -h, --help          print this help and exit

Detections scored by the llm engine are listed but not re-scored (the model's answer is not recorded);
detections decided by signature.pdf have no score to change.
`;

export interface CliIo {
  out(text: string): void;
  err(text: string): void;
  env: Record<string, string | undefined>;
}

const processIo: CliIo = {
  out: (t) => process.stdout.write(t),
  err: (t) => process.stderr.write(t),
  env: process.env,
};

/** Reads and validates a policy file (JSON or YAML); the problems name the wrong field. */
export async function readPolicyFile(
  file: string,
): Promise<{ ok: true; policy: DetectionPolicySpec } | { ok: false; problems: string[] }> {
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (err) {
    return {
      ok: false,
      problems: [`${file} cannot be read: ${err instanceof Error ? err.message : String(err)}`],
    };
  }
  let doc: unknown;
  try {
    doc = /\.json$/i.test(file) ? JSON.parse(text) : parseYaml(text);
  } catch (err) {
    return {
      ok: false,
      problems: [
        `${file} is not valid JSON or YAML: ${err instanceof Error ? err.message.split("\n")[0] : ""}`,
      ],
    };
  }
  return parsePolicy(doc);
}

const fmt = (n: number | null) => (n === null ? "-" : String(n));

export function renderRows(rows: readonly RescoreRow[]): string {
  const lines = ["detection                         old  new  change  crosses 50"];
  for (const r of rows) {
    const change =
      r.oldScore === null || r.newScore === null
        ? ""
        : r.newScore - r.oldScore === 0
          ? "0"
          : `${r.newScore - r.oldScore > 0 ? "+" : ""}${r.newScore - r.oldScore}`;
    const crosses = r.crossed === "up" ? "up" : r.crossed === "down" ? "down" : "";
    lines.push(
      `${r.id.padEnd(32)} ${fmt(r.oldScore).padStart(4)} ${fmt(r.newScore).padStart(4)}  ${change.padStart(6)}  ${crosses}${r.note ? `  (${r.note})` : ""}`,
    );
  }
  return `${lines.join("\n")}\n`;
}

/** `docverify policy <subcommand>`. */
export async function runPolicyCommand(argv: string[], io: CliIo = processIo): Promise<number> {
  const [sub, ...rest] = argv;
  if (sub !== "dry-run") {
    io.err(
      sub === undefined || sub === "-h" || sub === "--help"
        ? HELP
        : `Unknown policy subcommand "${sub}".\n\n${HELP}`,
    );
    return sub === "-h" || sub === "--help" ? 0 : 2;
  }
  let values: Record<string, string | boolean | undefined>;
  try {
    values = parseArgs({
      args: rest,
      options: {
        policy: { type: "string" },
        last: { type: "string" },
        client: { type: "string" },
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
  if (typeof values.policy !== "string") {
    io.err(`--policy <file> is required.\n\n${HELP}`);
    return 2;
  }
  const last = values.last === undefined ? 50 : Number(values.last);
  if (!Number.isInteger(last) || last < 1 || last > 100_000) {
    io.err("--last must be a whole number from 1 to 100000.\n");
    return 2;
  }
  const read = await readPolicyFile(values.policy);
  if (!read.ok) {
    io.err(`The policy in ${values.policy} is refused:\n${read.problems.map((p) => `  ${p}\n`).join("")}`);
    return 2;
  }
  const data = await openTenantData({
    cluster: values.cluster === true,
    ...(typeof values["data-dir"] === "string" ? { dataDir: values["data-dir"] } : {}),
    env: io.env,
  });
  try {
    const detections = await lastCompleted(
      data,
      last,
      typeof values.client === "string" ? values.client : undefined,
    );
    const rows: RescoreRow[] = [];
    for (const d of detections) {
      const s = await rescoreSubjectOf(data, d);
      if (!s.ok) {
        rows.push({
          id: d.metadata.name,
          oldScore: d.status?.score ?? null,
          newScore: d.status?.score ?? null,
          oldPolicy: d.status?.policy ?? null,
          newPolicy: { name: read.policy.name, version: read.policy.version },
          crossed: null,
          note: `${s.reason}: not re-scored`,
        });
        continue;
      }
      rows.push(rescore(s.subject, read.policy));
    }
    const summary = summarizeRescore(rows);
    if (values.json) {
      io.out(
        `${JSON.stringify({ policy: { name: read.policy.name, version: read.policy.version }, rows, summary }, null, 2)}\n`,
      );
      return 0;
    }
    io.out(renderRows(rows));
    io.out(
      `\nPolicy ${read.policy.name} v${read.policy.version} over the last ${summary.total} completed detection(s): ` +
        `${summary.rescored} re-scored, ${summary.changed} change score; ${summary.crossedUp} would newly reach 50 or more, ` +
        `${summary.crossedDown} would fall below 50` +
        (summary.notRescored > 0 ? `; ${summary.notRescored} not re-scored (see the notes)` : "") +
        ".\n",
    );
    return 0;
  } finally {
    await data.close();
  }
}
