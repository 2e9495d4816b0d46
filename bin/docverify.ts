#!/usr/bin/env node
/**
 * The single `docverify` command. Wiring only: it builds adapters (platform/) and hands them to the api,
 * operator, checks and agent.
 *
 *   docverify standalone                     api + operator + local workloads in one process (npm start)
 *   docverify api | operator                 the cluster runtime's halves (Kubernetes, S3, Redis)
 *   docverify prepare|check|agent --detection <id>   one step of one detection (a Pod's or child's args)
 *   docverify worker --step <step>           a warm worker of one step kind, runs steps sent over IPC (standalone)
 *   docverify step-worker --step <step>      a warm step worker of the cluster: takes steps of one kind from Redis
 *   docverify submit <file|url> [options]    a client for people: submit a document and wait for the verdict
 *   docverify verify <file> <attestation> --jwks <url|file>   verify a signed attestation of a detection
 *   docverify policy dry-run --policy <file>  re-score the last detections under another policy (docs/tuning.md)
 *   docverify calibration-report --client <id>   per check code: fired on genuine vs fraud; proposed overrides
 *   docverify hash-secret                    prints the scrypt hash of a client secret read from stdin
 *   docverify webhooks test …                sends a signed test event to webhook endpoints
 */
import { STEP_NAMES, type StepName } from "../core/detection.js";

const USAGE = `Usage: docverify <command> [options]

Commands:
  standalone                        run the whole service on this machine (what npm start runs)
  api | operator                    run one half of the cluster runtime (in a Pod, or with KUBECONFIG)
  prepare|check|agent --detection <id>   run one step of one detection
  worker --step <step>              run steps of one kind sent by the standalone service over IPC
  step-worker --step <step>         run steps of one kind from the cluster's Redis queue (stepMode workers)
  submit <file-or-url> [options]    submit a document and wait for its verdict (docverify submit --help)
  put-folder <dir> <bucket>[/<prefix>]   copy a local folder into a standalone bucket (to try POST /jobs)
  verify <file> <attestation> --jwks <url-or-file>   verify a detection's signed attestation and re-run
                                    its checks on the file (docverify verify --help)
  policy dry-run --policy <file>    re-score the last detections under a policy, without re-running checks
  calibration-report --client <id>  per check code, how often it fired on documents labelled genuine vs
                                    fraud, and severity overrides with their cross-validated effect
  hash-secret                       print the scrypt hash of a client secret read from standard input
  webhooks test (--client <id> | --url <url> --secret <whsec_…>)   send a signed test event to a client's
                                    webhook endpoints, or to one URL (docverify webhooks test --help)
  --version                         print the version
`;

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  switch (command) {
    case "standalone": {
      const { runStandalone } = await import("./standalone.js");
      return runStandalone();
    }
    case "prepare":
    case "check":
    case "agent": {
      const { runStepCommand } = await import("./step-command.js");
      return runStepCommand(command as StepName, rest);
    }
    case "worker": {
      const { runWorker } = await import("./worker.js");
      return runWorker(rest);
    }
    case "step-worker": {
      const { runStepWorker } = await import("./step-worker.js");
      return runStepWorker(rest);
    }
    case "submit": {
      const { runSubmit } = await import("./submit.js");
      return runSubmit(rest);
    }
    case "verify": {
      const { runVerify } = await import("./verify.js");
      return runVerify(rest);
    }
    case "policy": {
      const { runPolicyCommand } = await import("./policy-cli.js");
      return runPolicyCommand(rest);
    }
    case "calibration-report": {
      const { runCalibrationReport } = await import("./calibration-cli.js");
      return runCalibrationReport(rest);
    }
    case "hash-secret": {
      const { runHashSecret } = await import("./hash-secret.js");
      return runHashSecret();
    }
    case "webhooks": {
      const { runWebhooksCommand } = await import("./webhooks-command.js");
      return runWebhooksCommand(rest);
    }
    case "put-folder": {
      // docverify put-folder <local folder> <bucket>[/<prefix>]: fill a standalone bucket to try POST /jobs.
      const { runPutFolder } = await import("./put-folder.js");
      return runPutFolder(rest);
    }
    case "operator": {
      const { runOperator } = await import("./cluster.js");
      return runOperator();
    }
    case "api": {
      const { runApi } = await import("./cluster.js");
      return runApi();
    }
    case "--version":
    case "version": {
      const { packageVersion } = await import("./submit.js");
      process.stdout.write(`docverify ${packageVersion()}\n`);
      return 0;
    }
    case undefined:
    case "help":
    case "--help":
    case "-h":
      process.stdout.write(USAGE);
      return command === undefined ? 2 : 0;
    default:
      process.stderr.write(`docverify: unknown command "${command}"\n\n${USAGE}`);
      return 2;
  }
}

void STEP_NAMES;
main(process.argv.slice(2)).then(
  (code) => {
    if (code !== -1) process.exitCode = code;
  },
  (err: unknown) => {
    process.stderr.write(`docverify: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 1;
  },
);
