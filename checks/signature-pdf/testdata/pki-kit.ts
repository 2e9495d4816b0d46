import { createHash, generateKeyPairSync, type KeyObject, sign } from "node:crypto";
import * as asn1js from "asn1js";
import * as pkijs from "pkijs";

/**
 * A test PKI built in code for signature.pdf's tests: certificates of any key type real signers use
 * (RSA, RSA-PSS, ECDSA P-256/384/521, Ed25519, Ed448), CMS SignedData blobs over PDF bytes (with or
 * without signed attributes, signer identified by issuer+serial or subject key identifier, any
 * certificate list in any order — including the forgeries an attacker would build), RFC 3161 timestamp
 * tokens and CRLs. Structures come from pkijs/asn1js, signatures from node:crypto; keys are generated
 * per test run (nothing is checked in).
 */

export type KeyType = "rsa" | "rsa-pss" | "ec-p256" | "ec-p384" | "ec-p521" | "ed25519" | "ed448";

export interface TestIdentity {
  key: KeyObject;
  publicKey: KeyObject;
  keyType: KeyType;
  cert: pkijs.Certificate;
  der: Buffer;
  pem: string;
}

const OIDS = {
  cn: "2.5.4.3",
  o: "2.5.4.10",
  c: "2.5.4.6",
  data: "1.2.840.113549.1.7.1",
  signedData: "1.2.840.113549.1.7.2",
  tstInfo: "1.2.840.113549.1.9.16.1.4",
  contentType: "1.2.840.113549.1.9.3",
  messageDigest: "1.2.840.113549.1.9.4",
  signingTime: "1.2.840.113549.1.9.5",
  signingCertificateV2: "1.2.840.113549.1.9.16.2.47",
  signatureTimeStampToken: "1.2.840.113549.1.9.16.2.14",
  timeStamping: "1.3.6.1.5.5.7.3.8",
};

const DIGESTS = {
  sha1: "1.3.14.3.2.26",
  sha256: "2.16.840.1.101.3.4.2.1",
  sha384: "2.16.840.1.101.3.4.2.2",
  sha512: "2.16.840.1.101.3.4.2.3",
  shake256: "2.16.840.1.101.3.4.2.12",
} as const;
export type DigestName = keyof typeof DIGESTS;

export function generateKey(type: KeyType): { key: KeyObject; publicKey: KeyObject } {
  const pair =
    type === "rsa"
      ? generateKeyPairSync("rsa", { modulusLength: 2048 })
      : type === "rsa-pss"
        ? generateKeyPairSync("rsa", { modulusLength: 2048 })
        : type === "ed25519"
          ? generateKeyPairSync("ed25519")
          : type === "ed448"
            ? generateKeyPairSync("ed448")
            : generateKeyPairSync("ec", {
                namedCurve: { "ec-p256": "P-256", "ec-p384": "P-384", "ec-p521": "P-521" }[type],
              });
  return { key: pair.privateKey, publicKey: pair.publicKey };
}

const alg = (algorithmId: string, params?: asn1js.BaseBlock) =>
  new pkijs.AlgorithmIdentifier({ algorithmId, ...(params ? { algorithmParams: params } : {}) });

function pssParams(): asn1js.Sequence {
  // RSASSA-PSS-params with SHA-256, MGF1(SHA-256), salt 32.
  const sha256 = new asn1js.Sequence({ value: [new asn1js.ObjectIdentifier({ value: DIGESTS.sha256 })] });
  return new asn1js.Sequence({
    value: [
      new asn1js.Constructed({ idBlock: { tagClass: 3, tagNumber: 0 }, value: [sha256] }),
      new asn1js.Constructed({
        idBlock: { tagClass: 3, tagNumber: 1 },
        value: [
          new asn1js.Sequence({
            value: [new asn1js.ObjectIdentifier({ value: "1.2.840.113549.1.1.8" }), sha256],
          }),
        ],
      }),
      new asn1js.Constructed({
        idBlock: { tagClass: 3, tagNumber: 2 },
        value: [new asn1js.Integer({ value: 32 })],
      }),
    ],
  });
}

