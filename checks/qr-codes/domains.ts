/**
 * Web domains printed in a document and the registrable part of a host name, to tie a QR code's link
 * to the issuer the document names.
 */

/** Web domains named in the text (URLs, www. names and e-mail addresses), lower case. */
export function parseDomains(text: string): string[] {
  const out = new Set<string>();
  const re = /(?:https?:\/\/|www\.|@)([a-z0-9-]+(?:\.[a-z0-9-]+)+)/gi;
  for (const m of text.matchAll(re)) {
    const host = m[0].toLowerCase().startsWith("www.") ? `www.${m[1]}` : m[1];
    if (host) out.add(host.toLowerCase());
  }
  return [...out];
}

/** Second-level public suffixes that take one more label ("bank.co.uk" is the bank's own name). */
const TWO_PART_SUFFIXES = new Set([
  "co.uk",
  "org.uk",
  "ac.uk",
  "gov.uk",
  "ltd.uk",
  "plc.uk",
  "me.uk",
  "com.au",
  "net.au",
  "org.au",
  "co.nz",
  "co.za",
  "com.br",
  "co.jp",
  "co.in",
  "com.cn",
  "com.mx",
  "com.tr",
  "com.sg",
  "co.at",
]);

/** The registrable domain of a host ("pay.bank.co.uk" → "bank.co.uk"); the host itself for IP literals. */
export function registrableDomain(host: string): string {
  const h = host.toLowerCase().replace(/\.$/, "");
  if (/^\d+\.\d+\.\d+\.\d+$/.test(h) || h.includes(":")) return h;
  const labels = h.split(".");
  const lastTwo = labels.slice(-2).join(".");
  return TWO_PART_SUFFIXES.has(lastTwo) ? labels.slice(-3).join(".") : lastTwo;
}
