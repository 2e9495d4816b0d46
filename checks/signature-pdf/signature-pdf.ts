import type { CheckResult, Finding, Trust } from "../../core/check-result.js";
import { rawPdfOf } from "../../document/pdf-raw/cache.js";
import { describeChange } from "../../document/pdf-raw/describe-change.js";
import type { RawPdf } from "../../document/pdf-raw/document.js";
import { type Change, cachedDiff } from "../../document/pdf-raw/revision-changes.js";
import { formatParsed, parseAnyDate } from "../../document/values/pdf-date.js";
import { type Check, judge } from "../check.js";
import { type CmsVerification, parsePemCertificates, verifyCms } from "./cms-verify.js";
import { DEFAULT_LEVEL, type DocMdpLevel, levelWords, permitted } from "./docmdp-policy.js";
import { findSignatures, type PdfSignature } from "./find-signatures.js";

/**
 * signature.pdf: verifies every digital signature in a PDF (CMS/PKCS#7 over its /ByteRange, with pkijs):
 * digest, signature, what it covers (whole file, or which later revisions changed what — judged
 * deny-by-default against its DocMDP level), and the signer's chain to DOCVERIFY_TRUST_ANCHORS.
 *
 * Trust (ARCHITECTURE.md, "Signature policy"), authoritative when corroborated or when a present
 * signature fails:
 *   corroborated  every signature is valid, nothing after it goes beyond what it permits, and every
 *                 signer chains to a trust anchor → authoritative, the agent is skipped
 *   unattested    a signature fails verification, or content changed after signing beyond its DocMDP
 *                 level → authoritative, the directive names what failed or changed
 *   unverified    valid and unmodified, but a chain cannot be established → a finding for the agent
 * An unsigned PDF is unattested in the policy's terms, but that is the normal case: the check skips
 * quietly (no finding, not authoritative) so unsigned documents are judged by the other checks alone.
 */

export const SIGNATURE_PDF_CHECK_ID = "signature.pdf";

/** Later revisions examined per signature at most. */
const MAX_LATER_REVISIONS = 50;

type Status = "failed" | "modified" | "trusted" | "untrusted" | "unsupported";

interface Assessment {
  sig: PdfSignature;
  status: Status;
  cms?: CmsVerification;
  reason?: string;
  level: DocMdpLevel;
  permittedChanges: { revision: number; change: Change }[];
  forbiddenChanges: { revision: number; change: Change }[];
}

const UNSUPPORTED_SUBFILTERS = new Set(["adbe.x509.rsa.sha1", "ETSI.RFC3161"]);

function who(a: Assessment): string {
  const s = a.cms?.signer;
  const field = a.sig.field ? `field "${a.sig.field}"` : `object ${a.sig.objNum}, in no field`;
  return s
    ? `the signature in ${field} by "${s.commonName}"${s.organization ? ` (${s.organization})` : ""}`
    : `the signature in ${field}`;
}

function when(a: Assessment): string {
  const t = a.cms?.signingTime;
  if (t) return ` on ${t.toISOString().replace(/\.000Z$/, "Z")}`;
  const p = a.sig.claimedTime ? parseAnyDate(a.sig.claimedTime) : undefined;
  return p ? ` on ${formatParsed(p)}` : "";
}

function laterChanges(raw: RawPdf, from: number): { revision: number; change: Change }[] {
  const out: { revision: number; change: Change }[] = [];
  const last = Math.min(raw.last, from + MAX_LATER_REVISIONS);
  for (let r = from + 1; r <= last; r++)
    for (const change of cachedDiff(raw, r).changes) out.push({ revision: r, change });
  return out;
}

