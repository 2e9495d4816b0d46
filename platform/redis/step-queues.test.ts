import { randomUUID } from "node:crypto";
import pino from "pino";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { WorkloadSpec } from "../../core/ports.js";
import {
  type ConsumeStepQueueOptions,
  consumeStepQueue,
  createStepQueueRunner,
  parseWorkloadName,
  type StepJobResult,
  type StepQueueConsumer,
  type StepQueueRunner,
} from "./step-queues.js";
import { type RedisServer, redisServerAvailable, startRedisServer } from "./testdata/redis-server.js";

const availability = redisServerAvailable();
const log = pino({ level: "silent" });

async function waitFor<T>(what: string, check: () => Promise<T | undefined | false>, timeoutMs = 20_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v !== undefined && v !== false) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for: ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

const spec = (owner: string, step: WorkloadSpec["step"] = "check", attempt = 1): WorkloadSpec => ({
  name: `${owner}-${step}-${attempt}`,
  step,
  owner: { name: owner, uid: randomUUID() },
  env: { DOCVERIFY_STEP_INPUT: "{}", DOCVERIFY_DETECTION: owner },
  timeoutSeconds: 60,
});

describe("parseWorkloadName", () => {
  it("reads the owner and step kind of `<detection>-<step>-<attempt>`, owners with dashes included", () => {
    expect(parseWorkloadName("det-abc-check-prepare-12")).toEqual({
      owner: "det-abc-check",
      step: "prepare",
    });
    expect(parseWorkloadName("a-agent-1")).toEqual({ owner: "a", step: "agent" });
    expect(parseWorkloadName("no-step-here")).toBeUndefined();
  });
});

