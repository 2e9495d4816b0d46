import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CheckResult } from "../../core/check-result.js";
import { CheckStepResult, keys } from "../../core/detection.js";
import { modelOf } from "../../document/testdata/model-kit.js";
import { makeSignedPdf, SIGNED_VARIANTS, type SignedVariant, testPki } from "../../fixtures/signed.js";
import { runCheckStep } from "../step.js";
import { createTestStepContext, stepInput, type TestStepContext } from "../testdata/step-context.js";
import { loadTrustAnchors } from "../trust-anchors.js";
import { signaturePdfCheck } from "./signature-pdf.js";

const now = new Date("2026-01-15T12:00:00Z");
let rootPem: string;
const fixtures = new Map<SignedVariant, Awaited<ReturnType<typeof makeSignedPdf>>>();

beforeAll(async () => {
  rootPem = (await testPki()).rootPem;
  for (const v of SIGNED_VARIANTS) fixtures.set(v, await makeSignedPdf(v));
}, 120_000);

async function check(
  bytes: Uint8Array,
  docType: "bank_statement" | "loan_application" = "bank_statement",
  anchors: string | undefined = rootPem,
) {
  return CheckResult.parse(
    await signaturePdfCheck.run(await modelOf(bytes, { docType }), {
      now,
      ...(anchors ? { trustAnchorsPem: anchors } : {}),
    }),
  );
}
const variant = async (v: SignedVariant, anchors: string | undefined = rootPem) => {
  const f = fixtures.get(v)!;
  return check(f.bytes, f.docType, anchors);
};
const codes = (r: CheckResult) => r.findings.map((f) => f.code);

describe("signature.pdf trust levels", () => {
  it("corroborates a valid signature that covers the whole file and chains to the anchors", async () => {
    const r = await variant("valid");
    expect(r.authoritative?.trust).toBe("corroborated");
    expect(r.authoritative?.directive).toMatch(
      /^Corroborated: signed by Pennine Savings Bank Statements \(Docverify Test PKI\) \(judged at the current time \(2026-01-15T12:00:00Z\), as no trusted timestamp proves when it was made\)/,
    );
    expect(r.outcome).toBe("pass");
    expect(r.discovered).toEqual(["signature_present"]);
    expect(r.findings[0]).toMatchObject({
      code: "signature_valid",
      evidence: {
        coversWholeFile: true,
        digest: "SHA-256",
        algorithm: "RSA with SHA-256",
        timeBasis: "current_time",
      },
    });
  });

  it("makes a document changed after signing unattested and names the change", async () => {
    const r = await variant("modified");
    expect(r.authoritative?.trust).toBe("unattested");
    expect(r.authoritative?.directive).toMatch(/modified after signing/);
    expect(r.authoritative?.directive).toMatch(/page 1 text "£[\d,.]+" → "£[\d,.]+"/);
    expect(codes(r)).toEqual(["signature_modified_after_signing"]);
    expect(r.findings[0]?.page).toBe(1);
  });

  it("keeps corroborated through changes DocMDP P=2 permits, and lists them", async () => {
    const filled = await variant("form_fill");
    expect(filled.authoritative?.trust).toBe("corroborated");
    expect(filled.authoritative?.directive).toMatch(
      /form field "requested_amount" set to "92,500\.00" \(was "12,500\.00"\)/,
    );
    expect(codes(filled)).toEqual(["signature_valid", "signature_permitted_changes"]);
    const countersigned = await variant("second_signature");
    expect(countersigned.authoritative?.trust).toBe("corroborated");
    expect(codes(countersigned).filter((c) => c === "signature_valid")).toHaveLength(2);
    expect(countersigned.authoritative?.directive).toMatch(/signature field "Signature\d+"/);
  });

  it("judges an annotation after a P=2 certification as a forbidden change", async () => {
    const r = await variant("annotation_after_certify");
    expect(r.authoritative?.trust).toBe("unattested");
    expect(r.authoritative?.directive).toMatch(/FreeText annotation added on page 1/);
  });

  it("makes a digest mismatch unattested and authoritative", async () => {
    const r = await variant("tampered");
    expect(r.authoritative?.trust).toBe("unattested");
    expect(r.authoritative?.directive).toMatch(/fails verification .*no longer match the digest/);
    expect(r.findings[0]).toMatchObject({ code: "signature_invalid", severity: 9 });
  });

  it("leaves a valid signature whose chain does not reach the anchors unverified, as a finding", async () => {
    const r = await variant("untrusted");
    expect(r.authoritative).toBeUndefined();
    expect(r.outcome).toBe("flag");
    expect(r.findings[0]).toMatchObject({ code: "signature_unverified", severity: 2 });
    expect(r.findings[0]?.message).toMatch(/does not chain to a configured trust anchor/);
    const noAnchors = await variant("valid", "");
    expect(noAnchors.authoritative).toBeUndefined();
    expect(noAnchors.findings[0]?.message).toMatch(/no trust anchors are configured/);
  });

  it("skips an unsigned document quietly", async () => {
    const r = await variant("unsigned");
    expect(r.outcome).toBe("skip");
    expect(r.findings).toEqual([]);
    expect(r.authoritative).toBeUndefined();
    expect(r.discovered).toBeUndefined();
  });

  it.skipIf(
    (() => {
      try {
        execFileSync("pdfsig", ["-v"], { stdio: "ignore" });
        return false;
      } catch {
        return true;
      }
    })(),
  )("agrees with poppler's pdfsig on the fixtures (oracle)", async () => {
    const ctx = await createTestStepContext();
    try {
      for (const [v, expected] of [
        ["valid", /Signature is Valid/],
        ["tampered", /Digest Mismatch/],
      ] as const) {
        const file = path.join(ctx.config.dataDir, `${v}.pdf`);
        await writeFile(file, fixtures.get(v)!.bytes);
        let out = "";
        try {
          out = execFileSync("pdfsig", [file], { encoding: "utf8" });
        } catch (err) {
          out = String((err as { stdout?: string }).stdout ?? "");
        }
        expect(out).toMatch(expected);
      }
    } finally {
      await ctx.cleanup();
    }
  });
});

