import { STEP_NAMES, type StepName } from "../../core/detection.js";

/** Parent → worker: run one step. `env` is the step's whole environment (base + the workload's own). */
export interface RunStepMessage {
  type: "run";
  name: string;
  step: StepName;
  owner: string;
  env: Record<string, string>;
}
/** Worker → parent: the worker listens and can take a step. */
export interface ReadyMessage {
  type: "ready";
}
/** Worker → parent: the step `name` finished; `message` is its summary line. */
export interface StepDoneMessage {
  type: "done";
  name: string;
  exitCode: number;
  message: string;
}

export type StepHandler = (
  step: StepName,
  owner: string,
  env: Record<string, string>,
) => Promise<{ exitCode: number; message: string }>;

function isRunStep(msg: unknown): msg is RunStepMessage {
  const m = msg as Partial<RunStepMessage> | null;
  return (
    typeof m === "object" &&
    m !== null &&
    m.type === "run" &&
    typeof m.name === "string" &&
    typeof m.owner === "string" &&
    (STEP_NAMES as readonly unknown[]).includes(m.step) &&
    typeof m.env === "object" &&
    m.env !== null
  );
}

/**
 * The worker side of the standalone runner's warm pool (`docverify worker`): announces itself ready, then
 * runs the steps its parent sends over IPC one at a time through `handler` and answers each with a `done`
 * message. A handler that throws answers exit code 1 with the error's message. The process exits when the
 * IPC channel closes (the parent is gone). A worker of one step kind (`opts.step`: the standalone runner
 * keeps a pool per kind, so the network-facing prepare step never shares a process with check or agent)
 * refuses a step of another kind without running it.
 */
export function runWorkerLoop(handler: StepHandler, opts: { step?: StepName } = {}): void {
  if (!process.send) {
    throw new Error(
      "The worker command runs steps for the standalone service over an IPC channel; the service starts it, do not run it by hand.",
    );
  }
  const send = (msg: ReadyMessage | StepDoneMessage) => {
    // When the parent is gone the send fails and the disconnect handler ends the process.
    process.send?.(msg, undefined, undefined, () => undefined);
  };
  const queue: RunStepMessage[] = [];
  let busy = false;

  async function drain(): Promise<void> {
    if (busy) return;
    busy = true;
    while (queue.length > 0) {
      const msg = queue.shift()!;
      let exitCode: number;
      let message: string;
      try {
        if (opts.step !== undefined && msg.step !== opts.step) {
          throw new Error(
            `This worker runs only ${opts.step} steps; it was sent a ${msg.step} step, which it did not run.`,
          );
        }
        const result = await handler(msg.step, msg.owner, msg.env);
        exitCode = Number.isInteger(result.exitCode) ? result.exitCode : 1;
        message = String(result.message ?? "");
      } catch (err) {
        exitCode = 1;
        message = err instanceof Error ? err.message : String(err);
      }
      send({ type: "done", name: msg.name, exitCode, message });
    }
    busy = false;
  }

  process.on("message", (msg: unknown) => {
    if (!isRunStep(msg)) return;
    queue.push(msg);
    void drain();
  });
  process.on("disconnect", () => process.exit(0));
  send({ type: "ready" });
}
