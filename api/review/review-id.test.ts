import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { passportWithChangedBirthDate } from "../../checks/testdata/id-kit.js";
import type { CheckResult } from "../../core/check-result.js";
import { buildEvidence } from "../../core/evidence.js";
import type { PageGeometry } from "../../core/page-geometry.js";
import { call, createHarness, type Harness } from "../testdata/app-kit.js";
import { completeWithEvidence, createDetection } from "../testdata/evidence-kit.js";
import { esc } from "./page.js";

/**
 * The reviewer page of a passport whose printed date of birth was changed (the MRZ left as issued): the
 * real id.mrz run on the scanned page; the page shows the MRZ's value and the printed one in the group's
 * headline, and boxes the printed field (that group) and the MRZ field (the MRZ side's own group).
 */
let h: Harness;
let alice: string;
let result: CheckResult;
let width = 0;
let height = 0;
beforeAll(async () => {
  h = await createHarness();
  alice = await h.token("alice");
  ({ result, width, height } = await passportWithChangedBirthDate());
}, 240_000);
afterAll(() => h.close());

describe("the reviewer page of an MRZ/VIZ mismatch", () => {
  it("shows both values and boxes the printed field and the MRZ field", async () => {
    const printed = result.findings.find((f) => f.code === "mrz_viz_mismatch");
    expect(printed, JSON.stringify(result.findings)).toBeDefined();
    const before = String(printed?.evidence?.before);
    const after = String(printed?.evidence?.after);
    const id = await createDetection(h, alice);
    // An image document: its page is the image, in pixels (the scan is 1896 × 1335 or so; the boxes' page).
    const geometry: PageGeometry = { number: 1, view: [0, 0, width, height], rotate: 0, units: "px" };
    const built = buildEvidence({ detection: id, checks: [result], geometry: new Map([[1, geometry]]) });
    const manifest = await completeWithEvidence(h, id, [result], {
      manifest: (m) => ({
        ...m,
        contentType: "image/jpeg",
        pageCount: 1,
        findings: built.findings,
        groups: built.groups,
        pages: m.pages.map((p) => ({ ...p, width, height, geometry })),
      }),
    });
    const group = manifest.groups.find((g) => g.checks.some((c) => c.code === "mrz_viz_mismatch"));
    const mrzSide = manifest.groups.find((g) => g.checks.some((c) => c.code === "mrz_viz_mismatch_mrz"));
    expect(group?.before).toBe(before);
    expect(group?.after).toBe(after);
    expect(group?.regions.length).toBe(1);
    expect(mrzSide?.regions.length).toBe(1);
    // The MRZ field's box is below the printed field's (image pixels, origin top left).
    expect(mrzSide!.regions[0]!.bbox[1]).toBeGreaterThan(group!.regions[0]!.bbox[3]!);
    const r = await call(h, "GET", `/v1/detection/${id}/evidence`, { token: alice });
    const u = new URL(r.body.review_url as string);
    const page = await (await h.app.request(`${u.pathname}${u.search}`)).text();
    expect(page).toContain(esc(before));
    expect(page).toContain(esc(after));
    expect(page).toContain(esc("Date of birth (MRZ → printed)"));
    expect(page).toContain(`class="box" data-group="${group!.number}"`);
    expect(page).toContain(`class="box" data-group="${mrzSide!.number}"`);
    expect(page).toContain(esc(`the visual zone prints as “${after}”`));
  });
});
