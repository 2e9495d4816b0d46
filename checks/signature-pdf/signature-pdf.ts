import type { Finding, Trust } from "../../core/check-result.js";
import type { CodeTable } from "../../core/finding-levels.js";
import { rawPdfOf } from "../../document/pdf-raw/cache.js";
import { describeChange } from "../../document/pdf-raw/describe-change.js";
import type { RawPdf } from "../../document/pdf-raw/document.js";
import { type Change, cachedDiff } from "../../document/pdf-raw/revision-changes.js";
import { defineCheck, judge, skip } from "../check.js";
import { type PathResult, validatePath } from "./cert-path.js";
import { type Cert, displayName, mergeRevocation, parsePemBundle, summarize, uniqueCerts } from "./certs.js";
import { type CmsVerification, verifyCms } from "./cms-verify.js";
import { DEFAULT_LEVEL, type DocMdpLevel, levelWords } from "./docmdp-policy.js";
import { documentValidationData, type ValidationData } from "./dss.js";
import { findSignatures, type PdfSignature } from "./find-signatures.js";
import { cachedReview } from "./modification-policy.js";
import { verifyTimestampToken } from "./timestamp.js";

/**
 * signature.pdf: verifies every digital signature and document timestamp in a PDF, keeping two
 * questions apart (ARCHITECTURE.md, "Signature policy"; docs/signatures.md):
 *
 * Integrity — is this the document that was signed? The CMS signature over the /ByteRange verifies
 * (cms-verify.ts), the range covers whole revisions, and every later revision makes only changes the
 * signature's DocMDP level (and FieldMDP locks) permit, judged deny-by-default (modification-policy.ts).
 * Trust — who signed it? The signer's own certificate (the one its SignerInfo names) chains to a
 * DOCVERIFY_TRUST_ANCHORS anchor (cert-path.ts), valid and unrevoked (by the revocation data the document
 * carries) at the time basis: the time of a trusted timestamp (a signature-time-stamp token or a later
 * document timestamp whose authority chains to an anchor of the same bundle) when there is one, else now.
 * The signer's claimed signing time proves nothing and is never the basis.
 *
 *   corroborated  every signature intact and every signer trusted → authoritative, the agent is skipped
 *   unattested    a signature does not verify, or the document changed after it beyond what it permits
 *                 → authoritative, the directive names what failed or changed
 *   unverified    intact, but a signer is not trusted (no anchor, expired, revoked, weak algorithm,
 *                 unverifiable) → a finding for the agent
 * An unsigned PDF skips quietly, so unsigned documents are judged by the other checks alone.
 */

export const SIGNATURE_PDF_CHECK_ID = "signature.pdf";

/** Later revisions examined per signature at most. */
const MAX_LATER_REVISIONS = 50;
const MAX_SIGNATURES = 20;

type Integrity = "valid" | "failed" | "modified" | "unverifiable";

interface TimeBasis {
  at: Date;
  /** How the time was established, for the directive. */
  words: string;
  fromTimestamp: boolean;
}

interface Assessment {
  sig: PdfSignature;
  kind: "signature" | "timestamp";
  integrity: Integrity;
  reason?: string;
  cms?: CmsVerification;
  level: DocMdpLevel;
  permittedChanges: { revision: number; change: Change }[];
  forbiddenChanges: { revision: number; change: Change }[];
  /** The time the token attests (document timestamps). */
  genTime?: Date;
  trust?: { trusted: boolean; reason: string; basis: TimeBasis; path?: PathResult };
}

const iso = (d: Date) => d.toISOString().replace(/\.000Z$/, "Z");

function signerName(a: Assessment): string | undefined {
  return a.cms?.signer ? displayName(a.cms.signer) : undefined;
}

function who(a: Assessment): string {
  const field = a.sig.field ? `field "${a.sig.field}"` : `object ${a.sig.objNum}, in no field`;
  const name = signerName(a);
  const what = a.kind === "timestamp" ? "the document timestamp" : "the signature";
  return name ? `${what} in ${field} by "${name}"` : `${what} in ${field}`;
}

const cap = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);

function laterRevisions(raw: RawPdf, from: number): number[] {
  const out: number[] = [];
  for (let r = from + 1; r <= Math.min(raw.last, from + MAX_LATER_REVISIONS); r++) out.push(r);
  return out;
}

