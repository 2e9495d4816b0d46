import { type ChildProcess, spawn } from "node:child_process";
import path from "node:path";

export const ROOT = path.resolve(import.meta.dirname, "../..");
export const ENTRY = path.join(ROOT, "dist/bin/docverify.js");

/**
 * One `node dist/bin/docverify.js <command> [...args]` process of the cluster runtime (operator, api or a
 * step worker), with its output kept for assertions and for the failure message of a test.
 */
export class RuntimeProcess {
  proc?: ChildProcess;
  log = "";

  constructor(
    readonly command: "operator" | "api" | "step-worker",
    readonly env: Record<string, string>,
    readonly label: string = command,
    readonly args: string[] = [],
  ) {}

  /** Starts the process and resolves with the first match of `ready` in its output. */
  async start(ready: RegExp, timeoutMs = 60_000): Promise<RegExpExecArray> {
    this.log = "";
    const proc = spawn(process.execPath, [ENTRY, this.command, ...this.args], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/tmp", ...this.env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    this.proc = proc;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`${this.label} did not become ready in ${timeoutMs} ms:\n${this.tail()}`)),
        timeoutMs,
      );
      const onData = (d: Buffer) => {
        this.log += d.toString();
        const m = ready.exec(this.log);
        if (m) {
          clearTimeout(timer);
          resolve(m);
        }
      };
      proc.stdout?.on("data", onData);
      proc.stderr?.on("data", onData);
      proc.once("exit", (code, signal) => {
        clearTimeout(timer);
        reject(new Error(`${this.label} exited (${code ?? signal}) before it was ready:\n${this.tail()}`));
      });
    });
  }

  /** Resolves once `pattern` shows up in the output (after `from` characters). */
  async waitForLog(pattern: RegExp, timeoutMs: number, from = 0): Promise<void> {
    const until = Date.now() + timeoutMs;
    while (!pattern.test(this.log.slice(from))) {
      if (Date.now() > until)
        throw new Error(`${this.label}: no ${pattern} in its output after ${timeoutMs} ms:\n${this.tail()}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  get running(): boolean {
    return !!this.proc && this.proc.exitCode === null && this.proc.signalCode === null;
  }

  /** SIGTERM (graceful, waits up to 20 s, then SIGKILL) or SIGKILL (a crash). Resolves with the exit code. */
  async stop(signal: NodeJS.Signals = "SIGTERM"): Promise<number | null> {
    const p = this.proc;
    if (!p) return null;
    if (p.exitCode !== null || p.signalCode !== null) return p.exitCode;
    const exited = new Promise<number | null>((r) => p.once("exit", (code) => r(code)));
    p.kill(signal);
    const code = await Promise.race([
      exited,
      new Promise<"timeout">((r) => setTimeout(() => r("timeout"), 20_000)),
    ]);
    if (code !== "timeout") return code;
    p.kill("SIGKILL");
    return exited;
  }

  tail(chars = 6000): string {
    return this.log.slice(-chars);
  }
}