describe("signature.pdf on hostile input", () => {
  const patch = (bytes: Uint8Array, edit: (s: string) => string) =>
    new Uint8Array(Buffer.from(edit(Buffer.from(bytes).toString("latin1")), "latin1"));

  it("makes a /ByteRange past the end of the file unattested", async () => {
    const bytes = patch(fixtures.get("valid")!.bytes, (s) =>
      s.replace(/\/ByteRange \[0 (\d+) (\d+) (\d+)\]( *)/, (_m, a, b, c, _pad: string) => {
        const out = `/ByteRange [0 ${a} ${b} ${Number(c) + 900000}]`;
        return out + " ".repeat(Math.max(0, _m.length - out.length));
      }),
    );
    const r = await check(bytes);
    expect(r.authoritative?.trust).toBe("unattested");
    expect(r.findings[0]?.message).toMatch(/past the end of the/);
  });

  it("makes garbage in place of the CMS blob unattested", async () => {
    const bytes = patch(fixtures.get("valid")!.bytes, (s) =>
      s.replace(
        /\/Contents <([0-9a-fA-F]+)>/,
        (_m, hex: string) => `/Contents <${"5a".repeat(hex.length / 2)}>`,
      ),
    );
    const r = await check(bytes);
    expect(r.authoritative?.trust).toBe("unattested");
    expect(r.findings[0]?.code).toBe("signature_invalid");
    expect(r.findings[0]?.message).toMatch(/CMS|DER/);
  });
});

describe("signature.pdf through the check step", () => {
  let ctx: TestStepContext;
  beforeAll(async () => {
    ctx = await createTestStepContext({}, { now: () => now });
    const anchors = path.join(ctx.config.dataDir, "anchors.pem");
    await writeFile(anchors, rootPem);
    ctx.config.trustAnchorsFile = anchors;
  });
  afterAll(() => ctx.cleanup());

  async function step(bytes: Uint8Array) {
    const input = stepInput("check", {
      source: { url: "https://example.com/s.pdf" },
      docType: "bank_statement",
    });
    const key = keys.document(input.detection, "s.pdf");
    await ctx.objects.put(ctx.bucket, key, Buffer.from(bytes), { contentType: "application/pdf" });
    const sha256 = createHash("sha256").update(bytes).digest("hex");
    return CheckStepResult.parse(
      await runCheckStep(
        {
          ...input,
          document: {
            filename: "s.pdf",
            contentType: "application/pdf",
            sizeBytes: bytes.length,
            key,
            sha256,
          },
        },
        ctx,
      ),
    );
  }

  it("carries a corroborated signature as the step's authoritative result", async () => {
    const result = await step(fixtures.get("valid")!.bytes);
    expect(result.authoritative).toMatchObject({ checkId: "signature.pdf", trust: "corroborated" });
    expect(result.discovered).toEqual(expect.arrayContaining(["signature_present", "incremental_updates"]));
  });

  it("carries a modified-after-signing document as authoritative unattested", async () => {
    const result = await step(fixtures.get("modified")!.bytes);
    expect(result.authoritative).toMatchObject({ checkId: "signature.pdf", trust: "unattested" });
    expect(result.checks.find((c) => c.checkId === "pdf.revisions")?.outcome).toBe("flag");
  });

  it("reads an anchors bundle, reporting certificates it cannot parse and using the others", async () => {
    const mixed = path.join(ctx.config.dataDir, "mixed.pem");
    await writeFile(
      mixed,
      `${rootPem}-----BEGIN CERTIFICATE-----\nbm90IGEgY2VydGlmaWNhdGU=\n-----END CERTIFICATE-----\n`,
    );
    const loaded = await loadTrustAnchors(mixed);
    expect(loaded.count).toBe(1);
    expect(loaded.error).toMatch(/1 of the 2 certificates in .*mixed\.pem cannot be parsed and are ignored/);
    const junk = path.join(ctx.config.dataDir, "junk.pem");
    await writeFile(junk, "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n");
    expect(await loadTrustAnchors(junk)).toEqual({
      error: expect.stringMatching(/none of which can be parsed/),
    });
    ctx.config.trustAnchorsFile = mixed;
    const result = await step(fixtures.get("valid")!.bytes);
    expect(result.authoritative).toMatchObject({ trust: "corroborated" });
    const sig = result.checks.find((c) => c.checkId === "signature.pdf");
    expect(sig?.findings.find((f) => f.code === "trust_anchors_unreadable")?.message).toMatch(
      /the 1 readable one was used/,
    );
  });

  it("reports an unreadable anchors file instead of failing", async () => {
    ctx.config.trustAnchorsFile = path.join(ctx.config.dataDir, "missing.pem");
    const result = await step(fixtures.get("valid")!.bytes);
    expect(result.authoritative).toBeUndefined();
    const sig = result.checks.find((c) => c.checkId === "signature.pdf");
    expect(sig?.findings.map((f) => f.code)).toContain("trust_anchors_unreadable");
  });
});
