import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CheckResult } from "../../core/check-result.js";
import { CheckStepResult, keys } from "../../core/detection.js";
import { openRawPdf } from "../../document/pdf-raw/document.js";
import { modelOf } from "../../document/testdata/model-kit.js";
import { runCheckStep } from "../step.js";
import { createTestStepContext, stepInput, type TestStepContext } from "../testdata/step-context.js";
import { certFromPkijs } from "./certs.js";
import { parseSignedData } from "./cms-verify.js";
import { findSignatures } from "./find-signatures.js";
import { signaturePdfCheck } from "./signature-pdf.js";
import {
  allPdfs,
  pyhankoDir,
  pyhankoMissing,
  readPdf,
  type SignedExpectation,
  signedExpectations,
} from "./testdata/peer-suite.js";

/**
 * pyHanko's own test PDFs (../shared/peer-suites/pyhanko, MIT), with what pyHanko's test suite expects
 * of each signed file: `intact` must never be reported unattested, `altered` must be. Run without trust
 * anchors, then with pyHanko's test CAs as anchors (every self-signed certificate the files' signatures
 * carry, extracted here) at today's clock — where most test certificates have expired, so `unverified`
 * is right for most — and at a clock inside their validity (2020-12-01), where every intact file must
 * reach `corroborated` and no altered file may. poppler's pdfsig is a second oracle for what it checks.
 */

const missing = pyhankoMissing();
const TODAY = new Date("2026-01-15T12:00:00Z");
const IN_VALIDITY = new Date("2020-12-01T00:00:00Z");

/** What the directive of each altered file must name: what exactly failed or changed. */
const ALTERED_BECAUSE: Record<string, RegExp> = {
  "coverage-anomalies/tail-uncovered.pdf": /signed range ends at byte \d+, inside a revision/,
  "coverage-anomalies/signature-gap-too-big.pdf": /the gap its \/ByteRange leaves is not/,
  "coverage-anomalies/weird-byterange.pdf": /its \/ByteRange does not leave out exactly the signature value/,
  "coverage-anomalies/one-byterange.pdf": /its \/ByteRange is not four non-negative whole numbers/,
  "ed448-disallowed-hash.pdf":
    /Ed448 requires SHAKE256 \(512-bit output\) as the CMS digest algorithm \(RFC 8419\), but this signature uses SHA-512/,
  "extensions-indirect-not-all-paths.pdf":
    /object 10 was overwritten, but it is also used by the document catalog \(\/DontOverrideMe\)/,
  "form-update-override-appearance-stream-sneaky.pdf":
    /object 9 \(XObject\) was overwritten, but it is also used by the document catalog \(\/FooBar\)/,
  "form-update-no-override-appearance-stream-ap-indirect-sneaky.pdf":
    /appearance dictionary \(object 10\) is also used by the document catalog \(\/FooBar\)/,
  "form-update-ap-indirect-sneaky-trailer.pdf":
    /appearance dictionary \(object 10\) is also used by the file trailer \(\/FooBar\)/,
  "form-update-override-appearance-stream-ap-indirect-sneaky.pdf":
    /appearance dictionary \(object 10\) is also used by the document catalog \(\/FooBar\)/,
  "pdf-sig-with-econtent.pdf": /detached PDF signature but its CMS blob also encapsulates content/,
};

function testCaAnchors(files: SignedExpectation[]): string {
  const pems = new Map<string, string>();
  for (const e of files) {
    for (const s of findSignatures(openRawPdf(readPdf(e.file)))) {
      if (!s.contents) continue;
      const sd = parseSignedData(s.contents);
      if (typeof sd === "string") continue;
      for (const c of sd.certificates ?? []) {
        const cert = "subject" in c ? certFromPkijs(c) : undefined;
        if (!cert?.pki.subject.isEqual(cert.pki.issuer)) continue;
        pems.set(
          cert.id,
          `-----BEGIN CERTIFICATE-----\n${cert.der.toString("base64").replace(/.{64}/g, "$&\n")}\n-----END CERTIFICATE-----\n`,
        );
      }
    }
  }
  return [...pems.values()].join("");
}

