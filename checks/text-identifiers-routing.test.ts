import { describe, expect, it } from "vitest";
import { grid, layoutDocument } from "../document/testdata/layout-kit.js";
import { TEST_NOW } from "./testdata/text-check-kit.js";
import { identifierFindings, labelledRoutingNumbers } from "./text-identifiers.js";

/**
 * A routing number is proof only when it is read as one with confidence (docs/decisions.md "A routing
 * number is read under its label"): a label that names it right before exactly nine digits, not part of a
 * longer number. 021000021 and 011000015 are valid ABA numbers; 123456789 fails the checksum.
 */

const details = (rows: (string | undefined)[][]) =>
  layoutDocument([grid([{ x: 50 }, { x: 200 }, { x: 330 }, { x: 450 }], rows, 760)], {
    docType: "bank_statement",
    region: "US",
  });
const routing = (rows: (string | undefined)[][]) =>
  identifierFindings(details(rows), TEST_NOW).filter((f) => f.code === "routing_number_invalid");

describe("text.identifiers: a routing number is read under its label", () => {
  it("an unlabelled nine-digit number on a line that names a routing number elsewhere is no routing number", () => {
    // The account number sits before the label whose value wrapped onto the next line: before, every
    // nine-digit number of the line was tried as the routing number (severity 8 here).
    expect(
      routing([
        ["Account number", "123456789", "Routing number", undefined],
        [undefined, undefined, "021000021", undefined],
      ]),
    ).toEqual([]);
  });

  it("a labelled value of another length is another figure read after the label, not a routing number", () => {
    // Before: "does not have the 9 digits" (6), which the score joined with any font anomaly on the line.
    expect(routing([["Routing questions?", "Call 800 555 0199", undefined, undefined]])).toEqual([]);
    expect(routing([["Account/Routing:", "12345678 / 021000021", undefined, undefined]])).toEqual([]);
    // Part of a longer number: an account number printed after the routing number in one run.
    expect(labelledRoutingNumbers("ABA 1234567890123")).toEqual([]);
    expect(labelledRoutingNumbers("Routing no. 021000021 7")).toEqual([]);
  });

  it("an edited routing number under its label: proof", () => {
    expect(routing([["Routing number (ABA):", "021000021", "Account", "00123456"]])).toEqual([]);
    const f = routing([["Routing number (ABA):", "021000031", "Account", "00123456"]]);
    expect(f).toHaveLength(1);
    expect(f[0]?.severity).toBe(8);
    expect(f[0]?.evidence).toMatchObject({ routing: "021000031", problem: "checksum" });
    // Other ways issuers label it, grouped digits among them.
    expect(labelledRoutingNumbers("ABA routing no. 011 000 015")).toEqual(["011000015"]);
    expect(labelledRoutingNumbers("RTN: 021000021  Acct 4471")).toEqual(["021000021"]);
    expect(labelledRoutingNumbers("ABA # 021000021")).toEqual(["021000021"]);
  });
});