/** The signature algorithm identifier and node:crypto call for a key type and digest. */
function signer(
  type: KeyType,
  digest: DigestName,
): { algorithm: pkijs.AlgorithmIdentifier; sign(data: Uint8Array, key: KeyObject): Buffer } {
  const hash = digest === "shake256" ? "sha512" : digest;
  switch (type) {
    case "rsa":
      return {
        algorithm: alg(
          {
            sha1: "1.2.840.113549.1.1.5",
            sha256: "1.2.840.113549.1.1.11",
            sha384: "1.2.840.113549.1.1.12",
            sha512: "1.2.840.113549.1.1.13",
            shake256: "1.2.840.113549.1.1.13",
          }[digest],
          new asn1js.Null(),
        ),
        sign: (d, key) => sign(hash, d, key),
      };
    case "rsa-pss":
      return {
        algorithm: alg("1.2.840.113549.1.1.10", pssParams()),
        sign: (d, key) => sign("sha256", d, { key, padding: 6 /* RSA_PKCS1_PSS_PADDING */, saltLength: 32 }),
      };
    case "ec-p256":
    case "ec-p384":
    case "ec-p521":
      return {
        algorithm: alg(
          {
            sha1: "1.2.840.10045.4.1",
            sha256: "1.2.840.10045.4.3.2",
            sha384: "1.2.840.10045.4.3.3",
            sha512: "1.2.840.10045.4.3.4",
            shake256: "1.2.840.10045.4.3.4",
          }[digest],
        ),
        sign: (d, key) => sign(hash, d, { key, dsaEncoding: "der" }),
      };
    case "ed25519":
      return { algorithm: alg("1.3.101.112"), sign: (d, key) => sign(null, d, key) };
    case "ed448":
      return { algorithm: alg("1.3.101.113"), sign: (d, key) => sign(null, d, key) };
  }
}

export function nameOf(cn: string, o = "Docverify Test PKI"): pkijs.RelativeDistinguishedNames {
  return new pkijs.RelativeDistinguishedNames({
    typesAndValues: [
      new pkijs.AttributeTypeAndValue({ type: OIDS.c, value: new asn1js.PrintableString({ value: "GB" }) }),
      new pkijs.AttributeTypeAndValue({ type: OIDS.o, value: new asn1js.Utf8String({ value: o }) }),
      new pkijs.AttributeTypeAndValue({ type: OIDS.cn, value: new asn1js.Utf8String({ value: cn }) }),
    ],
  });
}

const copyName = (n: pkijs.RelativeDistinguishedNames) =>
  new pkijs.RelativeDistinguishedNames({ schema: asn1js.fromBER(n.toSchema().toBER(false)).result });

function bitString(bits: number[]): asn1js.BitString {
  let byte = 0;
  for (const b of bits) byte |= 0x80 >> b;
  let unused = 0;
  while (unused < 7 && !(byte & (1 << unused))) unused++;
  return new asn1js.BitString({ valueHex: new Uint8Array([byte]).buffer, unusedBits: byte ? unused : 0 });
}

export function keyIdOf(publicKey: KeyObject): Buffer {
  const spki = publicKey.export({ type: "spki", format: "der" });
  const info = new pkijs.PublicKeyInfo({ schema: asn1js.fromBER(new Uint8Array(spki)).result });
  return createHash("sha1").update(info.subjectPublicKey.valueBlock.valueHexView).digest();
}

export interface IssueOptions {
  subject: string | pkijs.RelativeDistinguishedNames;
  keyType?: KeyType;
  /** Issuer identity; omitted: self-signed. */
  issuer?: TestIdentity;
  /** Issuer name to write when it should differ from the issuer's subject (forgeries). */
  issuerName?: pkijs.RelativeDistinguishedNames;
  serial?: string;
  notBefore?: Date;
  notAfter?: Date;
  ca?: boolean;
  /** Subject key identifier to write instead of the key's own (forgeries copying a victim's). */
  subjectKeyId?: Buffer;
  extKeyUsage?: string[];
  /** Reuse a key pair (a forged certificate for an existing key). */
  keys?: { key: KeyObject; publicKey: KeyObject; keyType: KeyType };
  digest?: DigestName;
}

let serialCounter = 0x1000;

