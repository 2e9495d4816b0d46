import { describe, expect, it } from "vitest";
import { DOC_TYPES } from "../core/verdict.js";
import { buildDocument } from "../fixtures/real-producer/content.js";
import { allText, RP_DOC_TYPES } from "../fixtures/real-producer/model.js";
import { classifyDocument, documentWords } from "./classify.js";
import { SCORING } from "./score.js";
import { documentText, type KnownType, LANGS } from "./testdata/multilingual-text.js";

const BANK_STATEMENT_EN = `--- page 1 ---
Northbridge Bank plc
Statement of Account
Account name: Mr J Smith   Sort code: 20-45-77   Account number: 41234567
IBAN: GB29 NWBK 6016 1331 9268 19
Statement period: 01 March 2025 to 31 March 2025
Opening balance                         £2,314.08
Date       Description                 Paid out   Paid in   Balance
03 Mar     TESCO STORES 2231              54.20              2,259.88
05 Mar     SALARY ACME LTD                         2,850.00  5,109.88
12 Mar     STANDING ORDER RENT          1,150.00             3,959.88
Closing balance                         £3,959.88`;

const BANK_STATEMENT_DE = `--- page 1 ---
Sparkasse Musterstadt
Kontoauszug Nr. 3/2025   Girokonto
IBAN DE89 3704 0044 0532 0130 00   BIC COBADEFFXXX
Buchungstag Wertstellung Verwendungszweck Betrag
02.03. 02.03. Lastschrift Stadtwerke -84,00
05.03. 05.03. Gehalt März +3.120,55
Alter Kontostand 1.204,33 EUR
Neuer Kontostand 4.240,88 EUR`;

const PAYSLIP_EN = `ACME Manufacturing Ltd — Payslip
Employee: Jane Doe   Employee No: 00417   NI Number: QQ123456C   Tax code: 1257L
Pay period: March 2025   Pay date: 28/03/2025
Basic salary 3,000.00   Overtime 120.00
Gross pay 3,120.00
Deductions: PAYE income tax 412.40   National Insurance 187.20   Pension contribution 93.60
Net pay 2,426.80   Year to date gross 9,360.00`;

const PAYSLIP_DE = `Verdienstabrechnung März 2025
Personalnummer 10442   Steuerklasse 1   Kirchensteuer ev
Gesamtbrutto 4.200,00
Lohnsteuer 702,16   Solidaritätszuschlag 0,00   Kirchensteuer 56,17
Krankenversicherung 340,20   Rentenversicherung 390,60
Nettogehalt 2.611,35   Auszahlungsbetrag 2.611,35`;

const INVOICE_EN = `INVOICE
Brightline Studio Ltd, 12 Kings Road, London   VAT Reg No: GB 123 4567 89
Invoice number: INV-2025-0142   Invoice date: 14 April 2025
Bill to: Harbor Foods Ltd   Purchase order: PO-7781
Description              Qty   Unit price   Amount
Website redesign          1     4,500.00    4,500.00
Subtotal 4,500.00   VAT 20% 900.00   Amount due £5,400.00
Payment terms: Net 30`;

const INVOICE_DE = `Rechnung
Müller Haustechnik GmbH · USt-IdNr. DE123456789
Rechnungsnummer: 2025-0318   Rechnungsdatum: 18.03.2025   Leistungsdatum: 14.03.2025
Pos. Bezeichnung Menge Einzelpreis Gesamt
1 Wartung Heizung 1 189,00 189,00
Nettobetrag 189,00 € zzgl. 19 % Umsatzsteuer 35,91 €
Zahlungsziel: 14 Tage ohne Abzug`;

const ELECTRICITY_BILL_EN = `Brightspark Energy — Your electricity bill
Account number 8812 0034   MPAN 13 1234 5678 9012
Meter number E12A34567
Previous reading 41 233 (estimated)   Present reading 41 602 (actual)
Usage 369 kWh at unit rate 24.50p per kWh = £90.41
Standing charge 31 days at 53.35p = £16.54
Tariff: Standard Variable`;