/** FieldMDP: whether a signature locks a field (its /Reference transform or its field's /Lock). */
function lockedBy(sig: PdfSignature): ((name: string) => boolean) | undefined {
  const lock = sig.fieldLock;
  if (!lock) return undefined;
  return (name) => {
    const listed = lock.fields.some((f) => name === f || name.startsWith(`${f}.`));
    return lock.action === "All" || (lock.action === "Include" ? listed : !listed);
  };
}

async function integrityOf(
  raw: RawPdf,
  sig: PdfSignature,
  certLevel: DocMdpLevel | undefined,
  dss: ValidationData,
  signal: AbortSignal | undefined,
): Promise<Assessment> {
  const level = Math.min(sig.docMdp ?? DEFAULT_LEVEL, certLevel ?? 3) as DocMdpLevel;
  const kind = sig.type === "DocTimeStamp" || sig.subFilter === "ETSI.RFC3161" ? "timestamp" : "signature";
  const base: Assessment = {
    sig,
    kind,
    integrity: "failed",
    level,
    permittedChanges: [],
    forbiddenChanges: [],
  };
  if (sig.subFilter === "adbe.x509.rsa_sha1")
    return {
      ...base,
      integrity: "unverifiable",
      reason:
        "its format (adbe.x509.rsa_sha1, a bare PKCS#1 signature from before CMS) is not verified by this service",
    };
  if (sig.rangeProblem || !sig.contents || !sig.signed || !sig.byteRange)
    return { ...base, reason: sig.rangeProblem ?? "it has no usable /ByteRange or /Contents" };
  let cms: CmsVerification;
  let genTime: Date | undefined;
  if (kind === "timestamp") {
    const t = verifyTimestampToken(sig.contents, sig.signed, dss.certs);
    cms = t.cms;
    genTime = t.genTime;
    if (t.status !== "valid")
      return { ...base, cms, integrity: t.status, reason: t.reason ?? "its timestamp token does not verify" };
  } else {
    cms = verifyCms(
      sig.contents,
      sig.subFilter === "adbe.pkcs7.sha1"
        ? { kind: "sha1", signed: sig.signed }
        : { kind: "detached", signed: sig.signed },
      dss.certs,
    );
    if (cms.status !== "valid")
      return { ...base, cms, integrity: cms.status, reason: cms.reason ?? "it does not verify" };
  }
  const ok: Assessment = { ...base, cms, integrity: "valid", ...(genTime ? { genTime } : {}) };
  if (!sig.coversWholeFile && sig.signedRevision < 0) {
    return {
      ...ok,
      integrity: "modified",
      reason: `its signed range ends at byte ${sig.byteRange[2] + sig.byteRange[3]}, inside a revision rather than at the end of one, so what follows cannot be told apart from the signed content`,
    };
  }
  if (sig.coversWholeFile) return ok;
  if (sig.signedRevision === raw.last && raw.trailingBytes > 0)
    return {
      ...ok,
      integrity: "modified",
      reason: `${raw.trailingBytes} bytes that belong to no revision follow the end of the signed revision, and the signature does not cover them`,
    };
  const locked = lockedBy(sig);
  const reasons: string[] = [];
  for (const r of laterRevisions(raw, sig.signedRevision)) {
    // Reviewing a revision is synchronous work: let the check's time bound and other checks in.
    await new Promise((done) => setImmediate(done));
    if (signal?.aborted) throw signal.reason ?? new Error("signature.pdf was stopped at its time bound");
    const review = cachedReview(raw, r);
    if (review.incomplete)
      return {
        ...ok,
        integrity: "unverifiable",
        reason: `revision ${r + 1} came after the signature, and the document is too large to review what it changed`,
      };
    const changes = cachedDiff(raw, r).changes;
    const touching = (objs: Iterable<number>) => {
      const set = new Set(objs);
      return changes.filter((c) => c.objects.some((o) => set.has(o)));
    };
    // Unexplained objects are named by what the revision walker says they are ("page 1 text …");
    // the rest by the rule they break.
    const unexplained = review.problems.filter((pr) => pr.unexplained);
    const described = touching(unexplained.flatMap((pr) => pr.objects));
    const covered = new Set(described.flatMap((c) => c.objects));
    for (const c of described) ok.forbiddenChanges.push({ revision: r, change: c });
    for (const d of new Set(described.map(describeChange))) reasons.push(`${d} (revision ${r + 1})`);
    for (const pr of review.problems) {
      if (pr.unexplained && pr.objects.every((o) => covered.has(o))) continue;
      reasons.push(`${pr.reason} (revision ${r + 1})`);
      if (!pr.unexplained)
        for (const c of touching(pr.objects)) ok.forbiddenChanges.push({ revision: r, change: c });
    }
    const tooHigh = [...review.approved].filter(([, l]) => l > level).map(([n]) => n);
    if (review.level > level) {
      const beyond = touching(tooHigh);
      for (const c of beyond) ok.forbiddenChanges.push({ revision: r, change: c });
      reasons.push(
        `revision ${r + 1} makes changes that need ${levelWords(review.level as DocMdpLevel)}${
          beyond.length ? ` (${[...new Set(beyond.map(describeChange))].slice(0, 3).join("; ")})` : ""
        }`,
      );
    }
    const lockedChanged = locked ? review.changedFields.filter(locked) : [];
    if (lockedChanged.length)
      reasons.push(
        `revision ${r + 1} changes form field${lockedChanged.length > 1 ? "s" : ""} ${lockedChanged.map((n) => `"${n}"`).join(", ")}, which the signature locks`,
      );
    if (!review.problems.length && review.level <= level && !lockedChanged.length)
      for (const c of changes) ok.permittedChanges.push({ revision: r, change: c });
  }
  if (reasons.length === 0) return ok;
  return {
    ...ok,
    integrity: "modified",
    reason: `the document was changed after signing beyond what the signature permits (${levelWords(level)}): ${reasons
      .slice(0, 4)
      .join("; ")}${reasons.length > 4 ? `; and ${reasons.length - 4} more` : ""}`,
  };
}

