import { describe, expect, it } from "vitest";
import { leaseAction, microTime, nextLeaseSpec } from "./leader-election.js";

const base = { identity: "me", nowMs: 100_000, leaseDurationMs: 15_000 };

describe("leaseAction", () => {
  it("creates a Lease that does not exist", () => {
    expect(leaseAction({ ...base, spec: undefined, observedAtMs: 0 })).toBe("create");
  });
  it("renews its own Lease", () => {
    expect(
      leaseAction({
        ...base,
        spec: { holderIdentity: "me", leaseDurationSeconds: 15 },
        observedAtMs: 99_000,
      }),
    ).toBe("renew");
  });
  it("takes over a released Lease at once", () => {
    expect(
      leaseAction({ ...base, spec: { holderIdentity: "", leaseDurationSeconds: 1 }, observedAtMs: 99_999 }),
    ).toBe("takeover");
  });
  it("waits while another holder's record changed less than leaseDuration ago (on its own clock)", () => {
    const spec = { holderIdentity: "other", leaseDurationSeconds: 15 };
    expect(leaseAction({ ...base, spec, observedAtMs: 100_000 - 14_999 })).toBe("wait");
    expect(leaseAction({ ...base, spec, observedAtMs: 100_000 - 15_000 })).toBe("takeover");
  });
  it("uses the Lease's own duration over the local default", () => {
    const spec = { holderIdentity: "other", leaseDurationSeconds: 60 };
    expect(leaseAction({ ...base, spec, observedAtMs: 100_000 - 30_000 })).toBe("wait");
  });
});

describe("microTime", () => {
  it("writes six fraction digits, as the apiserver's MicroTime requires", () => {
    expect(microTime(new Date("2026-11-21T22:32:58.731Z"))).toBe("2026-11-21T22:32:58.731000Z");
  });
});

describe("nextLeaseSpec", () => {
  const now = new Date("2026-01-01T00:00:00Z");
  const t = "2026-01-01T00:00:00.000000Z";
  it("create starts at transition 0 with acquire and renew time now", () => {
    expect(nextLeaseSpec(undefined, "create", "me", now, 15_000)).toEqual({
      holderIdentity: "me",
      leaseDurationSeconds: 15,
      acquireTime: t,
      renewTime: t,
      leaseTransitions: 0,
    });
  });
  it("takeover counts a transition; renew keeps acquireTime and transitions", () => {
    const old = "1970-01-01T00:00:00.000000Z";
    const held = {
      holderIdentity: "other",
      acquireTime: old,
      renewTime: old,
      leaseTransitions: 3,
    };
    expect(nextLeaseSpec(held, "takeover", "me", now, 15_000)).toMatchObject({
      holderIdentity: "me",
      acquireTime: t,
      leaseTransitions: 4,
    });
    const mine = { ...held, holderIdentity: "me" };
    expect(nextLeaseSpec(mine, "renew", "me", now, 15_000)).toMatchObject({
      acquireTime: old,
      renewTime: t,
      leaseTransitions: 3,
    });
  });
});