const GAS_BILL_DE = `Stadtwerke Musterstadt GmbH
Gasrechnung / Jahresabrechnung 2024
Zählernummer 7GMT0012345   Zählerstand alt 10.233   Zählerstand neu 11.902
Verbrauch 1.669 m³ = 18.217 kWh Erdgas
Grundpreis 142,80 €   Arbeitspreis 11,20 ct/kWh
Neuer monatlicher Abschlag 165,00 €`;

const TAX_RETURN_US = `Form 1040 U.S. Individual Income Tax Return 2024
Filing status: Single   Your first name and middle initial: John A
1a Total amount from Form(s) W-2, box 1   68,400
11 Adjusted gross income 68,400
12 Standard deduction 14,600
15 Taxable income 53,800
37 Amount you owe 0`;

const TAX_RETURN_UK = `HM Revenue & Customs   Tax year 6 April 2023 to 5 April 2024
SA100 Tax Return 2024
Unique Taxpayer Reference (UTR) 12345 67890
Self Assessment: please complete the supplementary pages that apply to you`;

const TAX_RETURN_DE = `Einkommensteuererklärung 2024
An das Finanzamt Köln-Mitte   Steuernummer 214/5678/9012
Identifikationsnummer 12 345 678 901
Anlage N: Einkünfte aus nichtselbständiger Arbeit; Werbungskosten 1.230 €
Anlage Vorsorgeaufwand`;

const PASSPORT = `PASSPORT
Type P   Code GBR   Passport No. 925076473
Surname / Nom: SPECIMEN   Given names / Prénoms: ANGELA ZOE
Nationality: BRITISH CITIZEN   Date of birth: 11 SEP 1988   Sex: F   Place of birth: CROYDON
Date of issue: 16 JUL 2020   Date of expiry: 16 JUL 2030   Authority: HMPO
P<GBRSPECIMEN<<ANGELA<ZOE<<<<<<<<<<<<<<<<<<<
9250764733GBR8809117F3007162<<<<<<<<<<<<<<02`;

const ID_CARD_DE = `BUNDESREPUBLIK DEUTSCHLAND   PERSONALAUSWEIS
Name MUSTERMANN   Vornamen ERIKA
Geburtsdatum 12.08.1983   Geburtsort BERLIN   Staatsangehörigkeit DEUTSCH
Gültig bis 01.08.2031`;

const CONTRACT_EN = `SERVICES AGREEMENT
This Agreement is made on 1 May 2025 between Alpha Ltd (hereinafter "the Client") and Beta LLC
(hereinafter "the Provider"), together the Parties.
WHEREAS the Client wishes to engage the Provider ...
7. Termination. Either party may terminate this Agreement with 30 days' written notice.
9. Confidentiality ... 11. Governing law: this Agreement is governed by the laws of England and Wales.
IN WITNESS WHEREOF the parties have signed this Agreement.`;

const TENANCY_DE = `Mietvertrag für Wohnraum
zwischen Herrn Max Vermieter (nachfolgend „Vermieter“) und Frau Anna Beispiel (nachfolgend „Mieter“)
§ 3 Laufzeit und Kündigung: Die Kündigungsfrist beträgt drei Monate.
§ 12 Gerichtsstand ist Hamburg.`;

const RECEIPT_EN = `GREENLEAF GROCERS   Store 0042   Till 3   Cashier: Maria
Milk 2L 1.45   Bread 1.20   Apples 2.30
TOTAL 4.95   Cash tendered 10.00   Change due 5.05
Thank you for shopping with us — keep this receipt`;

const RECEIPT_DE = `Bäckerei Korn · Kassenbon
Bon-Nr. 4411   Kasse 2
2x Brötchen 0,90   1x Kaffee 2,40
Summe EUR 3,30   Gegeben 5,00   Rückgeld 1,70
TSE-Signatur: MEUCIQD...
Vielen Dank für Ihren Einkauf!`;