/** The time basis and trust of every intact signature and document timestamp. */
function judgeTrust(list: Assessment[], anchors: Cert[], dss: ValidationData, now: Date): void {
  const candidatesOf = (a: { cms?: CmsVerification }, extra: Cert[] = []) =>
    uniqueCerts([...(a.cms?.certificates ?? []), ...dss.certs, ...extra]);
  const revocationOf = (a: { cms?: CmsVerification }) =>
    mergeRevocation(a.cms?.revocation ?? { crls: [], ocsps: [] }, dss);

  // Document timestamps, newest first: an older one is judged at the time of a newer trusted one that
  // covers it (PAdES-LTA), the newest at the current time.
  const stamps = list
    .filter((a) => a.kind === "timestamp" && a.integrity === "valid" && a.cms?.signer && a.genTime)
    .sort((x, y) => y.sig.signedRevision - x.sig.signedRevision);
  const trustedStamps: { revision: number; at: Date; by: string }[] = [];
  for (const s of stamps) {
    const later = trustedStamps
      .filter((t) => t.revision > s.sig.signedRevision)
      .sort((x, y) => x.at.getTime() - y.at.getTime())[0];
    const basis: TimeBasis = later
      ? {
          at: later.at,
          words: `at the time of a later trusted document timestamp (${iso(later.at)}, ${later.by})`,
          fromTimestamp: true,
        }
      : { at: now, words: `at the current time (${iso(now)})`, fromTimestamp: false };
    const path = validatePath({
      leaf: s.cms?.signer as Cert,
      candidates: candidatesOf(s),
      anchors,
      at: basis.at,
      revocation: revocationOf(s),
      purpose: "timestamping",
    });
    s.trust = { trusted: path.trusted, reason: path.reason, basis, path };
    if (path.trusted)
      trustedStamps.push({
        revision: s.sig.signedRevision,
        at: s.genTime as Date,
        by: `"${displayName(s.cms?.signer as Cert)}"`,
      });
  }

  for (const a of list) {
    if (a.kind !== "signature" || (a.integrity !== "valid" && a.integrity !== "modified") || !a.cms?.signer)
      continue;
    // Proof of existence: the signature's own timestamp token, or a trusted document timestamp after it.
    const proofs: { at: Date; words: string }[] = [];
    const covering = trustedStamps
      .filter((t) => t.revision >= a.sig.signedRevision && a.sig.signedRevision >= 0)
      .sort((x, y) => x.at.getTime() - y.at.getTime());
    for (const t of covering) proofs.push({ at: t.at, words: `a trusted document timestamp (${t.by})` });
    const notes: string[] = [];
    if (a.cms.signatureTimestamp && a.cms.signatureValue) {
      const tst = verifyTimestampToken(a.cms.signatureTimestamp, a.cms.signatureValue, dss.certs);
      if (tst.status === "valid" && tst.authority && tst.genTime) {
        const tsBasis = covering[0]
          ? { at: covering[0].at, fromTimestamp: true }
          : { at: now, fromTimestamp: false };
        const path = validatePath({
          leaf: tst.authority,
          candidates: uniqueCerts([...tst.cms.certificates, ...candidatesOf(a)]),
          anchors,
          at: tsBasis.at,
          revocation: mergeRevocation(tst.cms.revocation, revocationOf(a)),
          purpose: "timestamping",
        });
        if (path.trusted)
          proofs.push({
            at: tst.genTime,
            words: `its signature timestamp ("${displayName(tst.authority)}")`,
          });
        else
          notes.push(
            `its signature timestamp from "${displayName(tst.authority)}" is not trusted (${path.reason})`,
          );
      } else notes.push(`its signature timestamp does not verify (${tst.reason ?? "unknown reason"})`);
    }
    proofs.sort((x, y) => x.at.getTime() - y.at.getTime());
    const proof = proofs[0];
    const basis: TimeBasis = proof
      ? { at: proof.at, words: `at ${iso(proof.at)}, the time ${proof.words} attests`, fromTimestamp: true }
      : {
          at: now,
          words: `at the current time (${iso(now)}), as no trusted timestamp proves when it was made${
            notes.length ? `: ${notes.join("; ")}` : ""
          }`,
          fromTimestamp: false,
        };
    const path = validatePath({
      leaf: a.cms.signer,
      candidates: candidatesOf(a),
      anchors,
      at: basis.at,
      revocation: revocationOf(a),
      purpose: "signing",
    });
    let reason = path.reason;
    let trusted = path.trusted;
    if (trusted && a.cms.weak) {
      trusted = false;
      reason = `${reason}, but the signature relies on ${a.cms.weak}, a digest whose collisions can be forged`;
    }
    if (!trusted && path.problem === "expired" && !basis.fromTimestamp && a.cms.claimedSigningTime)
      reason = `${reason}; the signer claims to have signed on ${iso(a.cms.claimedSigningTime)}, but a claimed time proves nothing`;
    a.trust = { trusted, reason, basis, path };
  }
}

