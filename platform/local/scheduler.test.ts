import { describe, expect, it } from "vitest";
import type { Scheduler } from "../../core/ports.js";
import { createLocalScheduler } from "./scheduler.js";

/** Lets queued microtasks (the onAdmitted notifications) run. */
const settle = () => new Promise<void>((r) => setImmediate(r));

function recorded(capacity: number): { s: Scheduler; admissions: string[] } {
  const s = createLocalScheduler({ capacity });
  const admissions: string[] = [];
  s.onAdmitted((k) => admissions.push(k));
  return { s, admissions };
}

async function admittedKeys(s: Scheduler, keys: string[]): Promise<string[]> {
  const out: string[] = [];
  for (const k of keys) if (await s.isAdmitted(k)) out.push(k);
  return out;
}

describe("createLocalScheduler", () => {
  it("admits at once while there is room and counts admissions", async () => {
    const { s, admissions } = recorded(2);
    await s.submit("a", "batch");
    await s.submit("b", "sample");
    expect(await s.isAdmitted("a")).toBe(true);
    expect(await s.isAdmitted("b")).toBe(true);
    expect(await s.stats()).toEqual({ waiting: 0, admitted: 2, capacity: 2 });
    await settle();
    expect(admissions).toEqual(["a", "b"]);
  });

  it("never admits more than capacity; a release admits the next", async () => {
    const { s, admissions } = recorded(2);
    for (const k of ["a", "b", "c", "d"]) await s.submit(k, "interactive");
    expect(await admittedKeys(s, ["a", "b", "c", "d"])).toEqual(["a", "b"]);
    expect(await s.stats()).toEqual({ waiting: 2, admitted: 2, capacity: 2 });
    await s.release("a");
    expect(await admittedKeys(s, ["a", "b", "c", "d"])).toEqual(["b", "c"]);
    await s.release("b");
    await s.release("c");
    expect(await admittedKeys(s, ["a", "b", "c", "d"])).toEqual(["d"]);
    expect(await s.stats()).toEqual({ waiting: 0, admitted: 1, capacity: 2 });
    await settle();
    expect(admissions).toEqual(["a", "b", "c", "d"]);
  });

  it("admits interactive before batch before sample, FIFO within each", async () => {
    const { s, admissions } = recorded(1);
    await s.submit("first", "sample");
    await s.submit("s1", "sample");
    await s.submit("b1", "batch");
    await s.submit("s2", "sample");
    await s.submit("i1", "interactive");
    await s.submit("b2", "batch");
    await s.submit("i2", "interactive");
    const order = ["first"];
    for (let i = 0; i < 6; i++) {
      await s.release(order[order.length - 1]!);
      const next = (await admittedKeys(s, ["s1", "b1", "s2", "i1", "b2", "i2"]))[0];
      order.push(next!);
    }
    expect(order).toEqual(["first", "i1", "i2", "b1", "b2", "s1", "s2"]);
    await settle();
    expect(admissions).toEqual(order);
  });

  it("submit is idempotent for a waiting or admitted key, even with another priority", async () => {
    const { s, admissions } = recorded(1);
    await s.submit("a", "batch");
    await s.submit("a", "batch");
    await s.submit("b", "sample");
    await s.submit("b", "interactive");
    await s.submit("a", "interactive");
    expect(await s.stats()).toEqual({ waiting: 1, admitted: 1, capacity: 1 });
    await s.submit("c", "batch");
    await s.release("a");
    // b kept its first place (sample), so c (batch) goes first.
    expect(await admittedKeys(s, ["b", "c"])).toEqual(["c"]);
    await settle();
    expect(admissions).toEqual(["a", "c"]);
  });

  it("release of a waiting key forgets it; release is idempotent and ignores unknown keys", async () => {
    const { s, admissions } = recorded(1);
    await s.submit("a", "interactive");
    await s.submit("b", "interactive");
    await s.submit("c", "interactive");
    await s.release("b");
    await s.release("b");
    await s.release("nobody");
    expect(await s.stats()).toEqual({ waiting: 1, admitted: 1, capacity: 1 });
    await s.release("a");
    await s.release("a");
    expect(await admittedKeys(s, ["a", "b", "c"])).toEqual(["c"]);
    expect(await s.stats()).toEqual({ waiting: 0, admitted: 1, capacity: 1 });
    await settle();
    expect(admissions).toEqual(["a", "c"]);
  });

  it("a released key can be submitted and admitted again", async () => {
    const { s, admissions } = recorded(1);
    await s.submit("a", "batch");
    await s.release("a");
    await s.submit("a", "batch");
    expect(await s.isAdmitted("a")).toBe(true);
    await settle();
    expect(admissions).toEqual(["a", "a"]);
  });

  it("calls onAdmitted listeners after submit returns, never inside its stack", async () => {
    const s = createLocalScheduler({ capacity: 1 });
    const seen: string[] = [];
    let insideSubmit = false;
    s.onAdmitted((k) => seen.push(`${k}${insideSubmit ? " (inside submit)" : ""}`));
    insideSubmit = true;
    const p = s.submit("a", "interactive");
    insideSubmit = false;
    expect(seen).toEqual([]);
    await p;
    await settle();
    expect(seen).toEqual(["a"]);
  });

  it("tells every listener, even when one throws", async () => {
    const s = createLocalScheduler({ capacity: 1 });
    const seen: string[] = [];
    const errors: unknown[] = [];
    const onError = (e: unknown) => errors.push(e);
    process.on("uncaughtException", onError);
    try {
      s.onAdmitted(() => {
        throw new Error("listener broke");
      });
      s.onAdmitted((k) => seen.push(k));
      await s.submit("a", "interactive");
      await settle();
    } finally {
      process.off("uncaughtException", onError);
    }
    expect(seen).toEqual(["a"]);
  });

  it("rejects an unknown priority and a bad capacity with a clear message", async () => {
    const s = createLocalScheduler({ capacity: 1 });
    await expect(s.submit("a", "urgent" as never)).rejects.toThrow(
      /Unknown priority "urgent"; use one of interactive, batch, sample/,
    );
    expect(() => createLocalScheduler({ capacity: 0 })).toThrow(/at least 1/);
    expect(() => createLocalScheduler({ capacity: 1.5 })).toThrow(/whole number/);
  });

  it("close drops everything, stops notifications and refuses new work", async () => {
    const { s, admissions } = recorded(1);
    const submitted = Promise.all([s.submit("a", "interactive"), s.submit("b", "interactive")]);
    const closing = s.close();
    await submitted;
    await closing;
    await settle();
    expect(admissions).toEqual([]);
    expect(await s.stats()).toEqual({ waiting: 0, admitted: 0, capacity: 1 });
    expect(await s.isAdmitted("a")).toBe(false);
    await expect(s.submit("c", "interactive")).rejects.toThrow(/closed/);
    await s.release("a");
  });
});
