import { DOC_TYPE_WORDS, type DocType } from "../core/verdict.js";

/**
 * Document-type classifier over extracted text: weighted phrase features per type, in English and German.
 * Deterministic and explainable: the result lists the phrases that decided it.
 */

export interface Classification {
  docType: DocType;
  /** 0-1: how sure the classifier is (strength of the evidence and its margin over the runner-up). */
  confidence: number;
  /** What the document appears to be in plain words, e.g. "electricity bill", "payslip", "passport". */
  plainWords: string;
  /** The phrases found in the text that support `docType`, strongest first. */
  evidence: string[];
}

/**
 * A phrase feature. A string matches as whole words, case-insensitive, with any run of spaces or hyphens
 * where it has a space; a trailing `*` lets the last word continue (German compounds: `kontoauszug*`).
 * A RegExp is used as given (for structured tokens such as MRZ lines).
 */
export interface Feature {
  match: string | RegExp;
  weight: number;
  /** Names a more specific kind in plain words (e.g. "electricity bill") when its features dominate. */
  subtype?: string;
  /** Evidence label for RegExp features (default: the matched text). */
  label?: string;
}

type KnownType = Exclude<DocType, "other">;

export const DOC_TYPE_FEATURES: Record<KnownType, Feature[]> = {
  bank_statement: [
    { match: "bank statement", weight: 5 },
    { match: "account statement", weight: 4 },
    { match: "statement of account", weight: 4 },
    { match: "statement period", weight: 4 },
    { match: "statement date", weight: 2 },
    { match: "opening balance", weight: 4 },
    { match: "closing balance", weight: 4 },
    { match: "balance brought forward", weight: 3 },
    { match: "balance carried forward", weight: 3 },
    { match: "available balance", weight: 2 },
    { match: "sort code", weight: 3 },
    { match: "iban", weight: 2 },
    { match: "bic", weight: 1 },
    { match: "swift", weight: 1 },
    { match: "account number", weight: 1 },
    { match: "standing order", weight: 2 },
    { match: "direct debit", weight: 1 },
    { match: "paid in", weight: 1 },
    { match: "paid out", weight: 1 },
    { match: "withdrawals", weight: 2 },
    { match: "deposits", weight: 1 },
    { match: "kontoauszug*", weight: 5 },
    { match: "kontostand", weight: 3 },
    { match: "alter kontostand", weight: 3 },
    { match: "neuer kontostand", weight: 3 },
    { match: "buchungstag", weight: 3 },
    { match: "wertstellung", weight: 3 },
    { match: "valuta", weight: 2 },
    { match: "saldo", weight: 2 },
    { match: "umsätze", weight: 1 },
    { match: "girokonto", weight: 3 },
  ],
  payslip: [
    { match: "payslip", weight: 5 },
    { match: "pay slip", weight: 5 },
    { match: "pay stub", weight: 5 },
    { match: "pay statement", weight: 4 },
    { match: "earnings statement", weight: 4 },
    { match: "gross pay", weight: 4 },
    { match: "net pay", weight: 4 },
    { match: "gross earnings", weight: 3 },
    { match: "national insurance", weight: 3 },
    { match: "ni number", weight: 2 },
    { match: "paye", weight: 3 },
    { match: "tax code", weight: 2 },
    { match: "pay period", weight: 3 },
    { match: "pay date", weight: 2 },
    { match: "year to date", weight: 2 },
    { match: "ytd", weight: 1 },
    { match: "employee id", weight: 2 },
    { match: "employee no", weight: 2 },
    { match: "employer", weight: 1 },
    { match: "deductions", weight: 2 },
    { match: "overtime", weight: 1 },
    { match: "basic salary", weight: 2 },
    { match: "pension contribution", weight: 1 },
    { match: "federal withholding", weight: 2 },
    { match: "gehaltsabrechnung", weight: 5 },
    { match: "lohnabrechnung", weight: 5 },
    { match: "entgeltabrechnung", weight: 5 },
    { match: "verdienstabrechnung", weight: 5 },
    { match: "bruttolohn", weight: 3 },
    { match: "bruttogehalt", weight: 3 },
    { match: "gesamtbrutto", weight: 3 },
    { match: "nettolohn", weight: 3 },
    { match: "nettogehalt", weight: 3 },
    { match: "auszahlungsbetrag", weight: 3 },
    { match: "lohnsteuer", weight: 3 },
    { match: "solidaritätszuschlag", weight: 1 },
    { match: "kirchensteuer", weight: 1 },
    { match: "steuerklasse", weight: 2 },
    { match: "personalnummer", weight: 2 },
    { match: "rentenversicherung", weight: 1 },
    { match: "krankenversicherung", weight: 1 },
  ],
  invoice: [
    { match: "invoice", weight: 3 },
    { match: "tax invoice", weight: 3 },
    { match: "invoice number", weight: 4 },
    { match: "invoice no", weight: 4 },
    { match: "invoice date", weight: 3 },
    { match: "bill to", weight: 3 },
    { match: "ship to", weight: 2 },
    { match: "payment terms", weight: 3 },
    { match: "net 30", weight: 2 },
    { match: "unit price", weight: 3 },
    { match: "qty", weight: 2 },
    { match: "subtotal", weight: 2 },
    { match: "amount due", weight: 2 },
    { match: "vat number", weight: 2 },
    { match: "vat reg", weight: 2 },
    { match: "purchase order", weight: 2 },
    { match: "po number", weight: 2 },
    { match: "rechnung", weight: 4 },
    { match: "rechnungsnummer", weight: 5 },
    { match: "rechnungsdatum", weight: 4 },
    { match: "leistungsdatum", weight: 3 },
    { match: "lieferdatum", weight: 2 },
    { match: "zahlungsziel", weight: 3 },
    { match: "ust-idnr", weight: 3 },
    { match: "umsatzsteuer", weight: 2 },
    { match: "mwst", weight: 1 },
    { match: "nettobetrag", weight: 2 },
    { match: "einzelpreis", weight: 3 },
  ],
  utility_bill: [
    { match: "electricity", weight: 3, subtype: "electricity bill" },
    { match: "kwh", weight: 3, subtype: "electricity bill" },
    { match: "mpan", weight: 4, subtype: "electricity bill" },
    { match: "electricity bill", weight: 5, subtype: "electricity bill" },
    { match: "gas bill", weight: 5, subtype: "gas bill" },
    { match: "natural gas", weight: 2, subtype: "gas bill" },
    { match: "mprn", weight: 4, subtype: "gas bill" },
    { match: "water bill", weight: 5, subtype: "water bill" },
    { match: "sewerage", weight: 3, subtype: "water bill" },
    { match: "wastewater", weight: 2, subtype: "water bill" },
    { match: "utility bill", weight: 5 },
    { match: "meter reading", weight: 4 },
    { match: "meter number", weight: 3 },
    { match: "previous reading", weight: 3 },
    { match: "present reading", weight: 3 },
    { match: "current reading", weight: 3 },
    { match: "standing charge", weight: 4 },
    { match: "unit rate", weight: 3 },
    { match: "tariff", weight: 2 },
    { match: "energy", weight: 1 },
    { match: "usage", weight: 1 },
    { match: "stromrechnung", weight: 5, subtype: "electricity bill" },
    { match: "strom*", weight: 2, subtype: "electricity bill" },
    { match: "gasrechnung", weight: 5, subtype: "gas bill" },
    { match: "erdgas", weight: 2, subtype: "gas bill" },
    { match: "wasserrechnung", weight: 5, subtype: "water bill" },
    { match: "abwasser", weight: 2, subtype: "water bill" },
    { match: "zählerstand", weight: 4 },
    { match: "zählernummer", weight: 3 },
    { match: "verbrauch", weight: 2 },
    { match: "abschlag*", weight: 3 },
    { match: "grundpreis", weight: 3 },
    { match: "arbeitspreis", weight: 3 },
    { match: "jahresabrechnung", weight: 2 },
    { match: "stadtwerke", weight: 3 },
  ],
  tax_return: [
    { match: "tax return", weight: 4 },
    { match: "form 1040", weight: 5 },
    { match: "individual income tax return", weight: 5 },
    { match: "adjusted gross income", weight: 4 },
    { match: "taxable income", weight: 3 },
    { match: "filing status", weight: 4 },
    { match: "standard deduction", weight: 3 },
    { match: "itemized deductions", weight: 3 },
    { match: "amount you owe", weight: 3 },
    { match: "sa100", weight: 5 },
    { match: "self assessment", weight: 4 },
    { match: "unique taxpayer reference", weight: 4 },
    { match: "utr", weight: 2 },
    { match: "einkommensteuererklärung", weight: 6 },
    { match: "steuererklärung", weight: 5 },
    { match: "anlage n", weight: 4 },
    { match: "anlage kap", weight: 3 },
    { match: "anlage vorsorgeaufwand", weight: 3 },
    { match: "finanzamt", weight: 2 },
    { match: "steuernummer", weight: 2 },
    { match: "identifikationsnummer", weight: 1 },
    { match: "zu versteuerndes einkommen", weight: 4 },
    { match: "werbungskosten", weight: 3 },
    { match: "veranlagungszeitraum", weight: 3 },
  ],
  id_document: [
    { match: "passport", weight: 4, subtype: "passport" },
    { match: "passport no", weight: 4, subtype: "passport" },
    { match: "passport number", weight: 4, subtype: "passport" },
    { match: "reisepass", weight: 5, subtype: "passport" },
    { match: /^P<[A-Z<]{3}[A-Z<]{10,}$/m, weight: 6, subtype: "passport", label: "passport MRZ line (P<)" },
    { match: "driving licence", weight: 5, subtype: "driving licence" },
    { match: "driver's license", weight: 5, subtype: "driving licence" },
    { match: "driver license", weight: 5, subtype: "driving licence" },
    { match: "führerschein", weight: 5, subtype: "driving licence" },
    { match: "identity card", weight: 5, subtype: "identity card" },
    { match: "personalausweis", weight: 5, subtype: "identity card" },
    {
      match: /^I[A-Z<][A-Z<]{3}[A-Z0-9<]{25}$/m,
      weight: 5,
      subtype: "identity card",
      label: "ID card MRZ line",
    },
    { match: /^[A-Z0-9<]{9}\d[A-Z<]{3}\d{7}[MFX<]\d{7}/m, weight: 5, label: "MRZ data line" },
    { match: "date of birth", weight: 2 },
    { match: "place of birth", weight: 3 },
    { match: "nationality", weight: 3 },
    { match: "date of issue", weight: 2 },
    { match: "date of expiry", weight: 3 },
    { match: "issuing authority", weight: 3 },
    { match: "given names", weight: 3 },
    { match: "geburtsdatum", weight: 2 },
    { match: "geburtsort", weight: 3 },
    { match: "staatsangehörigkeit", weight: 3 },
    { match: "gültig bis", weight: 2 },
    { match: "ausstellungsdatum", weight: 2 },
  ],
  contract: [
    { match: "agreement", weight: 3 },
    { match: "this agreement", weight: 4 },
    { match: "hereinafter", weight: 4 },
    { match: "the parties", weight: 3 },
    { match: "governing law", weight: 4 },
    { match: "whereas", weight: 3 },
    { match: "in witness whereof", weight: 4 },
    { match: "indemnif*", weight: 3 },
    { match: "confidentiality", weight: 2 },
    { match: "termination", weight: 2 },
    { match: "jurisdiction", weight: 2 },
    { match: "effective date", weight: 2 },
    { match: "employment agreement", weight: 4, subtype: "employment contract" },
    { match: "employment contract", weight: 4, subtype: "employment contract" },
    { match: "tenancy agreement", weight: 4, subtype: "tenancy agreement" },
    { match: "lease agreement", weight: 4, subtype: "tenancy agreement" },
    { match: "landlord", weight: 2, subtype: "tenancy agreement" },
    { match: "tenant", weight: 2, subtype: "tenancy agreement" },
    { match: "vertrag", weight: 4 },
    { match: "vertragsparteien", weight: 4 },
    { match: "vereinbarung", weight: 3 },
    { match: "nachfolgend", weight: 3 },
    { match: "im folgenden", weight: 2 },
    { match: "gerichtsstand", weight: 4 },
    { match: "kündigung", weight: 2 },
    { match: "arbeitsvertrag", weight: 5, subtype: "employment contract" },
    { match: "arbeitnehmer", weight: 1, subtype: "employment contract" },
    { match: "mietvertrag", weight: 5, subtype: "tenancy agreement" },
    { match: "vermieter", weight: 2, subtype: "tenancy agreement" },
    { match: "mieter", weight: 2, subtype: "tenancy agreement" },
    { match: "kaufvertrag", weight: 5 },
  ],
  receipt: [
    { match: "receipt", weight: 4 },
    { match: "cash receipt", weight: 4 },
    { match: "sales receipt", weight: 4 },
    { match: "thank you for your purchase", weight: 4 },
    { match: "thank you for shopping", weight: 4 },
    { match: "change due", weight: 4 },
    { match: "cash tendered", weight: 3 },
    { match: "tendered", weight: 2 },
    { match: "auth code", weight: 3 },
    { match: "contactless", weight: 2 },
    { match: "cashier", weight: 3 },
    { match: "terminal id", weight: 2 },
    { match: "till", weight: 1 },
    { match: "kassenbon", weight: 5 },
    { match: "quittung", weight: 5 },
    { match: "kassenbeleg", weight: 5 },
    { match: "rückgeld", weight: 4 },
    { match: "gegeben", weight: 1 },
    { match: "kasse", weight: 3 },
    { match: "vielen dank für ihren einkauf", weight: 4 },
    { match: "tse-signatur", weight: 3 },
    { match: "bon-nr", weight: 3 },
  ],
  loan_application: [
    { match: "loan application", weight: 6 },
    { match: "application for credit", weight: 5 },
    { match: "credit application", weight: 5 },
    { match: "mortgage application", weight: 5 },
    { match: "loan amount", weight: 4 },
    { match: "amount requested", weight: 4 },
    { match: "requested amount", weight: 4 },
    { match: "loan purpose", weight: 4 },
    { match: "purpose of loan", weight: 4 },
    { match: "purpose of the loan", weight: 4 },
    { match: "loan term", weight: 3 },
    { match: "repayment term", weight: 3 },
    { match: "applicant", weight: 3 },
    { match: "co-applicant", weight: 4 },
    { match: "annual income", weight: 3 },
    { match: "monthly income", weight: 2 },
    { match: "monthly expenses", weight: 2 },
    { match: "collateral", weight: 2 },
    { match: "i hereby apply", weight: 3 },
    { match: "kreditantrag", weight: 6 },
    { match: "darlehensantrag", weight: 6 },
    { match: "kreditbetrag", weight: 4 },
    { match: "darlehensbetrag", weight: 4 },
    { match: "antragsteller*", weight: 4 },
    { match: "nettoeinkommen", weight: 2 },
  ],
};