const LOAN_APPLICATION_EN = `Personal Loan Application
Applicant: Thomas Green   Co-applicant: none
Loan amount requested: £15,000   Loan term: 48 months   Purpose of loan: home improvements
Employer name: City Logistics   Annual income: £42,000   Monthly expenses: £1,650
I hereby apply for the loan described above and declare that the information given is true.`;

const LOAN_APPLICATION_DE = `Kreditantrag Ratenkredit
Antragsteller: Petra Schmidt   Kreditbetrag 20.000 €   Laufzeit 60 Monate
Monatliches Nettoeinkommen 2.900 €`;

describe("classifyDocument", () => {
  it.each([
    ["bank statement (en)", BANK_STATEMENT_EN, "bank_statement", "bank statement"],
    ["bank statement (de)", BANK_STATEMENT_DE, "bank_statement", "bank statement"],
    ["payslip (en)", PAYSLIP_EN, "payslip", "payslip"],
    ["payslip (de)", PAYSLIP_DE, "payslip", "payslip"],
    ["invoice (en)", INVOICE_EN, "invoice", "invoice"],
    ["invoice (de)", INVOICE_DE, "invoice", "invoice"],
    ["electricity bill (en)", ELECTRICITY_BILL_EN, "utility_bill", "electricity bill"],
    ["gas bill (de)", GAS_BILL_DE, "utility_bill", "gas bill"],
    ["tax return (us)", TAX_RETURN_US, "tax_return", "tax return"],
    ["tax return (uk)", TAX_RETURN_UK, "tax_return", "tax return"],
    ["tax return (de)", TAX_RETURN_DE, "tax_return", "tax return"],
    ["passport", PASSPORT, "id_document", "passport"],
    ["identity card (de)", ID_CARD_DE, "id_document", "identity card"],
    ["contract (en)", CONTRACT_EN, "contract", "contract"],
    ["tenancy agreement (de)", TENANCY_DE, "contract", "tenancy agreement"],
    ["receipt (en)", RECEIPT_EN, "receipt", "receipt"],
    ["receipt (de)", RECEIPT_DE, "receipt", "receipt"],
    ["loan application (en)", LOAN_APPLICATION_EN, "loan_application", "loan application"],
    ["loan application (de)", LOAN_APPLICATION_DE, "loan_application", "loan application"],
  ])("recognises a %s", (_name, text, docType, plainWords) => {
    const result = classifyDocument(text);
    expect(result.docType).toBe(docType);
    expect(result.plainWords).toBe(plainWords);
    expect(result.confidence).toBeGreaterThanOrEqual(0.5);
    expect(result.confidence).toBeLessThanOrEqual(1);
    expect(result.evidence.length).toBeGreaterThan(0);
  });

  it("cites the phrases it matched, as they appear in the text", () => {
    const result = classifyDocument(BANK_STATEMENT_EN);
    expect(result.evidence).toEqual(
      expect.arrayContaining(["Opening balance", "Closing balance", "Sort code"]),
    );
  });

  it("recognises the passport MRZ line on its own", () => {
    const result = classifyDocument(
      "P<UTOERIKSSON<<ANNA<MARIA<<<<<<<<<<<<<<<<<<<\nL898902C36UTO7408122F1204159ZE184226B<<<<<10",
    );
    expect(result.docType).toBe("id_document");
    expect(result.plainWords).toBe("passport");
    expect(result.evidence).toContain("passport MRZ line (P<)");
  });

  it("matches German words written with decomposed umlauts (NFKC)", () => {
    const result = classifyDocument("Einkommensteuererkla\u0308rung 2024");
    expect(result.docType).toBe("tax_return");
    expect(result.evidence).toEqual(["Einkommensteuererklärung"]);
  });

  it("does not match phrases inside longer words", () => {
    // "invoice" inside "invoiced", "receipt" inside "receipts" would be different words
    const result = classifyDocument("The items were invoiced separately; receipts are kept by accounting.");
    expect(result.docType).toBe("other");
  });

  it("calls empty text, or only page markers, other with zero confidence", () => {
    for (const text of ["", "   \n", "--- page 1 ---\n--- page 2 ---\n"]) {
      expect(classifyDocument(text)).toEqual({
        docType: "other",
        confidence: 0,
        plainWords: "unidentified document",
        evidence: [],
      });
    }
  });

  it("calls unrelated prose other with low confidence", () => {
    const result = classifyDocument(
      "The quick brown fox jumps over the lazy dog. Weather tomorrow: sunny spells with a light breeze.",
    );
    expect(result.docType).toBe("other");
    expect(result.confidence).toBeLessThan(0.5);
  });

  it("is less confident when two types compete than when one dominates", () => {
    const pure = classifyDocument(ELECTRICITY_BILL_EN);
    const mixed = classifyDocument(`${ELECTRICITY_BILL_EN}\n${INVOICE_EN}`);
    expect(mixed.confidence).toBeLessThan(pure.confidence);
  });

  it("is not confident about a single weak phrase", () => {
    const result = classifyDocument("Please find the receipt attached.");
    expect(result.docType).toBe("receipt");
    expect(result.confidence).toBeLessThan(0.5);
  });

  it("strips page markers but keeps the words", () => {
    expect(documentWords("--- page 1 ---\nHello\n--- page 2 ---\nWorld")).toBe("Hello\n\nWorld");
  });
});