async function assess(
  raw: RawPdf,
  sig: PdfSignature,
  certLevel: DocMdpLevel | undefined,
  anchorsPem: string,
  now: Date,
): Promise<Assessment> {
  const level = Math.min(sig.docMdp ?? DEFAULT_LEVEL, certLevel ?? 3) as DocMdpLevel;
  const base: Assessment = { sig, status: "failed", level, permittedChanges: [], forbiddenChanges: [] };
  if (sig.type === "DocTimeStamp" || (sig.subFilter && UNSUPPORTED_SUBFILTERS.has(sig.subFilter))) {
    return {
      ...base,
      status: "unsupported",
      reason: `its format (${sig.subFilter ?? sig.type}) is not verified by this service`,
    };
  }
  if (sig.rangeProblem || !sig.contents || !sig.signed || !sig.byteRange) {
    return { ...base, reason: sig.rangeProblem ?? "it has no usable /ByteRange or /Contents" };
  }
  const anchors = parsePemCertificates(anchorsPem).certs;
  const cms = await verifyCms(sig.contents, sig.signed, {
    ...(sig.subFilter ? { subFilter: sig.subFilter } : {}),
    trustAnchors: anchors,
    now,
  });
  if (cms.failure) return { ...base, cms, reason: cms.failure };
  if (!sig.coversWholeFile && sig.signedRevision < 0) {
    return {
      ...base,
      cms,
      status: "modified",
      reason: `its signed range ends at byte ${sig.byteRange[2] + sig.byteRange[3]}, inside a revision rather than at the end of one, so what follows cannot be told apart from the signed content`,
    };
  }
  const later = sig.coversWholeFile ? [] : laterChanges(raw, sig.signedRevision);
  const forbidden = later.filter((x) => !permitted(x.change, level));
  const allowed = later.filter((x) => permitted(x.change, level));
  const result: Assessment = { ...base, cms, permittedChanges: allowed, forbiddenChanges: forbidden };
  if (forbidden.length > 0) {
    return {
      ...result,
      status: "modified",
      reason: `the document was changed after signing beyond what the signature permits (${levelWords(level)}): ${forbidden
        .slice(0, 4)
        .map((x) => `${describeChange(x.change)} in revision ${x.revision + 1}`)
        .join("; ")}${forbidden.length > 4 ? `; and ${forbidden.length - 4} more` : ""}`,
    };
  }
  return {
    ...result,
    status: cms.chain?.trusted ? "trusted" : "untrusted",
    reason: cms.chain?.reason ?? "no chain was checked",
  };
}

function findingsOf(a: Assessment): Finding[] {
  const evidence: Record<string, unknown> = {
    field: a.sig.field,
    object: a.sig.objNum,
    ...(a.sig.subFilter ? { subFilter: a.sig.subFilter } : {}),
    ...(a.sig.byteRange ? { byteRange: a.sig.byteRange } : {}),
    coversWholeFile: a.sig.coversWholeFile,
    ...(a.sig.signedRevision >= 0 ? { signedRevision: a.sig.signedRevision + 1 } : {}),
    ...(a.cms?.signer
      ? { signer: a.cms.signer.commonName, issuer: a.cms.signer.issuer, serial: a.cms.signer.serial }
      : {}),
    ...(a.cms?.signingTime ? { signingTime: a.cms.signingTime.toISOString() } : {}),
    ...(a.cms?.digestAlgorithm ? { digest: a.cms.digestAlgorithm } : {}),
    ...(a.sig.docMdp ? { docMdp: a.sig.docMdp } : {}),
  };
  const out: Finding[] = [];
  const subject = who(a);
  switch (a.status) {
    case "failed":
      out.push({
        code: "signature_invalid",
        message: `${cap(subject)} fails verification: ${a.reason}.`,
        evidence: { ...evidence, reason: a.reason },
        severity: 9,
      });
      break;
    case "modified":
      out.push({
        code: "signature_modified_after_signing",
        message: `${cap(subject)} is valid for the bytes it covers, but ${a.reason}.`,
        ...(a.forbiddenChanges[0]?.change.page ? { page: a.forbiddenChanges[0].change.page } : {}),
        evidence: {
          ...evidence,
          changes: a.forbiddenChanges.slice(0, 10).map((x) => ({
            revision: x.revision + 1,
            kind: x.change.kind,
            change: describeChange(x.change),
          })),
        },
        severity: 9,
      });
      break;
    case "untrusted":
      out.push({
        code: "signature_unverified",
        message: `${cap(subject)} is valid and ${a.sig.coversWholeFile ? "covers the whole file" : "nothing after it goes beyond what it permits"}, but ${a.reason}; it proves the signed bytes are unchanged, not who signed them.`,
        evidence: { ...evidence, chain: a.reason },
        severity: 2,
      });
      break;
    case "trusted":
      out.push({
        code: "signature_valid",
        message: `${cap(subject)}${when(a)} is valid, ${a.sig.coversWholeFile ? "covers the whole file" : "nothing after it goes beyond what it permits"}, and ${a.reason}.`,
        evidence,
        severity: 0,
      });
      break;
    case "unsupported":
      out.push({
        code: "signature_unsupported",
        message: `${cap(subject)} was not verified: ${a.reason}.`,
        evidence,
        severity: 1,
      });
      break;
  }
  if (a.permittedChanges.length > 0 && a.status !== "failed") {
    out.push({
      code: "signature_permitted_changes",
      message: `After ${subject}, later revisions made only changes it permits (${levelWords(a.level)}): ${a.permittedChanges
        .slice(0, 6)
        .map((x) => describeChange(x.change))
        .join("; ")}.`,
      evidence: {
        ...evidence,
        changes: a.permittedChanges
          .slice(0, 20)
          .map((x) => ({ revision: x.revision + 1, change: describeChange(x.change) })),
      },
      severity: 0,
    });
  }
  return out;
}