async function verdict(file: string, now: Date, anchors?: string) {
  return CheckResult.parse(
    await signaturePdfCheck.run(await modelOf(readPdf(file)), {
      now,
      ...(anchors ? { trustAnchorsPem: anchors } : {}),
    }),
  );
}

const trustOf = (r: CheckResult) =>
  r.authoritative?.trust ??
  (r.findings.some((f) => f.code === "signature_unverified") ? "unverified" : r.outcome);

describe.skipIf(missing !== undefined)(
  `pyHanko's peer suite${missing ? ` (skipped: ${missing})` : ""}`,
  () => {
    let signed: SignedExpectation[];
    let anchors: string;
    beforeAll(() => {
      signed = signedExpectations();
      anchors = testCaAnchors(signed);
    });

    it("has the 32 signed files the expectations name, and test CAs to anchor them", () => {
      expect(signed).toHaveLength(32);
      expect(anchors.match(/BEGIN CERTIFICATE/g)?.length).toBeGreaterThanOrEqual(6);
    });

    it("without anchors: intact files are unverified (never unattested), altered files unattested with the reason named", async () => {
      for (const e of signed) {
        const r = await verdict(e.file, TODAY);
        if (e.expected_integrity === "intact") {
          expect(trustOf(r), `${e.file}: ${r.summary}`).toBe("unverified");
          expect(r.authoritative, e.file).toBeUndefined();
          expect(r.summary, e.file).toMatch(/no trust anchors are configured/);
        } else {
          expect(r.authoritative?.trust, `${e.file}: ${r.summary}`).toBe("unattested");
          expect(r.authoritative?.directive, e.file).toMatch(ALTERED_BECAUSE[e.file] as RegExp);
        }
      }
    });

    it("with the test CAs as anchors, today: expired test signers are unverified, the rest corroborated, altered files unattested", async () => {
      const corroborated: string[] = [];
      for (const e of signed) {
        const r = await verdict(e.file, TODAY, anchors);
        const t = trustOf(r);
        if (e.expected_integrity === "intact") {
          expect(t, `${e.file}: ${r.summary}`).not.toBe("unattested");
          if (t === "corroborated") corroborated.push(e.file);
          else expect(r.summary, e.file).toMatch(/expired on|judged at the current time/);
        } else {
          expect(t, `${e.file}: ${r.summary}`).toBe("unattested");
        }
      }
      // Self-signed test signers still valid today, and PAdES-LTA files whose timestamps prove the
      // signatures were made while their certificates were valid.
      expect(corroborated.sort()).toEqual([
        "minimal-signed-twice-both-created.pdf",
        "minimal-signed-twice-second-created.pdf",
        "minimal-two-fields-signed-twice.pdf",
        "pades-lta-dss-indirect-arrs-test-2.pdf",
        "pades-lta-dss-indirect-arrs-test.pdf",
      ]);
      const lta = await verdict("pades-lta-dss-indirect-arrs-test.pdf", TODAY, anchors);
      expect(lta.authoritative?.directive).toMatch(
        /^Corroborated: signed by Alice \(Example Inc\) \(judged at 2020-11-01T00:00:00Z, the time a trusted document timestamp \("Time Stamping Authority \(Example Inc\)"\) attests\)/,
      );
      expect(lta.authoritative?.directive).toMatch(
        /only later changes are ones the signatures permit: .*signature validation data \(DSS\)/,
      );
    });

    it("with the test CAs as anchors inside the certificates' validity: every intact file corroborated, no altered one", async () => {
      for (const e of signed) {
        const r = await verdict(e.file, IN_VALIDITY, anchors);
        expect(trustOf(r), `${e.file}: ${r.summary}`).toBe(
          e.expected_integrity === "intact" ? "corroborated" : "unattested",
        );
      }
      const ski = await verdict("sig-with-ski-sid.pdf", IN_VALIDITY, anchors);
      expect(ski.authoritative?.directive).toMatch(/^Corroborated: signed by Alice \(Example Inc\)/);
      expect(ski.findings[0]?.evidence?.path).toEqual(["Alice", "Intermediate CA", "Root CA"]);
    });

    it("agrees with poppler's pdfsig where pdfsig can tell (oracle)", async (ctx) => {
      try {
        execFileSync("pdfsig", ["-v"], { stdio: "ignore" });
      } catch {
        ctx.skip("pdfsig (poppler-utils) is not installed; npm run test:setup installs it");
      }
      for (const e of signed) {
        let out = "";
        try {
          out = execFileSync("pdfsig", ["-nocert", path.join(pyhankoDir(), e.file)], {
            encoding: "utf8",
            timeout: 30_000,
          });
        } catch (err) {
          out = String((err as { stdout?: string }).stdout ?? "");
        }
        const blocks = out.split(/^Signature #\d+:/m).slice(1);
        const ours = findSignatures(openRawPdf(readPdf(e.file)));
        const r = await verdict(e.file, IN_VALIDITY, anchors);
        // The same signatures, and the same ones covering the whole file.
        expect(blocks.length, e.file).toBe(ours.length);
        const pdfsigWhole = blocks.filter((b) => /Total document signed/.test(b)).length;
        expect(ours.filter((s) => s.coversWholeFile).length, e.file).toBe(pdfsigWhole);
        // Where pdfsig finds a digest or signature mismatch, the document is unattested; where it finds every
        // signature valid, our signers are the ones it names.
        if (blocks.some((b) => /Digest Mismatch|Signature is Invalid/.test(b)))
          expect(r.authoritative?.trust, e.file).toBe("unattested");
        const names = blocks.flatMap(
          (b) => /Signer full Distinguished Name: .*?CN=([^,\n]+)/.exec(b)?.[1] ?? [],
        );
        const ourNames = r.findings.flatMap((f) =>
          typeof f.evidence?.signer === "string" ? [f.evidence.signer] : [],
        );
        for (const n of names) if (ourNames.length) expect(ourNames, e.file).toContain(n);
      }
    });

    describe("every unsigned file reaches a terminal state through the check step", () => {
      let step: TestStepContext;
      beforeAll(async () => {
        step = await createTestStepContext();
      });
      afterAll(() => step.cleanup());

      it("each returns a step result: checks with a signature.pdf verdict, or document_unreadable / _encrypted / _too_complex", async () => {
        const signedFiles = new Set(signed.map((e) => e.file));
        const unsigned = allPdfs().filter((f) => !signedFiles.has(f));
        expect(unsigned.length).toBeGreaterThan(90);
        const seen = { unreadable: 0, encrypted: 0, checked: 0 };
        for (const file of unsigned) {
          const bytes = readPdf(file);
          const input = stepInput("check", { source: { url: "https://example.com/peer.pdf" } });
          const key = keys.document(input.detection, "peer.pdf");
          await step.objects.put(step.bucket, key, Buffer.from(bytes), { contentType: "application/pdf" });
          const result = CheckStepResult.parse(
            await runCheckStep(
              {
                ...input,
                document: {
                  filename: "peer.pdf",
                  contentType: "application/pdf",
                  sizeBytes: bytes.length,
                  key,
                  sha256: createHash("sha256").update(bytes).digest("hex"),
                },
              },
              step,
            ),
          );
          if (result.failure) {
            // Password- and certificate-encrypted files (pyHanko's test passwords, Adobe.PubSec) need what
            // the service does not have; the circular page tree is over the structure budget.
            const expected = /pubkey|aes256|rc4|encrypt/.test(file)
              ? "document_encrypted"
              : /circular-page-tree/.test(file)
                ? "document_too_complex"
                : "document_unreadable";
            expect(result.failure.code, file).toBe(expected);
            if (expected === "document_encrypted") seen.encrypted++;
            else seen.unreadable++;
            continue;
          }
          const sig = result.checks.find((c) => c.checkId === "signature.pdf");
          expect(sig, file).toBeDefined();
          expect(sig?.outcome, `${file}: ${sig?.summary}`).not.toBe("error");
          seen.checked++;
        }
        expect(seen.checked).toBeGreaterThan(60);
        expect(seen.encrypted).toBeGreaterThan(15);
      }, 240_000);
    });
  },
);
