import { describe, expect, it } from "vitest";
import { hostBelongsToIssuer } from "./issuer.js";
import { parseQrPayload } from "./qr-payload.js";
import { parseDomains, registrableDomain } from "./domains.js";

describe("QR payloads and the issuer", () => {
  it("reads domains and registrable domains", () => {
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
