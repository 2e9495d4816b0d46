import { describe, expect, it } from "vitest";
import { hostBelongsToIssuer } from "./issuer.js";
import { parseQrPayload } from "./qr-payload.js";
import {
  parseAmount,
  parseAmounts,
  parseDates,
  parseDateValue,
  parseDomains,
  parseIbans,
  registrableDomain,
} from "./text-values.js";

describe("text values", () => {
  it("reads amounts in US, GB and DE notation as cents", () => {
    expect(parseAmounts("Total $1,234.56 and -£12.00, (45.10)")).toEqual([123456, 1200, 4510]);
    expect(parseAmounts("Gesamt 1.234,56 € und 0,99 €")).toEqual([123456, 99]);
    expect(parseAmounts("Version 1.2.3 on 14.03.2025")).toEqual([]);
    expect(parseAmount("EUR12729.35")).toBe(1272935);
    expect(parseAmount("1.234,5")).toBe(123450);
  });

  it("reads dates in each region's order, long forms and ISO, and rejects impossible ones", () => {
    expect(parseDates("03/04/2025", "US")).toEqual(["2025-03-04"]);
    expect(parseDates("03/04/2025", "GB")).toEqual(["2025-04-03"]);
    expect(parseDates("14.03.2025 and 14. März 2025 and March 14, 2025 and 2025-03-14", "DE")).toEqual([
      "2025-03-14",
    ]);
    expect(parseDates("31/02/2025", "GB")).toEqual([]);
    expect(parseDateValue("20250314", "US")).toBe("2025-03-14");
  });

  it("reads IBANs, domains and registrable domains", () => {
    expect(parseIbans("IBAN: GB29 NWBK 6016 1331 9268 19")).toEqual(["GB29NWBK60161331926819"]);
    expect(parseDomains("see www.kestrel.co.uk or mail billing@albion-energy.com")).toEqual([
      "www.kestrel.co.uk",
      "albion-energy.com",
    ]);
    expect(registrableDomain("pay.kestrelsystems.co.uk")).toBe("kestrelsystems.co.uk");
    expect(registrableDomain("a.b.example.com")).toBe("example.com");
  });

  it("ties a host to the issuer by a distinctive word of its name, not by generic words", () => {
    const issuer = { names: ["Albion Energy Ltd"], domains: [] };
    expect(hostBelongsToIssuer("pay.albionenergy.co.uk", issuer)).toBe(true);
    expect(hostBelongsToIssuer("secure-billing-energy.net", issuer)).toBe(false);
    expect(hostBelongsToIssuer("portal.example.com", { names: ["X"], domains: ["example.com"] })).toBe(true);
  });

  it("parses EPC, URL and key-value QR payloads", () => {
    const epc = parseQrPayload(
      "BCD\n002\n1\nSCT\nBIC\nKestrel GmbH\nDE89 3704 0044 0532 0130 00\nEUR12.50",
      "DE",
    );
    expect(epc).toMatchObject({
      kind: "epc",
      iban: "DE89370400440532013000",
      amount: 1250,
      name: "Kestrel GmbH",
    });
    const url = parseQrPayload(
      "https://pay.x.com/p?amount=99.90&due=2025-03-01&iban=GB29NWBK60161331926819",
      "GB",
    );
    expect(url).toMatchObject({
      kind: "url",
      amount: 9990,
      dates: ["2025-03-01"],
      iban: "GB29NWBK60161331926819",
    });
    expect(parseQrPayload("Amount: 12,00; Date: 01.02.2025", "DE")).toMatchObject({
      kind: "text",
      amount: 1200,
      dates: ["2025-02-01"],
    });
  });
});
