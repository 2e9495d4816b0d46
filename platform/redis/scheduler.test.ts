import { type ChildProcess, spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { once } from "node:events";
import { fileURLToPath } from "node:url";
import pino from "pino";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { Scheduler } from "../../core/ports.js";
import { type RedisServer, redisServerAvailable, startRedisServer } from "./testdata/redis-server.js";
import { createRedisScheduler, type RedisSchedulerOptions, SchedulerUnavailableError } from "./scheduler.js";

const availability = redisServerAvailable();
const log = pino({ level: "silent" });

/** Polls `check` until it holds; fails with `what` after `timeoutMs`. */
async function waitFor(what: string, check: () => boolean | Promise<boolean>, timeoutMs = 15_000) {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for: ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe.skipIf(!availability.ok)(
  availability.ok ? "createRedisScheduler" : `createRedisScheduler (skipped: ${availability.reason})`,
  () => {
    let redis: RedisServer;
    const open: Scheduler[] = [];
    const children: ChildProcess[] = [];

    beforeAll(async () => {
      redis = await startRedisServer();
    });
    afterAll(async () => {
      await redis?.stop();
    });
    afterEach(async () => {
      for (const c of children.splice(0)) c.kill("SIGKILL");
      await Promise.all(open.splice(0).map((s) => s.close()));
    });

    /** A scheduler "replica" recording its admissions; `queueName` shared by replicas of one test. */
    function replica(queueName: string, extra: Partial<RedisSchedulerOptions> = {}) {
      const s = createRedisScheduler({
        connection: redis.url,
        queueName,
        capacity: 1,
        log,
        lockDurationMs: 2000,
        stalledIntervalMs: 500,
        ...extra,
      });
      open.push(s);
      const admissions: string[] = [];
      s.onAdmitted((k) => admissions.push(k));
      return { s, admissions };
    }

    async function admittedKeys(s: Scheduler, keys: string[]): Promise<string[]> {
      const out: string[] = [];
      for (const k of keys) if (await s.isAdmitted(k)) out.push(k);
      return out;
    }

    it("admits by priority: interactive before batch before sample, FIFO within each", async () => {
      const q = randomUUID();
      const { s, admissions } = replica(q);
      await s.submit("first", "sample");
      await waitFor("first admitted", () => admissions.includes("first"));
      for (const [k, p] of [
        ["s1", "sample"],
        ["b1", "batch"],
        ["s2", "sample"],
        ["i1", "interactive"],
        ["b2", "batch"],
        ["i2", "interactive"],
      ] as const) {
        await s.submit(k, p);
      }
      expect(await s.stats()).toEqual({ waiting: 6, admitted: 1, capacity: 1 });
      for (let i = 1; i <= 6; i++) {
        await s.release(admissions[admissions.length - 1]!);
        await waitFor(`admission ${i + 1}`, () => admissions.length === i + 1);
      }
      expect(admissions).toEqual(["first", "i1", "i2", "b1", "b2", "s1", "s2"]);
      expect(await admittedKeys(s, ["first", "i1", "s2"])).toEqual(["s2"]);
    });

    it("never admits more than capacity across two replicas; a release admits the next", async () => {
      const q = randomUUID();
      const a = replica(q, { capacity: 2 });
      const b = replica(q, { capacity: 2 });
      const keys = ["k1", "k2", "k3", "k4", "k5"];
      for (const [i, k] of keys.entries()) await (i % 2 ? b : a).s.submit(k, "batch");
      const all = () => [...a.admissions, ...b.admissions];
      await waitFor("two admitted", () => all().length === 2);
      await pause(1500); // longer than an idle replica's polling interval: nobody takes a third slot
      expect(all()).toHaveLength(2);
      expect(await a.s.stats()).toEqual({ waiting: 3, admitted: 2, capacity: 2 });
      expect(await admittedKeys(b.s, keys)).toEqual(all().slice().sort());

      const released = new Set<string>();
      while (released.size < keys.length) {
        const current = await admittedKeys(a.s, keys);
        expect(current.length).toBeLessThanOrEqual(2);
        const victim = current[0]!;
        // Release through either replica, whichever holds the slot.
        await (released.size % 2 ? a : b).s.release(victim);
        released.add(victim);
        const expected = Math.min(2, keys.length - released.size);
        await waitFor(`${expected} admitted after releasing ${victim}`, async () => {
          return (
            (await a.s.stats()).admitted === expected &&
            all().length === Math.min(keys.length, released.size + 2)
          );
        });
      }
      expect(all().slice().sort()).toEqual(keys);
      expect(await b.s.stats()).toEqual({ waiting: 0, admitted: 0, capacity: 2 });
    });

    it("submit is idempotent for a waiting or admitted key, even with another priority", async () => {
      const q = randomUUID();
      const { s, admissions } = replica(q);
      await s.submit("a", "batch");
      await waitFor("a admitted", () => admissions.includes("a"));
      await s.submit("a", "interactive");
      await s.submit("b", "sample");
      await s.submit("b", "interactive");
      await s.submit("c", "batch");
      expect(await s.stats()).toEqual({ waiting: 2, admitted: 1, capacity: 1 });
      await s.release("a");
      // b kept its first place (sample), so c (batch) goes first.
      await waitFor("c admitted", () => admissions.includes("c"));
      expect(admissions).toEqual(["a", "c"]);
    });

    it("release forgets a waiting key, is idempotent, and frees the key for a later submit", async () => {
      const q = randomUUID();
      const { s, admissions } = replica(q);
      await s.submit("a", "interactive");
      await s.submit("b", "interactive");
      await waitFor("a admitted", () => admissions.includes("a"));
      await s.release("b");
      await s.release("b");
      await s.release("nobody");
      expect(await s.stats()).toEqual({ waiting: 0, admitted: 1, capacity: 1 });
      await s.release("a");
      await s.release("a");
      expect(await s.stats()).toEqual({ waiting: 0, admitted: 0, capacity: 1 });
      await s.submit("a", "batch");
      await waitFor("a admitted again", () => admissions.length === 2);
      expect(admissions).toEqual(["a", "a"]);
      expect(await s.isAdmitted("a")).toBe(true);
    });

    it("another replica sees an admission and can release it; the holder then frees its own slot", async () => {
      const q = randomUUID();
      const a = replica(q, { lockDurationMs: 1000 });
      await a.s.submit("held", "interactive");
      await waitFor("held admitted by a", () => a.admissions.includes("held"));
      const b = replica(q, { lockDurationMs: 1000 });
      expect(await b.s.isAdmitted("held")).toBe(true);
      expect(await b.s.isAdmitted("other")).toBe(false);
      await b.s.release("held");
      expect(await a.s.isAdmitted("held")).toBe(false);
      expect(await b.s.stats()).toEqual({ waiting: 0, admitted: 0, capacity: 1 });
      // Leave only `a`: it can admit again only if it noticed that its old slot was released elsewhere.
      await b.s.close();
      await a.s.submit("next", "interactive");
      await waitFor("next admitted by a", () => a.admissions.includes("next"));
      expect(await a.s.isAdmitted("next")).toBe(true);
    });

    it("re-admits on another replica the slot of a replica that was killed, once its lock expires", async () => {
      const q = randomUUID();
      const script = fileURLToPath(new URL("./testdata/scheduler-replica.ts", import.meta.url));
      const child = spawn(
        process.execPath,
        ["--import", "tsx", script, redis.url, q, "1", "1500", "500", "crashing"],
        { stdio: ["ignore", "pipe", "pipe"] },
      );
      children.push(child);
      let out = "";
      let err = "";
      child.stdout?.on("data", (d) => (out += d.toString()));
      child.stderr?.on("data", (d) => (err += d.toString()));
      await waitFor(
        `the child replica admits (stderr: ${err})`,
        () => out.includes("admitted crashing"),
        30_000,
      );
      const survivor = replica(q, { lockDurationMs: 1500 });
      expect(await survivor.s.isAdmitted("crashing")).toBe(true);
      const exited = once(child, "exit");
      child.kill("SIGKILL");
      await exited;
      await waitFor("the survivor re-admits", () => survivor.admissions.includes("crashing"), 20_000);
      expect(survivor.admissions).toEqual(["crashing"]);
      expect(await survivor.s.stats()).toEqual({ waiting: 0, admitted: 1, capacity: 1 });
      await survivor.s.release("crashing");
      expect(await survivor.s.isAdmitted("crashing")).toBe(false);
    });

    it("close hands its slots back at once, so another replica admits them without waiting for the lock", async () => {
      const q = randomUUID();
      // A one-minute lock: only the hand-back can explain a prompt re-admission.
      const a = replica(q, { lockDurationMs: 60_000 });
      await a.s.submit("moving", "batch");
      await waitFor("a admits", () => a.admissions.includes("moving"));
      const b = replica(q, { lockDurationMs: 60_000 });
      await a.s.close();
      await waitFor("b admits the handed-back key", () => b.admissions.includes("moving"), 20_000);
      expect(await b.s.isAdmitted("moving")).toBe(true);
      // a is closed: it refuses new work, answers false and ignores releases.
      await expect(a.s.submit("late", "batch")).rejects.toThrow(/closed/);
      expect(await a.s.isAdmitted("moving")).toBe(false);
      await a.s.release("moving");
      expect(await b.s.isAdmitted("moving")).toBe(true);
    });

    it("keeps working across a Redis restart, and a slot Redis forgot does not block the next", async () => {
      const q = randomUUID();
      const { s, admissions } = replica(q, { lockDurationMs: 1000 });
      await s.submit("before", "interactive");
      await waitFor("before admitted", () => admissions.includes("before"));
      const other = replica(q, { lockDurationMs: 1000 });
      const all = () => [...admissions, ...other.admissions];
      await redis.restart(); // starts empty: the job and the global limit are gone
      await waitFor(
        "submit succeeds after the restart",
        async () => {
          try {
            await s.submit("after", "interactive");
            return true;
          } catch {
            return false;
          }
        },
        30_000,
      );
      await waitFor("after admitted", () => all().includes("after"), 30_000);
      expect(await s.isAdmitted("after")).toBe(true);
      expect(await s.isAdmitted("before")).toBe(false);
      await s.submit("third", "interactive");
      await pause(1500);
      // The global limit was set again on reconnect: one slot across both replicas, not one each.
      expect(all()).toEqual(["before", "after"]);
      await s.release("after");
      await waitFor("third admitted", () => all().includes("third"));
      expect(await other.s.stats()).toEqual({ waiting: 0, admitted: 1, capacity: 1 });
      // `s` alone admits again: the slot of "before", which Redis forgot, no longer occupies it.
      await s.release("third");
      await other.s.close();
      await s.submit("fourth", "interactive");
      await waitFor("s admits fourth", () => admissions.includes("fourth"));
    });

    it("rejects a bad priority, key or capacity with a clear message", async () => {
      const { s } = replica(randomUUID());
      await expect(s.submit("a", "urgent" as never)).rejects.toThrow(
        /Unknown priority "urgent"; use one of interactive, batch, sample/,
      );
      await expect(s.submit("a:b", "batch")).rejects.toThrow(/without ':'/);
      await expect(s.submit("42", "batch")).rejects.toThrow(/not a plain integer/);
      await expect(s.submit("", "batch")).rejects.toThrow(/non-empty/);
      expect(() => createRedisScheduler({ connection: redis.url, capacity: 0, log })).toThrow(/at least 1/);
      expect(() => createRedisScheduler({ connection: redis.url, capacity: 1.5, log })).toThrow(
        /whole number/,
      );
    });
  },
);

describe("createRedisScheduler without a reachable Redis", () => {
  it("fails each call with an error that names Redis and REDIS_URL, and still closes", async () => {
    // Port 1: nothing listens there, so every connection attempt is refused.
    const s = createRedisScheduler({
      connection: "redis://127.0.0.1:1",
      capacity: 1,
      log,
      commandTimeoutMs: 500,
    });
    for (const call of [() => s.submit("a", "batch"), () => s.isAdmitted("a"), () => s.stats()]) {
      const err = await call().then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(SchedulerUnavailableError);
      expect((err as Error).message).toMatch(
        /Redis at 127\.0\.0\.1:1 did not answer within 500 ms; check REDIS_URL and that Redis is running\./,
      );
    }
    await s.close();
    await expect(s.submit("a", "batch")).rejects.toThrow(/closed/);
  });
});
