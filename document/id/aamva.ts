/**
 * The AAMVA DL/ID Card Design Standard (2020, Annex D) payload of a US/Canadian licence's PDF417: the header
 * (`@`, LF, RS, CR, `ANSI ` or `AAMVA`, the issuer's IIN, the AAMVA version, the jurisdiction version, the
 * number of subfiles), the subfile designators, and each subfile's data elements (three-letter ids such as
 * DCS family name, DAC first name, DAD middle names, DBB date of birth, DBA expiry, DBD issue, DAQ customer id
 * number, DAJ jurisdiction) separated by LF and ended by CR.
 *
 * Written here rather than taken from npm: the parsers there read elements by regular expressions over the
 * whole text and turn dates into Date objects that roll 31 February over into March — what a forgery check
 * must see as it is. This one is strict and keeps every element's raw value.
 */

export interface AamvaDate {
  raw: string;
  date?: { y: number; m: number; d: number };
  invalid?: string;
}

export interface AamvaRecord {
  iin: string;
  version: number;
  jurisdictionVersion: number;
  /** Every element of every DL/ID subfile by its id (first occurrence), raw. */
  elements: Record<string, string>;
  surname?: string;
  givenNames?: string;
  documentNumber?: string;
  birth?: AamvaDate;
  expiry?: AamvaDate;
  issue?: AamvaDate;
  jurisdiction?: string;
  country?: string;
}

export class AamvaFormatError extends Error {
  override name = "AamvaFormatError";
}

const DAYS = (y: number, m: number) => new Date(Date.UTC(y, m, 0)).getUTCDate();

/** AAMVA dates: MMDDCCYY in the US (version ≥ 2), CCYYMMDD in Canada (DCG = CAN) and version 1. */
export function aamvaDate(raw: string, country: string | undefined, version: number): AamvaDate {
  if (!/^\d{8}$/.test(raw)) return { raw, invalid: `“${raw}” is not eight digits` };
  const ymdFirst = country === "CAN" || version < 2;
  const y = Number(ymdFirst ? raw.slice(0, 4) : raw.slice(4, 8));
  const m = Number(ymdFirst ? raw.slice(4, 6) : raw.slice(0, 2));
  const d = Number(ymdFirst ? raw.slice(6, 8) : raw.slice(2, 4));
  if (m < 1 || m > 12) return { raw, invalid: `month ${String(m).padStart(2, "0")} does not exist` };
  if (d < 1 || d > DAYS(y, m))
    return { raw, invalid: `day ${String(d).padStart(2, "0")} does not exist in month ${m} of ${y}` };
  return { raw, date: { y, m, d } };
}

/** Is this payload an AAMVA licence record (by its header)? */
export const isAamva = (payload: string) => /^@\s*\n?\x1e?\r?(ANSI |AAMVA)/.test(payload.slice(0, 12));

export function parseAamva(payload: string): AamvaRecord {
  const m = /^@\n?\x1e?\r?(ANSI |AAMVA)(\d{6})(\d{2})(\d{2})?(\d{2})/.exec(payload);
  if (!m) throw new AamvaFormatError("the payload does not start with an AAMVA header");
  const iin = m[2]!;
  const version = Number(m[3]);
  const jurisdictionVersion = Number(m[4] ?? 0);
  const entries = Number(m[5]);
  const headerEnd = m[0].length;
  const elements: Record<string, string> = {};
  let parsed = 0;
  for (let i = 0; i < entries; i++) {
    const d = payload.slice(headerEnd + i * 10, headerEnd + (i + 1) * 10);
    const dm = /^([A-Z]{2})(\d{4})(\d{4})$/.exec(d);
    if (!dm) break;
    const [, type, offset, length] = dm;
    if (type !== "DL" && type !== "ID") continue;
    let body = payload.slice(Number(offset), Number(offset) + Number(length));
    // Some issuers count offsets from a different origin: fall back to finding the subfile type.
    if (!body.startsWith(type)) {
      const at = payload.indexOf(`${type}D`, headerEnd + entries * 10 - 1);
      if (at < 0) continue;
      body = payload.slice(at, at + Number(length));
    }
    for (const line of body.slice(2).split(/\n|\r/)) {
      const em = /^([A-Z]{3})(.*)$/.exec(line);
      if (em && !(em[1]! in elements)) elements[em[1]!] = em[2]!.trim();
    }
    parsed++;
  }
  if (parsed === 0) {
    // A payload whose designators do not add up: read the elements after the first DL/ID subfile type.
    const at = payload.search(/(DL|ID)(DAQ|DCA|DCS|DBA)/);
    if (at < 0) throw new AamvaFormatError("the payload has no DL or ID subfile");
    for (const line of payload.slice(at + 2).split(/\n|\r/)) {
      const em = /^([A-Z]{3})(.*)$/.exec(line);
      if (em && !(em[1]! in elements)) elements[em[1]!] = em[2]!.trim();
    }
  }
  const country = elements.DCG;
  const date = (id: string) => (elements[id] ? aamvaDate(elements[id]!, country, version) : undefined);
  const given = [elements.DAC ?? elements.DCT, elements.DAD]
    .filter((s): s is string => !!s && s.toUpperCase() !== "NONE" && s.toUpperCase() !== "UNAVL")
    .join(" ")
    .replace(/,/g, " ")
    .replace(/\s+/g, " ")
    .trim();
  return {
    iin,
    version,
    jurisdictionVersion,
    elements,
    surname: elements.DCS,
    givenNames: given || undefined,
    documentNumber: elements.DAQ,
    birth: date("DBB"),
    expiry: date("DBA"),
    issue: date("DBD"),
    jurisdiction: elements.DAJ,
    country,
  };
}
