import { type ChildProcess, spawn } from "node:child_process";
import {
  ApiException,
  CoreV1Api,
  KubeConfig,
  PatchStrategy,
  type V1Container,
  type V1Pod,
  Watch,
  setHeaderOptions,
} from "@kubernetes/client-node";
import { forEachLine, truncateUtf8 } from "../../platform/local/output-lines.js";
import type { ClusterAccess } from "./api-request.js";

/**
 * The harness that plays the node of the test cluster (which has no kubelet, scheduler or
 * controller-manager): it runs each new Pod's first container as a local process and writes the Pod's
 * status back through pods/status, the way a kubelet would report it.
 */

export interface NodePlayerOptions {
  namespace: string;
  /** Environment under the Pod's own env (the Pod wins). PATH is always passed on. */
  env?: Record<string, string>;
  /** Replaces a container command's first element when it is `docverify`, e.g. [node, "/abs/dist/bin/docverify.js"]. */
  command?: string[];
  /** Working directory of the processes; default the test process's. */
  cwd?: string;
  /** Where the player's own notes go (ignored valueFrom env, lost watches, status write failures). */
  log?: (line: string) => void;
  /** Per-Pod stdout/stderr lines, for debugging a step. */
  onOutput?: (pod: string, stream: "stdout" | "stderr", line: string) => void;
}

export interface NodePlayer {
  /** Names of the Pods whose processes are running now. */
  running(): string[];
  /** Stops watching and kills every process it started (their Pods keep their last written status). */
  stop(): Promise<void>;
}

export class NodePlayerError extends Error {
  constructor(
    readonly code: "namespace_missing" | "forbidden" | "api_failed",
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = "NodePlayerError";
  }
}

/** Kubernetes caps a termination message at 4096 bytes. */
export const TERMINATION_MESSAGE_MAX_BYTES = 4096;

type TerminatedReason = "Completed" | "Error" | "DeadlineExceeded" | "StartError";

interface Run {
  pod: string;
  uid: string;
  container: V1Container;
  child?: ChildProcess;
  startedAt: string;
  lastLine: string;
  deadline?: NodeJS.Timeout;
  killedFor?: "deadline" | "deleted" | "stopped";
  /** Serialises this Pod's status writes (Running always lands before the terminal status). */
  writes: Promise<void>;
  done: Promise<void>;
}

const errorCode = (err: unknown) => (err instanceof ApiException ? err.code : undefined);

export function buildKubeConfig(access: ClusterAccess): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: "test", server: access.url, caData: Buffer.from(access.caPem).toString("base64") }],
    users: [{ name: "user", token: access.token }],
    contexts: [{ name: "test", cluster: "test", user: "user" }],
    currentContext: "test",
  });
  return kc;
}

/** The process a container runs: command + args, with a leading `docverify` mapped to opts.command. */
export function containerArgv(container: V1Container, docverify?: string[]): string[] | { error: string } {
  const argv = [...(container.command ?? []), ...(container.args ?? [])];
  if (argv.length === 0) {
    return {
      error: `container ${container.name} has no command; the node player cannot run an image's entrypoint`,
    };
  }
  if (argv[0] === "docverify") {
    if (!docverify || docverify.length === 0) {
      return {
        error: "the container runs `docverify` but the node player was given no local command for it",
      };
    }
    return [...docverify, ...argv.slice(1)];
  }
  return argv;
}

function signalNumber(signal: NodeJS.Signals | null): number {
  return signal === "SIGKILL" ? 9 : signal === "SIGTERM" ? 15 : signal === "SIGINT" ? 2 : 1;
}

async function ensureDefaultServiceAccount(core: CoreV1Api, namespace: string): Promise<void> {
  try {
    await core.readNamespacedServiceAccount({ namespace, name: "default" });
  } catch (err) {
    const code = errorCode(err);
    if (code === 404) {
      try {
        await core.createNamespacedServiceAccount({
          namespace,
          body: { apiVersion: "v1", kind: "ServiceAccount", metadata: { name: "default" } },
        });
        return;
      } catch (createErr) {
        const c = errorCode(createErr);
        if (c === 409) return;
        if (c === 404 || c === 403) {
          throw new NodePlayerError(
            c === 404 ? "namespace_missing" : "forbidden",
            c === 404
              ? `node player: namespace ${namespace} does not exist; create it before starting the node player`
              : `node player: the harness identity may not create ServiceAccounts in ${namespace}; bind it to the node player's role`,
            { cause: createErr },
          );
        }
        throw new NodePlayerError(
          "api_failed",
          `node player: creating ServiceAccount ${namespace}/default failed`,
          {
            cause: createErr,
          },
        );
      }
    }
    if (code === 403) {
      throw new NodePlayerError(
        "forbidden",
        `node player: the harness identity may not read ServiceAccounts in ${namespace}; bind it to the node player's role`,
        { cause: err },
      );
    }
    throw new NodePlayerError(
      "api_failed",
      `node player: reading ServiceAccount ${namespace}/default failed`,
      {
        cause: err,
      },
    );
  }
}