function evidenceOf(a: Assessment): Record<string, unknown> {
  const signer = a.cms?.signer ? summarize(a.cms.signer) : undefined;
  return {
    field: a.sig.field,
    object: a.sig.objNum,
    kind: a.kind,
    ...(a.sig.subFilter ? { subFilter: a.sig.subFilter } : {}),
    ...(a.sig.byteRange ? { byteRange: a.sig.byteRange } : {}),
    coversWholeFile: a.sig.coversWholeFile,
    ...(a.sig.signedRevision >= 0 ? { signedRevision: a.sig.signedRevision + 1 } : {}),
    ...(signer
      ? {
          signer: signer.commonName,
          issuer: signer.issuer,
          serial: signer.serial,
          certificateValidity: [signer.notBefore, signer.notAfter],
        }
      : {}),
    ...(a.cms?.claimedSigningTime ? { claimedSigningTime: a.cms.claimedSigningTime.toISOString() } : {}),
    ...(a.genTime ? { timestampTime: a.genTime.toISOString() } : {}),
    ...(a.cms?.digest ? { digest: a.cms.digest } : {}),
    ...(a.cms?.algorithm ? { algorithm: a.cms.algorithm } : {}),
    ...(a.sig.docMdp ? { docMdp: a.sig.docMdp } : {}),
    ...(a.trust
      ? {
          timeBasis: a.trust.basis.fromTimestamp ? "timestamp" : "current_time",
          validatedAt: a.trust.basis.at.toISOString(),
          ...(a.trust.path?.trusted ? { path: a.trust.path.path.map((c) => summarize(c).commonName) } : {}),
        }
      : {}),
  };
}