describe("classifyDocument in six languages", () => {
  const TYPES = DOC_TYPES.filter((t): t is KnownType => t !== "other");
  const cases = TYPES.flatMap((type) => LANGS.map((lang) => [type, lang] as const));

  it.each(cases)("recognises a %s in %s (seeded text, three seeds)", (type, lang) => {
    for (const seed of [11, 2025, 90_001]) {
      const result = classifyDocument(documentText(seed, type, lang));
      expect({ seed, docType: result.docType }).toEqual({ seed, docType: type });
      expect(result.confidence).toBeGreaterThanOrEqual(SCORING.mismatchMinConfidence);
    }
  });

  it.each(["US", "GB", "DE", "FR"] as const)(
    "recognises the real-producer fixtures' statements, payslips, invoices and bills of %s",
    (region) => {
      for (const type of RP_DOC_TYPES) {
        const result = classifyDocument(allText(buildDocument(4242, type, region)));
        expect(result.docType).toBe(type);
        expect(result.confidence).toBeGreaterThanOrEqual(SCORING.mismatchMinConfidence);
      }
    },
  );

  it("reads nº as no (NFKC) in features as in the text", () => {
    expect(classifyDocument("Nº de factura 2025-114 · Base imponible 100,00 · IVA 21 %").docType).toBe(
      "invoice",
    );
  });
});

describe("identity documents as OCR reads them (issue 22)", () => {
  it("names a passport data page, an ID card and a US licence in plain words", () => {
    const passport = classifyDocument(
      "REINO DE ESPANA\nPASSPORT / PASSEPORT\nSurname / Nom\nO'NEILL\nP<ESPONEILL<<KAMARA<LLLLLLLLLLLLLLLLLLLLLLLLL\nH6616026K0CAN6204095<2812287MZ29862091<<<<<96",
    );
    expect([passport.docType, passport.plainWords]).toEqual(["id_document", "passport"]);
    const card = classifyDocument(
      "REINO DE ESPANA\nIDENTITY CARD / CARTE D'IDENTITE\nO'NEILL\nAMARA\nI<ESPL26P160265KG499862A<<<<<<\n6204095<2812287CAN<<<<<<<<<<<4",
    );
    expect([card.docType, card.plainWords]).toEqual(["id_document", "identity card"]);
    const licence = classifyDocument(
      "MINNESOTA DRIVER LICENSE\n4d DLN Z94266160\n1 O'NEILL\n3 DOB 04/09/1962\n4b EXP 04/09/2028",
    );
    expect([licence.docType, licence.plainWords]).toEqual(["id_document", "driving licence"]);
  });
});
