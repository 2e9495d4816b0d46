import { textPages } from "../../document/document-text.js";
import type { DocumentModel } from "../../document/model.js";
import { parseDomains, registrableDomain } from "./domains.js";

/**
 * Who issued the document, as far as its text and metadata say: the organisation named at the top of
 * the first page, the Info Author, names carrying a legal form (Ltd, GmbH, LLC, ...), and the web domains
 * the text prints. Used to judge whether a URL belongs to the issuer.
 */
export interface Issuer {
  names: string[];
  /** Registrable domains printed in the text. */
  domains: string[];
}

const LEGAL_FORM =
  /\b(ltd|limited|plc|llc|inc|corp|gmbh|ag|kg|se|bank|sparkasse|cooperative|council|stadtwerke)\b\.?/i;

/** Words too common in company names to tie a domain to one issuer. */
const GENERIC = new Set([
  "bank",
  "banking",
  "group",
  "limited",
  "company",
  "solutions",
  "supplies",
  "systems",
  "services",
  "energy",
  "power",
  "light",
  "electric",
  "cooperative",
  "health",
  "council",
  "logistics",
  "partners",
  "foods",
  "dental",
  "the",
  "and",
  "und",
  "gmbh",
  "plc",
  "llc",
  "inc",
  "corp",
  "ltd",
  "national",
  "international",
  "global",
  "financial",
  "finance",
  "savings",
  "trust",
  "credit",
  "union",
  "water",
  "utilities",
  "stadtwerke",
  "energieversorgung",
  "invoice",
  "statement",
  "payslip",
  "account",
  "rechnung",
  "kontoauszug",
  "page",
  "seite",
  "billing",
  "payment",
  "payments",
  "secure",
  "portal",
  "online",
  "customer",
  "service",
  "electricity",
  "street",
  "road",
  "house",
]);

export function findIssuer(doc: DocumentModel): Issuer {
  const first = textPages(doc)[0]?.text ?? "";
  const lines = first
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l.length >= 3);
  const names = new Set<string>();
  const top = lines[0];
  if (top && /[A-Za-z]{3}/.test(top) && top.length <= 80) names.add(top);
  for (const l of lines.slice(0, 20)) if (LEGAL_FORM.test(l) && l.length <= 80) names.add(l);
  const author = doc.pdf?.info.Author?.trim();
  if (author) names.add(author);
  const all = textPages(doc)
    .map((p) => p.text)
    .join("\n");
  const domains = [...new Set(parseDomains(all).map(registrableDomain))];
  return { names: [...names], domains };
}

/** Distinctive lower-case words of the issuer's names. */
export function issuerTokens(issuer: Issuer): string[] {
  const tokens = new Set<string>();
  for (const name of issuer.names) {
    for (const w of name.toLowerCase().split(/[^a-z0-9äöüß]+/)) {
      if (w.length >= 5 && !GENERIC.has(w) && !/^\d+$/.test(w)) tokens.add(w);
    }
  }
  return [...tokens];
}

const fold = (s: string) =>
  s
    .toLowerCase()
    .replace(/ä/g, "ae")
    .replace(/ö/g, "oe")
    .replace(/ü/g, "ue")
    .replace(/ß/g, "ss")
    .replace(/[^a-z0-9]/g, "");

/**
 * Whether a host belongs to the issuer: its registrable domain is one the document prints, or its
 * name part carries a distinctive word of the issuer's name (northwindbank.co.uk for "Northwind Bank").
 */
export function hostBelongsToIssuer(host: string, issuer: Issuer): boolean {
  const domain = registrableDomain(host);
  if (issuer.domains.includes(domain)) return true;
  const label = fold(domain.split(".")[0] ?? "");
  if (label.length < 3) return false;
  for (const token of issuerTokens(issuer)) {
    if (label.includes(fold(token))) return true;
  }
  for (const name of issuer.names) {
    const compact = fold(name);
    if (label.length >= 5 && compact.includes(label)) return true;
  }
  return false;
}
