/**
 * Test support: a throwaway `redis-server` on a free loopback port, for the scheduler tests and the
 * cluster e2e. Nothing is persisted (`--save '' --appendonly no`), so a restart starts empty.
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { once } from "node:events";
import { createServer, Socket } from "node:net";

const REDIS_BIN = process.env.DOCVERIFY_REDIS_SERVER_BIN ?? "redis-server";
const HOW_TO_GET = "install it with `npm run test:setup` (or `apt-get install redis-server`)";

export interface RedisServer {
  /** `redis://127.0.0.1:<port>` */
  url: string;
  port: number;
  /** Kills the server and waits until it is gone. Idempotent. */
  stop(): Promise<void>;
  /** Kills the server and starts a new, empty one on the same port. */
  restart(): Promise<void>;
}

/** Whether a `redis-server` binary can run here; `reason` says why not and how to get it. */
export function redisServerAvailable(): { ok: boolean; reason?: string } {
  const r = spawnSync(REDIS_BIN, ["--version"], { encoding: "utf8", timeout: 10_000 });
  if (r.error || r.status !== 0) {
    const why = r.error ? r.error.message : `exit code ${r.status}`;
    return { ok: false, reason: `redis-server is not available (${why}); ${HOW_TO_GET}.` };
  }
  return { ok: true };
}

/** A port the kernel just handed out on 127.0.0.1 (free at that moment). */
async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : 0;
  server.close();
  await once(server, "close");
  return port;
}

/** Resolves once the server answers PING with PONG; rejects when it exits first or after `timeoutMs`. */
async function waitForPong(port: number, child: ChildProcess, stderr: () => string, timeoutMs: number) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(
        `redis-server exited (${child.exitCode ?? child.signalCode}) on port ${port}: ${stderr()}`,
      );
    }
    const pong = await new Promise<boolean>((resolve) => {
      const socket = new Socket();
      let answer = "";
      const done = (ok: boolean) => {
        socket.destroy();
        resolve(ok);
      };
      socket.setTimeout(500, () => done(false));
      socket.once("error", () => done(false));
      socket.on("data", (d) => {
        answer += d.toString();
        if (answer.includes("\r\n")) done(answer.startsWith("+PONG"));
      });
      socket.connect(port, "127.0.0.1", () => socket.write("PING\r\n"));
    });
    if (pong) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`redis-server on port ${port} did not answer PING within ${timeoutMs} ms: ${stderr()}`);
}

function launch(port: number): { child: ChildProcess; output: () => string } {
  const child = spawn(
    REDIS_BIN,
    [
      "--port",
      String(port),
      "--bind",
      "127.0.0.1",
      "--save",
      "",
      "--appendonly",
      "no",
      "--loglevel",
      "warning",
    ],
    { stdio: ["ignore", "pipe", "pipe"] },
  );
  let text = "";
  const keep = (d: Buffer) => {
    text = (text + d.toString()).slice(-4000);
  };
  child.stdout?.on("data", keep);
  child.stderr?.on("data", keep);
  child.on("error", (err) => keep(Buffer.from(String(err))));
  return { child, output: () => text.trim() };
}

async function kill(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, "exit");
  child.kill("SIGKILL");
  await exited;
}

/**
 * Starts `redis-server` on a free port of 127.0.0.1 and waits until it answers. Retries with another port
 * when the chosen one was taken meanwhile. Call `stop()` when done (the process is killed with the test
 * process too, since it is not detached).
 */
export async function startRedisServer(opts: { timeoutMs?: number } = {}): Promise<RedisServer> {
  const timeoutMs = opts.timeoutMs ?? 10_000;
  let lastError: unknown;
  for (let attempt = 0; attempt < 5; attempt++) {
    const port = await freePort();
    let current = launch(port);
    try {
      await waitForPong(port, current.child, current.output, timeoutMs);
    } catch (err) {
      lastError = err;
      await kill(current.child);
      continue;
    }
    const server: RedisServer = {
      url: `redis://127.0.0.1:${port}`,
      port,
      stop: () => kill(current.child),
      async restart() {
        await kill(current.child);
        // The port was ours a moment ago; another process could take it only in this short gap.
        for (let i = 0; ; i++) {
          current = launch(port);
          try {
            await waitForPong(port, current.child, current.output, timeoutMs);
            return;
          } catch (err) {
            await kill(current.child);
            if (i >= 20) throw err;
            await new Promise((r) => setTimeout(r, 100));
          }
        }
      },
    };
    return server;
  }
  throw new Error(`Could not start redis-server on a free loopback port: ${String(lastError)}`);
}