/**
 * Starts playing the node for one namespace: ensures its `default` ServiceAccount, lists and watches
 * Pods, and runs every Pending Pod it has not run yet. Resolves once the first list is done.
 */
export async function startNodePlayer(access: ClusterAccess, opts: NodePlayerOptions): Promise<NodePlayer> {
  const { namespace } = opts;
  const log = opts.log ?? (() => {});
  const kc = buildKubeConfig(access);
  const core = kc.makeApiClient(CoreV1Api);
  const mergePatch = setHeaderOptions("Content-Type", PatchStrategy.MergePatch);
  const runs = new Map<string, Run>(); // by Pod uid
  let stopped = false;
  let watchAbort: AbortController | undefined;
  let rewatchTimer: NodeJS.Timeout | undefined;

  await ensureDefaultServiceAccount(core, namespace);

  /** `status` is sent as JSON as is (timestamps as RFC 3339 strings). */
  const writeStatus = (run: Run, status: Record<string, unknown>): void => {
    run.writes = run.writes.then(async () => {
      try {
        await core.patchNamespacedPodStatus({ name: run.pod, namespace, body: { status } }, mergePatch);
      } catch (err) {
        // 404: the Pod was deleted meanwhile, which is not an error for a node.
        if (errorCode(err) !== 404)
          log(`node player: writing the status of pod ${run.pod} failed: ${String(err)}`);
      }
    });
  };

  const containerStatus = (run: Run, state: Record<string, unknown>, ready: boolean) => ({
    name: run.container.name,
    image: run.container.image ?? "",
    imageID: "",
    ready,
    started: ready,
    restartCount: 0,
    state,
  });

  const finish = (run: Run, exitCode: number, reason: TerminatedReason, message: string): void => {
    if (run.deadline) clearTimeout(run.deadline);
    const finishedAt = new Date().toISOString();
    const succeeded = exitCode === 0 && reason === "Completed";
    writeStatus(run, {
      phase: succeeded ? "Succeeded" : "Failed",
      ...(reason === "DeadlineExceeded"
        ? {
            reason: "DeadlineExceeded",
            message: "Pod was active on the node longer than the specified deadline",
          }
        : {}),
      containerStatuses: [
        containerStatus(
          run,
          {
            terminated: {
              exitCode,
              reason,
              message: truncateUtf8(message, TERMINATION_MESSAGE_MAX_BYTES),
              startedAt: run.startedAt,
              finishedAt,
            },
          },
          false,
        ),
      ],
    });
  };

  const kill = (run: Run, why: NonNullable<Run["killedFor"]>): void => {
    if (!run.child || run.child.exitCode !== null || run.child.signalCode !== null) return;
    run.killedFor ??= why;
    try {
      process.kill(-(run.child.pid ?? 0), "SIGKILL"); // the whole process group: a step's children too
    } catch {
      run.child.kill("SIGKILL");
    }
  };

  const runPod = (pod: V1Pod): void => {
    const uid = pod.metadata?.uid;
    const name = pod.metadata?.name;
    const container = pod.spec?.containers?.[0];
    if (!uid || !name || !container || runs.has(uid)) return;
    const phase = pod.status?.phase;
    if (pod.metadata?.deletionTimestamp || (phase && phase !== "Pending")) return;

    const startedAt = new Date().toISOString();
    let resolveDone: () => void = () => {};
    const run: Run = {
      pod: name,
      uid,
      container,
      startedAt,
      lastLine: "",
      writes: Promise.resolve(),
      done: new Promise((r) => {
        resolveDone = r;
      }),
    };
    runs.set(uid, run);

    const argv = containerArgv(container, opts.command);
    writeStatus(run, {
      phase: "Running",
      startTime: startedAt,
      conditions: [{ type: "Ready", status: "True", lastTransitionTime: startedAt }],
      containerStatuses: [containerStatus(run, { running: { startedAt } }, true)],
    });
    if ("error" in argv) {
      log(`node player: pod ${name}: ${argv.error}`);
      finish(run, 128, "StartError", argv.error);
      void run.writes.then(resolveDone);
      return;
    }

    const env: Record<string, string> = {
      PATH: process.env.PATH ?? "/usr/bin:/bin",
      HOSTNAME: name,
      ...opts.env,
    };
    for (const e of container.env ?? []) {
      if (e.value !== undefined) env[e.name] = e.value;
      else if (e.valueFrom)
        log(`node player: pod ${name}: env ${e.name} uses valueFrom, which is not supported; left unset`);
      else env[e.name] = "";
    }

    const [file, ...args] = argv as [string, ...string[]];
    const child = spawn(file, args, {
      env,
      cwd: opts.cwd,
      stdio: ["ignore", "pipe", "pipe"],
      detached: true,
    });
    run.child = child;
    const stdoutDone = new Promise<void>((r) => child.stdout.once("close", r));
    forEachLine(child.stdout, (line) => {
      if (line.trim() !== "") run.lastLine = line;
      opts.onOutput?.(name, "stdout", line);
    });
    forEachLine(child.stderr, (line) => opts.onOutput?.(name, "stderr", line));

    const deadlineSeconds = pod.spec?.activeDeadlineSeconds;
    if (typeof deadlineSeconds === "number") {
      run.deadline = setTimeout(() => kill(run, "deadline"), deadlineSeconds * 1000);
    }

    let spawnError: Error | undefined;
    child.once("error", (err) => {
      spawnError = err;
    });
    child.once("close", (code, signal) => {
      void stdoutDone.then(() => {
        if (spawnError) {
          finish(run, 128, "StartError", `node player could not start ${file}: ${spawnError.message}`);
        } else if (run.killedFor === "deadline") {
          finish(run, 137, "DeadlineExceeded", run.lastLine);
        } else if (run.killedFor === "deleted") {
          // The Pod is gone: there is no status left to write.
          if (run.deadline) clearTimeout(run.deadline);
        } else {
          const exitCode = code ?? 128 + signalNumber(signal);
          if (run.killedFor !== "stopped")
            finish(run, exitCode, exitCode === 0 ? "Completed" : "Error", run.lastLine);
        }
        void run.writes.then(resolveDone);
      });
    });
  };

  const onPodGone = (pod: V1Pod): void => {
    const run = pod.metadata?.uid ? runs.get(pod.metadata.uid) : undefined;
    if (run) kill(run, "deleted");
  };

  const scheduleRewatch = (why: string): void => {
    if (stopped || rewatchTimer) return;
    log(`node player: relisting pods in ${namespace} (${why})`);
    rewatchTimer = setTimeout(() => {
      rewatchTimer = undefined;
      void listAndWatch().catch((err) => scheduleRewatch(`list failed: ${String(err)}`));
    }, 200);
  };

  const listAndWatch = async (): Promise<void> => {
    const list = await core.listNamespacedPod({ namespace });
    if (stopped) return;
    const present = new Set<string>();
    for (const pod of list.items) {
      if (pod.metadata?.uid) present.add(pod.metadata.uid);
      if (pod.metadata?.deletionTimestamp) onPodGone(pod);
      else runPod(pod);
    }
    // A Pod deleted while no watch was open.
    for (const [uid, run] of runs) if (!present.has(uid)) kill(run, "deleted");

    watchAbort = await new Watch(kc).watch(
      `/api/v1/namespaces/${encodeURIComponent(namespace)}/pods`,
      { resourceVersion: list.metadata?.resourceVersion, allowWatchBookmarks: true, timeoutSeconds: 25 },
      (type, obj: V1Pod & { code?: number }) => {
        if (type === "ADDED" || type === "MODIFIED") {
          if (obj.metadata?.deletionTimestamp) onPodGone(obj);
          else runPod(obj);
        } else if (type === "DELETED") {
          onPodGone(obj);
        } else if (type === "ERROR") {
          scheduleRewatch(`watch error ${obj.code ?? ""}`.trim());
        }
      },
      (err: unknown) => {
        if (!stopped) scheduleRewatch(err ? `watch ended: ${String(err)}` : "watch ended");
      },
    );
  };

  try {
    await listAndWatch();
  } catch (err) {
    const code = errorCode(err);
    throw new NodePlayerError(
      code === 403 ? "forbidden" : "api_failed",
      code === 403
        ? `node player: the harness identity may not list pods in ${namespace}; bind it to the node player's role`
        : `node player: listing pods in ${namespace} failed: ${String(err)}`,
      { cause: err },
    );
  }

  return {
    running: () =>
      [...runs.values()]
        .filter((r) => r.child && r.child.exitCode === null && !r.child.signalCode)
        .map((r) => r.pod),
    async stop() {
      stopped = true;
      if (rewatchTimer) clearTimeout(rewatchTimer);
      watchAbort?.abort();
      for (const run of runs.values()) kill(run, "stopped");
      await Promise.all([...runs.values()].map((r) => r.done));
    },
  };
}