function findingsOf(a: Assessment): Finding[] {
  const evidence = evidenceOf(a);
  const out: Finding[] = [];
  const subject = who(a);
  const covers = a.sig.coversWholeFile
    ? "covers the whole file"
    : "nothing after it goes beyond what it permits";
  switch (a.integrity) {
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
        ...(a.forbiddenChanges.find((x) => x.change.page)?.change.page
          ? { page: a.forbiddenChanges.find((x) => x.change.page)?.change.page as number }
          : {}),
        evidence: {
          ...evidence,
          reason: a.reason,
          changes: a.forbiddenChanges.slice(0, 10).map((x) => ({
            revision: x.revision + 1,
            kind: x.change.kind,
            change: describeChange(x.change),
          })),
        },
        severity: 9,
      });
      break;
    case "unverifiable":
      out.push({
        code: "signature_unverified",
        message: `${cap(subject)} could not be verified: ${a.reason}; it neither proves nor disproves anything.`,
        evidence: { ...evidence, reason: a.reason },
        severity: 2,
      });
      break;
    case "valid":
      if (a.kind === "timestamp") {
        out.push({
          code: a.trust?.trusted ? "document_timestamp_valid" : "document_timestamp_unverified",
          message: `${cap(subject)} is intact and attests that the document as of revision ${a.sig.signedRevision + 1} existed at ${iso(a.genTime as Date)}; ${
            a.trust?.trusted
              ? `its authority is trusted (${a.trust.reason}, judged ${a.trust.basis.words})`
              : `its authority is not trusted (${a.trust?.reason ?? "not checked"}), so that time is not relied on`
          }.`,
          evidence,
          severity: 0,
        });
      } else if (a.trust?.trusted) {
        out.push({
          code: "signature_valid",
          message: `${cap(subject)} is valid, ${covers}, and ${a.trust.reason}, judged ${a.trust.basis.words}.`,
          evidence,
          severity: 0,
        });
      } else {
        out.push({
          code: "signature_unverified",
          message: `${cap(subject)} is valid and ${covers}, but ${a.trust?.reason ?? "its signer was not checked"} (judged ${a.trust?.basis.words ?? "at the current time"}); it proves the signed bytes are unchanged, not who signed them.`,
          evidence: { ...evidence, chain: a.trust?.reason },
          severity: 2,
        });
      }
      break;
  }
  if (a.permittedChanges.length > 0 && a.integrity === "valid") {
    out.push({
      code: "signature_permitted_changes",
      message: `After ${subject}, later revisions made only changes it permits (${levelWords(a.level)}): ${[
        ...new Set(a.permittedChanges.map((x) => describeChange(x.change))),
      ]
        .slice(0, 6)
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

function decide(list: Assessment[]): { trust: Trust; authoritative: boolean; directive: string } {
  const failed = list.find((a) => a.integrity === "failed");
  if (failed) {
    return {
      trust: "unattested",
      authoritative: true,
      directive: `Unattested: ${who(failed)} fails verification (${failed.reason}); treat the document as altered after it was signed.`,
    };
  }
  const modified = list.find((a) => a.integrity === "modified");
  if (modified) {
    return {
      trust: "unattested",
      authoritative: true,
      directive: `Unattested: ${who(modified)} is valid for what it covers, but ${modified.reason}; treat the document as modified after signing.`,
    };
  }
  const signatures = list.filter((a) => a.kind === "signature");
  if (signatures.length > 0 && signatures.every((a) => a.integrity === "valid" && a.trust?.trusted)) {
    const permitted = [
      ...new Set(
        signatures.flatMap((a) =>
          a.permittedChanges.map((x) => `${describeChange(x.change)} (revision ${x.revision + 1})`),
        ),
      ),
    ];
    const signers = signatures
      .map((a) => `${signerName(a) ?? "unknown signer"} (judged ${a.trust?.basis.words})`)
      .join("; ");
    return {
      trust: "corroborated",
      authoritative: true,
      directive: `Corroborated: signed by ${signers}; every signature is valid, its signer's certificate chains to a configured trust anchor, and ${
        permitted.length === 0
          ? "the signatures cover the document as delivered"
          : `the only later changes are ones the signatures permit: ${permitted.slice(0, 6).join("; ")}`
      }.`,
    };
  }
  const weakest =
    signatures.find((a) => a.integrity === "unverifiable") ??
    signatures.find((a) => !a.trust?.trusted) ??
    undefined;
  if (!weakest)
    return {
      trust: "unverified",
      authoritative: false,
      directive: `Unverified: the document carries only document timestamps, which prove when it existed, not who issued it.`,
    };
  return {
    trust: "unverified",
    authoritative: false,
    directive:
      weakest.integrity === "unverifiable"
        ? `Unverified: ${who(weakest)} could not be verified (${weakest.reason}).`
        : `Unverified: ${who(weakest)} is intact, but ${weakest.trust?.reason ?? "its signer was not checked"} (judged ${weakest.trust?.basis.words ?? "at the current time"}).`,
  };
}

/** Every finding code this check reports: its highest level, its kind of evidence, what it means. */
export const CODES = {
  signature_invalid: {
    level: "proof",
    kind: "signature",
    means: "A digital signature does not verify.",
  },
  signature_modified_after_signing: {
    level: "proof",
    kind: "signature",
    means: "The document was changed after it was signed, beyond what the signature permits.",
  },
  signature_unverified: {
    level: "note",
    kind: "signature",
    means: "A signature is intact but its signer could not be verified.",
  },
  signature_valid: {
    level: "note",
    kind: "signature",
    means: "A signature is intact and chains to a trust anchor.",
  },
  signature_permitted_changes: {
    level: "note",
    kind: "signature",
    means: "Later revisions made only the changes the signature permits.",
  },
  document_timestamp_valid: {
    level: "note",
    kind: "signature",
    means: "A document timestamp is intact and trusted.",
  },
  document_timestamp_unverified: {
    level: "note",
    kind: "signature",
    means: "A document timestamp is intact but its authority was not verified.",
  },
  trust_anchors_unreadable: {
    level: "note",
    kind: "signature",
    means: "The configured trust anchors could not be read.",
  },
} as const satisfies CodeTable;

export const signaturePdfCheck = defineCheck({
  id: SIGNATURE_PDF_CHECK_ID,
  codes: CODES,
  appliesTo: (doc) => doc.contentType === "application/pdf",
  async inspect(doc, ctx) {
    const raw = rawPdfOf(doc);
    const sigs = findSignatures(raw);
    if (sigs.length === 0) {
      return skip(
        "The PDF carries no digital signature, so nothing attests its content; the other checks judge it.",
      );
    }
    const certLevel = sigs
      .filter((s) => s.docMdp !== undefined)
      .reduce<DocMdpLevel | undefined>(
        (m, s) => (m === undefined ? s.docMdp : (Math.min(m, s.docMdp as number) as DocMdpLevel)),
        undefined,
      );
    const anchors = parsePemBundle(ctx.trustAnchorsPem ?? "").certs;
    const dss = documentValidationData(raw);
    const assessed: Assessment[] = [];
    for (const s of sigs.slice(0, MAX_SIGNATURES)) {
      if (ctx.signal?.aborted) break;
      assessed.push(await integrityOf(raw, s, certLevel, dss, ctx.signal));
      // Verification is synchronous work; let the step's time bound and other work in.
      await new Promise((r) => setImmediate(r));
    }
    judgeTrust(assessed, anchors, dss, ctx.now);
    const findings = assessed.flatMap(findingsOf);
    if (ctx.trustAnchorsError) {
      findings.push({
        code: "trust_anchors_unreadable",
        message: ctx.trustAnchorsPem
          ? `Some of the configured trust anchors could not be read (${ctx.trustAnchorsError}); the ${anchors.length} readable one${anchors.length === 1 ? " was" : "s were"} used.`
          : `The configured trust anchors could not be read (${ctx.trustAnchorsError}), so no signer could be tied to a trusted authority.`,
        severity: 0,
      });
    }
    const decision = decide(assessed);
    return {
      findings,
      discovered: ["signature_present"],
      ...(decision.authoritative
        ? { authoritative: { trust: decision.trust, directive: decision.directive } }
        : {}),
      signatures: sigs.length,
      decision,
    };
  },
  // A corroborated signature passes whatever notes its findings carry.
  judge: ({ findings, decision }) =>
    decision.trust === "corroborated" ? { outcome: "pass", severity: 0 } : judge(findings),
  summary: ({ signatures, decision }) =>
    `${signatures} digital signature${signatures > 1 ? "s" : ""} found; trust ${decision.trust}: ${decision.directive.replace(/^\w+: /, "")}`,
});