/** Tunables of the classifier. */
export const CLASSIFIER = {
  /** Only the first characters are classified (the head of a document names what it is). */
  maxChars: 100_000,
  /** Below this total weight the document is `other`. */
  minScore: 3,
  /** Weight at which the evidence strength reaches 1 - 1/e. */
  saturation: 6,
  /** Total weight a subtype's own features need before its plain words are used. */
  minSubtypeWeight: 3,
  /** Confidence of `other` when there was text but no type stood out. */
  otherConfidence: 0.1,
} as const;

interface CompiledFeature extends Feature {
  regex: RegExp;
}

const LETTER_OR_DIGIT = "[\\p{L}\\p{N}]";

function compile(feature: Feature): CompiledFeature {
  if (feature.match instanceof RegExp) return { ...feature, regex: feature.match };
  const stem = feature.match.endsWith("*");
  const phrase = stem ? feature.match.slice(0, -1) : feature.match;
  const body = phrase
    .split(/[\s-]+/)
    .map((word) => word.replace(/[.*+?^${}()|[\]\\]/g, "\\$&").replace(/'/g, "['’]"))
    .join("[\\s-]+");
  const tail = stem ? "" : `(?!${LETTER_OR_DIGIT})`;
  return { ...feature, regex: new RegExp(`(?<!${LETTER_OR_DIGIT})${body}${tail}`, "iu") };
}

const COMPILED: [KnownType, CompiledFeature[]][] = Object.entries(DOC_TYPE_FEATURES).map(
  ([type, features]) => [type as KnownType, features.map(compile)],
);

interface TypeScore {
  type: KnownType;
  score: number;
  matched: { feature: CompiledFeature; text: string }[];
}

function scoreType(text: string, type: KnownType, features: CompiledFeature[]): TypeScore {
  const matched: TypeScore["matched"] = [];
  for (const feature of features) {
    const m = feature.regex.exec(text);
    if (m) matched.push({ feature, text: feature.label ?? m[0].replace(/\s+/g, " ").trim() });
  }
  matched.sort((a, b) => b.feature.weight - a.feature.weight);
  return { type, score: matched.reduce((sum, m) => sum + m.feature.weight, 0), matched };
}

function plainWordsOf(best: TypeScore): string {
  const bySubtype = new Map<string, number>();
  for (const { feature } of best.matched) {
    if (feature.subtype)
      bySubtype.set(feature.subtype, (bySubtype.get(feature.subtype) ?? 0) + feature.weight);
  }
  let subtype: string | undefined;
  let weight = 0;
  for (const [name, w] of bySubtype) {
    if (w > weight) [subtype, weight] = [name, w];
  }
  return subtype && weight >= CLASSIFIER.minSubtypeWeight ? subtype : DOC_TYPE_WORDS[best.type];
}

/** Plain words for a document whose type could not be recognised. */
export const UNIDENTIFIED_WORDS = "unidentified document";

const PAGE_MARKER = /^--- page \d+ ---$/gm;

/** The text without its `--- page N ---` markers (what is left is the document's own words). */
export function documentWords(text: string): string {
  return text.replace(PAGE_MARKER, "").trim();
}

/** Classifies extracted text. Empty or unrecognised text → `other` with low confidence. */
export function classifyDocument(rawText: string): Classification {
  const text = documentWords(rawText.slice(0, CLASSIFIER.maxChars)).normalize("NFKC");
  if (text.trim() === "")
    return { docType: "other", confidence: 0, plainWords: UNIDENTIFIED_WORDS, evidence: [] };

  const ranked = COMPILED.map(([type, features]) => scoreType(text, type, features)).sort(
    (a, b) => b.score - a.score,
  );
  const best = ranked[0];
  const runnerUp = ranked[1]?.score ?? 0;
  if (!best || best.score < CLASSIFIER.minScore) {
    return {
      docType: "other",
      confidence: CLASSIFIER.otherConfidence,
      plainWords: UNIDENTIFIED_WORDS,
      evidence: [],
    };
  }
  const strength = 1 - Math.exp(-best.score / CLASSIFIER.saturation);
  const margin = (best.score - runnerUp) / best.score;
  const confidence = Math.round(strength * (0.5 + 0.5 * margin) * 100) / 100;
  return {
    docType: best.type,
    confidence,
    plainWords: plainWordsOf(best),
    evidence: [...new Set(best.matched.map((m) => m.text))],
  };
}