describe.skipIf(!availability.ok)(
  availability.ok ? "step queues on Redis" : `step queues on Redis (skipped: ${availability.reason})`,
  () => {
    let redis: RedisServer;
    const runners: StepQueueRunner[] = [];
    const consumers: StepQueueConsumer[] = [];

    beforeAll(async () => {
      redis = await startRedisServer();
    });
    afterAll(async () => {
      await redis?.stop();
    });
    afterEach(async () => {
      await Promise.all(consumers.splice(0).map((c) => c.close(true)));
      await Promise.all(runners.splice(0).map((r) => r.close()));
    });

    const prefix = () => `t${randomUUID().slice(0, 8)}`;
    function runner(p: string) {
      const r = createStepQueueRunner({ connection: redis.url, prefix: p, log });
      runners.push(r);
      return r;
    }
    function consumer(p: string, o: Partial<ConsumeStepQueueOptions> & Pick<ConsumeStepQueueOptions, "run">) {
      const c = consumeStepQueue({
        connection: redis.url,
        prefix: p,
        log,
        step: "check",
        concurrency: 1,
        ...o,
      });
      consumers.push(c);
      return c;
    }

    it("runs a started step once in a worker of its kind and reports Pending → Running → Succeeded", async () => {
      const p = prefix();
      const r = runner(p);
      const changed: string[] = [];
      r.onChange((owner) => changed.push(owner));
      const s = spec("det-one");
      await r.start(s);
      await r.start(s); // a start repeated after a crash adds nothing
      expect(await r.get(s.name)).toMatchObject({ state: "Pending", step: "check", owner: "det-one" });
      expect((await r.counts()).check).toMatchObject({ waiting: 1, active: 0 });

      const ran: string[] = [];
      let finish: (v: StepJobResult) => void = () => {};
      consumer(p, {
        run: (got) => {
          ran.push(got.name);
          expect(got.env).toEqual(s.env);
          return new Promise((resolve) => (finish = resolve));
        },
      });
      await waitFor("Running", async () => (await r.get(s.name))?.state === "Running");
      expect((await r.counts()).check).toMatchObject({ waiting: 0, active: 1 });
      finish({ state: "Succeeded", exitCode: 0, message: '{"ok":true}' });
      const done = await waitFor("Succeeded", async () => {
        const st = await r.get(s.name);
        return st?.state === "Succeeded" ? st : undefined;
      });
      expect(done).toMatchObject({ exitCode: 0, message: '{"ok":true}' });
      await r.start(s); // a finished job is not run again either
      await waitFor("the owner to be told", async () => changed.includes("det-one"));
      await r.delete(s.name);
      expect(await r.get(s.name)).toBeUndefined();
      expect(ran).toEqual([s.name]);
    });

    it("a failed step's result is reported as the worker gave it (reason, exit code, message)", async () => {
      const p = prefix();
      const r = runner(p);
      consumer(p, {
        run: async () => ({ state: "Failed", reason: "OOMKilled", exitCode: 137, message: "too big" }),
      });
      const s = spec("det-oom");
      await r.start(s);
      const st = await waitFor("Failed", async () => {
        const x = await r.get(s.name);
        return x?.state === "Failed" ? x : undefined;
      });
      expect(st).toMatchObject({ reason: "OOMKilled", exitCode: 137, message: "too big" });
    });

    it("a worker that dies mid-step is reported Lost once its lease runs out, and the step is never run again", async () => {
      const p = prefix();
      const r = runner(p);
      const ran: string[] = [];
      const dying = consumer(p, {
        leaseMs: 1000,
        run: (got) => {
          ran.push(got.name);
          return new Promise(() => {}); // never finishes: the process "dies" below
        },
      });
      const s = spec("det-lost", "prepare");
      const dyingPrepare = consumeStepQueue({
        connection: redis.url,
        prefix: p,
        log,
        step: "prepare",
        concurrency: 1,
        leaseMs: 1000,
        run: (got) => {
          ran.push(got.name);
          return new Promise(() => {});
        },
      });
      await r.start(s);
      await waitFor("Running", async () => (await r.get(s.name))?.state === "Running");
      // A forced close stops renewing the lock and leaves the job active: what a kill -9 leaves behind.
      await dyingPrepare.close(true);
      const lost = await waitFor("Lost", async () => {
        const x = await r.get(s.name);
        return x?.state === "Failed" ? x : undefined;
      });
      expect(lost).toMatchObject({ reason: "Lost", step: "prepare", owner: "det-lost" });
      // A healthy worker of the kind arrives (the Deployment's replacement): it never runs the lost job.
      consumer(p, {
        step: "prepare",
        leaseMs: 1000,
        run: async (got) => {
          ran.push(`again:${got.name}`);
          return { state: "Succeeded", exitCode: 0 };
        },
      });
      // The reconciler deletes the lost workload and starts attempt 2, which runs.
      await r.delete(s.name);
      expect(await r.get(s.name)).toBeUndefined();
      const s2 = spec("det-lost", "prepare", 2);
      await r.start(s2);
      await waitFor("attempt 2 done", async () => (await r.get(s2.name))?.state === "Succeeded");
      expect(ran).toEqual([s.name, `again:${s2.name}`]);
      await dying.close(true);
    });

    it("the stalled check fails a dead worker's job instead of handing it to another worker", async () => {
      const p = prefix();
      const r = runner(p);
      const ran: string[] = [];
      const dead = consumer(p, {
        leaseMs: 1000,
        run: (got) => {
          ran.push(got.name);
          return new Promise(() => {});
        },
      });
      const s = spec("det-stalled");
      await r.start(s);
      await waitFor("Running", async () => (await r.get(s.name))?.state === "Running");
      await dead.close(true);
      consumer(p, {
        leaseMs: 1000,
        run: async (got) => {
          ran.push(`again:${got.name}`);
          return { state: "Succeeded", exitCode: 0 };
        },
      });
      const st = await waitFor("failed by the stalled check", async () => {
        const x = await r.get(s.name);
        return x?.state === "Failed" && x.message?.includes("lease expired") ? x : undefined;
      });
      expect(st.reason).toBe("Lost");
      expect(ran).toEqual([s.name]);
    });

    it("deleting a running step tells its worker, which stops it", async () => {
      const p = prefix();
      const r = runner(p);
      let aborted = false;
      consumer(p, {
        run: (_got, signal) =>
          new Promise((resolve) => {
            signal.addEventListener("abort", () => {
              aborted = true;
              resolve({ state: "Failed", reason: "Deleted" });
            });
          }),
      });
      const s = spec("det-deleted");
      await r.start(s);
      await waitFor("Running", async () => (await r.get(s.name))?.state === "Running");
      await r.delete(s.name);
      await waitFor("the worker to stop the step", async () => aborted);
    });
  },
);