const cap = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);

function decide(list: Assessment[]): { trust: Trust; authoritative: boolean; directive: string } {
  const failed = list.find((a) => a.status === "failed");
  if (failed) {
    return {
      trust: "unattested",
      authoritative: true,
      directive: `Unattested: ${who(failed)} fails verification (${failed.reason}); treat the document as altered after it was signed.`,
    };
  }
  const modified = list.find((a) => a.status === "modified");
  if (modified) {
    return {
      trust: "unattested",
      authoritative: true,
      directive: `Unattested: ${who(modified)} is valid for what it covers, but ${modified.reason}; treat the document as modified after signing.`,
    };
  }
  const checked = list.filter((a) => a.status !== "unsupported");
  if (checked.length > 0 && checked.every((a) => a.status === "trusted")) {
    const permittedList = [
      ...new Set(
        checked.flatMap((a) =>
          a.permittedChanges.map((x) => `${describeChange(x.change)} (revision ${x.revision + 1})`),
        ),
      ),
    ];
    const signers = checked
      .map((a) => `${a.cms?.signer?.commonName ?? "unknown signer"}${when(a)}`)
      .join("; ");
    return {
      trust: "corroborated",
      authoritative: true,
      directive: `Corroborated: signed by ${signers}; every signature is valid, chains to a configured trust anchor, and ${
        permittedList.length === 0
          ? "covers the document as delivered"
          : `the only later changes are ones the signatures permit: ${permittedList.slice(0, 6).join("; ")}`
      }.`,
    };
  }
  const untrusted = checked.find((a) => a.status === "untrusted") ?? list[0];
  return {
    trust: "unverified",
    authoritative: false,
    directive: untrusted
      ? `Unverified: ${who(untrusted)} is intact, but ${untrusted.reason}.`
      : "Unverified: no signature could be verified.",
  };
}

export const signaturePdfCheck: Check = {
  id: SIGNATURE_PDF_CHECK_ID,
  appliesTo: (doc) => doc.contentType === "application/pdf",
  async run(doc, ctx): Promise<CheckResult> {
    const base = { checkId: SIGNATURE_PDF_CHECK_ID, severity: 0 };
    const raw = rawPdfOf(doc);
    const sigs = findSignatures(raw);
    if (sigs.length === 0) {
      return {
        ...base,
        outcome: "skip",
        summary:
          "The PDF carries no digital signature, so nothing attests its content; the other checks judge it.",
        findings: [],
      };
    }
    const certLevel = sigs
      .filter((s) => s.docMdp !== undefined)
      .reduce<DocMdpLevel | undefined>(
        (m, s) => (m === undefined ? s.docMdp : (Math.min(m, s.docMdp as number) as DocMdpLevel)),
        undefined,
      );
    const assessed: Assessment[] = [];
    for (const s of sigs.slice(0, 20)) {
      if (ctx.signal?.aborted) break;
      assessed.push(await assess(raw, s, certLevel, ctx.trustAnchorsPem ?? "", ctx.now));
    }
    const findings = assessed.flatMap(findingsOf);
    if (ctx.trustAnchorsError) {
      findings.push({
        code: "trust_anchors_unreadable",
        message: `The configured trust anchors could not be read (${ctx.trustAnchorsError}), so no signer could be tied to a trusted authority.`,
        severity: 0,
      });
    }
    const decision = decide(assessed);
    const { outcome, severity } = judge(findings);
    const summary = `${sigs.length} digital signature${sigs.length > 1 ? "s" : ""} found; trust ${decision.trust}: ${decision.directive.replace(/^\w+: /, "")}`;
    return {
      ...base,
      outcome: decision.trust === "corroborated" ? "pass" : outcome,
      severity: decision.trust === "corroborated" ? 0 : severity,
      summary,
      findings,
      discovered: ["signature_present"],
      ...(decision.authoritative
        ? { authoritative: { trust: decision.trust, directive: decision.directive } }
        : {}),
    };
  },
};