export function issue(o: IssueOptions): TestIdentity {
  const keyType = o.keys?.keyType ?? o.keyType ?? "rsa";
  const { key, publicKey } = o.keys ?? generateKey(keyType);
  const subject = typeof o.subject === "string" ? nameOf(o.subject) : copyName(o.subject);
  const cert = new pkijs.Certificate();
  cert.version = 2;
  cert.serialNumber = new asn1js.Integer({
    valueHex: Buffer.from(o.serial ?? (serialCounter++).toString(16).padStart(4, "0"), "hex"),
  });
  cert.subject = subject;
  cert.issuer = o.issuerName
    ? copyName(o.issuerName)
    : o.issuer
      ? copyName(o.issuer.cert.subject)
      : copyName(subject);
  cert.notBefore = new pkijs.Time({ type: 0, value: o.notBefore ?? new Date("2020-01-01T00:00:00Z") });
  cert.notAfter = new pkijs.Time({ type: 0, value: o.notAfter ?? new Date("2045-01-01T00:00:00Z") });
  cert.subjectPublicKeyInfo = new pkijs.PublicKeyInfo({
    schema: asn1js.fromBER(new Uint8Array(publicKey.export({ type: "spki", format: "der" }))).result,
  });
  const ski = o.subjectKeyId ?? keyIdOf(publicKey);
  const ext = (extnID: string, critical: boolean, value: asn1js.BaseBlock) =>
    new pkijs.Extension({ extnID, critical, extnValue: value.toBER(false) });
  const exts = [
    ext("2.5.29.19", true, new pkijs.BasicConstraints({ cA: o.ca === true }).toSchema()),
    ext("2.5.29.15", true, o.ca ? bitString([5, 6]) : bitString([0, 1])),
    ext("2.5.29.14", false, new asn1js.OctetString({ valueHex: ski })),
  ];
  if (o.issuer)
    exts.push(
      ext(
        "2.5.29.35",
        false,
        new pkijs.AuthorityKeyIdentifier({
          keyIdentifier: new asn1js.OctetString({ valueHex: keyIdOf(o.issuer.publicKey) }),
        }).toSchema(),
      ),
    );
  if (o.extKeyUsage)
    exts.push(ext("2.5.29.37", true, new pkijs.ExtKeyUsage({ keyPurposes: o.extKeyUsage }).toSchema()));
  cert.extensions = exts;
  const signingKey = o.issuer?.key ?? key;
  const s = signer(o.issuer?.keyType ?? keyType, o.digest ?? "sha256");
  cert.signature = s.algorithm;
  cert.signatureAlgorithm = s.algorithm;
  const tbs = new Uint8Array(cert.encodeTBS().toBER(false));
  cert.tbsView = tbs;
  cert.signatureValue = new asn1js.BitString({ valueHex: s.sign(tbs, signingKey) });
  const der = Buffer.from(cert.toSchema().toBER(false));
  const parsed = new pkijs.Certificate({ schema: asn1js.fromBER(new Uint8Array(der)).result });
  return {
    key,
    publicKey,
    keyType,
    cert: parsed,
    der,
    pem: `-----BEGIN CERTIFICATE-----\n${der.toString("base64").replace(/.{64}/g, "$&\n")}\n-----END CERTIFICATE-----\n`,
  };
}

export interface CmsOptions {
  /** Whose key signs. */
  signer: { key: KeyObject; keyType: KeyType };
  /** The certificate the SignerInfo's sid names. */
  sidOf: TestIdentity;
  sid?: "issuerSerial" | "ski";
  /** Certificates to carry, in this order. */
  certificates: TestIdentity[];
  digest?: DigestName;
  signedAttributes?: boolean;
  signingTime?: Date;
  /** Encapsulate the content instead of leaving it detached (what a PDF signature must not do). */
  encapsulate?: boolean;
  eContentType?: string;
  /** Adds an ESS signing-certificate-v2 attribute naming this certificate. */
  essCert?: TestIdentity;
  /** Builds an RFC 3161 token over the signature value, added as an unsigned attribute. */
  timestamp?: (signatureValue: Uint8Array) => Uint8Array;
  crls?: pkijs.CertificateRevocationList[];
}

const hashOf = (digest: DigestName, data: Uint8Array) =>
  digest === "shake256"
    ? createHash("shake256", { outputLength: 64 }).update(data).digest()
    : createHash(digest).update(data).digest();

function attribute(type: string, value: asn1js.BaseBlock): pkijs.Attribute {
  return new pkijs.Attribute({ type, values: [value] });
}

function essCertV2(c: TestIdentity): asn1js.Sequence {
  // SigningCertificateV2 { certs SEQUENCE OF ESSCertIDv2 { certHash (SHA-256, default algorithm) } }
  const certId = new asn1js.Sequence({
    value: [new asn1js.OctetString({ valueHex: createHash("sha256").update(c.der).digest() })],
  });
  return new asn1js.Sequence({ value: [new asn1js.Sequence({ value: [certId] })] });
}

/** CMS SignedData (DER ContentInfo) over `content`, detached unless `encapsulate`. */
export function buildCms(content: Uint8Array, o: CmsOptions): Uint8Array {
  const digest =
    o.digest ??
    (o.signer.keyType === "ed25519" ? "sha512" : o.signer.keyType === "ed448" ? "shake256" : "sha256");
  const eContentType = o.eContentType ?? OIDS.data;
  const s = signer(o.signer.keyType, digest);
  const sid =
    o.sid === "ski"
      ? new asn1js.Primitive({ idBlock: { tagClass: 3, tagNumber: 0 }, valueHex: keyIdOf(o.sidOf.publicKey) })
      : new pkijs.IssuerAndSerialNumber({
          issuer: copyName(o.sidOf.cert.issuer),
          serialNumber: o.sidOf.cert.serialNumber,
        });
  const si = new pkijs.SignerInfo({
    version: o.sid === "ski" ? 3 : 1,
    sid,
    digestAlgorithm: alg(DIGESTS[digest]),
    signatureAlgorithm: s.algorithm,
  });
  let toSign: Uint8Array = content;
  if (o.signedAttributes !== false) {
    const attrs = [
      attribute(OIDS.contentType, new asn1js.ObjectIdentifier({ value: eContentType })),
      attribute(OIDS.messageDigest, new asn1js.OctetString({ valueHex: hashOf(digest, content) })),
    ];
    if (o.signingTime)
      attrs.push(attribute(OIDS.signingTime, new asn1js.UTCTime({ valueDate: o.signingTime })));
    if (o.essCert) attrs.push(attribute(OIDS.signingCertificateV2, essCertV2(o.essCert)));
    si.signedAttrs = new pkijs.SignedAndUnsignedAttributes({ type: 0, attributes: attrs });
    const encoded = new Uint8Array(si.signedAttrs.toSchema().toBER(false));
    encoded[0] = 0x31;
    toSign = encoded;
  }
  const sigValue = s.sign(toSign, o.signer.key);
  si.signature = new asn1js.OctetString({ valueHex: sigValue });
  if (o.timestamp)
    si.unsignedAttrs = new pkijs.SignedAndUnsignedAttributes({
      type: 1,
      attributes: [
        attribute(OIDS.signatureTimeStampToken, asn1js.fromBER(o.timestamp(new Uint8Array(sigValue))).result),
      ],
    });
  const sd = new pkijs.SignedData({
    version: o.sid === "ski" ? 3 : 1,
    digestAlgorithms: [alg(DIGESTS[digest])],
    encapContentInfo: new pkijs.EncapsulatedContentInfo({
      eContentType,
      ...(o.encapsulate ? { eContent: new asn1js.OctetString({ valueHex: content }) } : {}),
    }),
    certificates: o.certificates.map((c) => c.cert),
    signerInfos: [si],
    ...(o.crls ? { crls: o.crls } : {}),
  });
  return new Uint8Array(
    new pkijs.ContentInfo({ contentType: OIDS.signedData, content: sd.toSchema(true) })
      .toSchema()
      .toBER(false),
  );
}

/** An RFC 3161 timestamp token by `tsa` over `data` at `genTime`. */
export function buildTimestampToken(
  data: Uint8Array,
  tsa: TestIdentity,
  genTime: Date,
  chain: TestIdentity[] = [],
): Uint8Array {
  const info = new pkijs.TSTInfo({
    version: 1,
    policy: "1.3.6.1.4.1.99999.1",
    messageImprint: new pkijs.MessageImprint({
      hashAlgorithm: alg(DIGESTS.sha256),
      hashedMessage: new asn1js.OctetString({ valueHex: createHash("sha256").update(data).digest() }),
    }),
    serialNumber: new asn1js.Integer({ value: serialCounter++ }),
    genTime,
  });
  return buildCms(new Uint8Array(info.toSchema().toBER(false)), {
    signer: tsa,
    sidOf: tsa,
    certificates: [tsa, ...chain],
    encapsulate: true,
    eContentType: OIDS.tstInfo,
    essCert: tsa,
  });
}

/** A CRL by `issuer` revoking `revoked` at `when`. */
export function buildCrl(
  issuer: TestIdentity,
  revoked: TestIdentity[],
  when: Date,
): pkijs.CertificateRevocationList {
  const crl = new pkijs.CertificateRevocationList();
  crl.version = 1;
  crl.issuer = copyName(issuer.cert.subject);
  crl.thisUpdate = new pkijs.Time({ type: 0, value: when });
  crl.nextUpdate = new pkijs.Time({ type: 0, value: new Date(when.getTime() + 30 * 86_400_000) });
  crl.revokedCertificates = revoked.map(
    (r) =>
      new pkijs.RevokedCertificate({
        userCertificate: r.cert.serialNumber,
        revocationDate: new pkijs.Time({ type: 0, value: when }),
      }),
  );
  const s = signer(issuer.keyType, "sha256");
  crl.signature = s.algorithm;
  crl.signatureAlgorithm = s.algorithm;
  crl.signatureValue = new asn1js.BitString({ valueHex: new Uint8Array(1) });
  const tbs = new Uint8Array(
    (crl.toSchema(true) as asn1js.Sequence).valueBlock.value[0]?.toBER(false) ?? new ArrayBuffer(0),
  );
  crl.tbsView = tbs;
  crl.signatureValue = new asn1js.BitString({ valueHex: s.sign(tbs, issuer.key) });
  return new pkijs.CertificateRevocationList({ schema: asn1js.fromBER(crl.toSchema().toBER(false)).result });
}

export const TIMESTAMPING_EKU = OIDS.timeStamping;
