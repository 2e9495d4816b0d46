import { describe, expect, it } from "vitest";
import { buildXmpPacket } from "../fixtures/xmp.js";
import { parseXmp, parseXmpHistory } from "./xmp.js";

describe("parseXmp", () => {
  it("reads element-form properties, lists and language alternatives", () => {
    const xmp = parseXmp(
      buildXmpPacket({
        createDate: "2025-03-01T10:00:00+01:00",
        modifyDate: "2025-03-02T10:00:00+01:00",
        creatorTool: "Writer & Co <1>",
        producer: "iText 7",
        title: "Statement März",
        author: "Bank",
      }),
    );
    expect(xmp["xmp:CreateDate"]).toBe("2025-03-01T10:00:00+01:00");
    expect(xmp["xmp:ModifyDate"]).toBe("2025-03-02T10:00:00+01:00");
    expect(xmp["xmp:CreatorTool"]).toBe("Writer & Co <1>");
    expect(xmp["pdf:Producer"]).toBe("iText 7");
    expect(xmp["dc:title"]).toBe("Statement März");
    expect(xmp["dc:creator"]).toBe("Bank");
    expect(xmp["dc:format"]).toBe("application/pdf");
  });

  it("reads attribute-form properties and maps old prefixes to canonical ones", () => {
    const xml = `<x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">
      <rdf:Description rdf:about="" xmlns:xap="http://ns.adobe.com/xap/1.0/" xmlns:pdf="http://ns.adobe.com/pdf/1.3/"
        xap:CreateDate="2004-05-06T07:08:09Z" pdf:Producer="Acrobat Distiller 6.0"/>
      <rdf:Description rdf:about="" xmlns:xap="http://ns.adobe.com/xap/1.0/">
        <xap:ModifyDate>2004-05-07T07:08:09Z</xap:ModifyDate>
        <!-- <xap:MetadataDate>1999-01-01</xap:MetadataDate> -->
      </rdf:Description></rdf:RDF></x:xmpmeta>`;
    expect(parseXmp(xml)).toEqual({
      "xmp:CreateDate": "2004-05-06T07:08:09Z",
      "pdf:Producer": "Acrobat Distiller 6.0",
      "xmp:ModifyDate": "2004-05-07T07:08:09Z",
    });
  });

  it("leaves out structured values and survives garbage", () => {
    const xml = `<rdf:RDF xmlns:rdf="r"><rdf:Description xmlns:xmpMM="http://ns.adobe.com/xap/1.0/mm/">
      <xmpMM:History><rdf:Seq><rdf:li rdf:parseType="Resource"><stEvt:when>2020</stEvt:when></rdf:li></rdf:Seq></xmpMM:History>
      </rdf:Description></rdf:RDF>`;
    expect(parseXmp(xml)).toEqual({});
    expect(parseXmp("<<<not xml at all")).toEqual({});
  });
});

describe("parseXmpHistory", () => {
  it("reads attribute and element forms whatever the prefixes", () => {
    const xml = `<x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">
      <rdf:Description xmlns:mm="http://ns.adobe.com/xap/1.0/mm/" xmlns:ev="http://ns.adobe.com/xap/1.0/sType/ResourceEvent#">
      <mm:History><rdf:Seq>
        <rdf:li ev:action="created" ev:softwareAgent="Tool &amp; Co" ev:when="2025-01-01T10:00:00Z"/>
        <rdf:li rdf:parseType="Resource"><ev:action>saved</ev:action><ev:when>2025-02-01T10:00:00Z</ev:when><ev:softwareAgent>GIMP 2.10</ev:softwareAgent></rdf:li>
      </rdf:Seq></mm:History></rdf:Description></rdf:RDF></x:xmpmeta>`;
    expect(parseXmpHistory(xml)).toEqual([
      { action: "created", softwareAgent: "Tool & Co", when: "2025-01-01T10:00:00Z" },
      { action: "saved", softwareAgent: "GIMP 2.10", when: "2025-02-01T10:00:00Z" },
    ]);
    expect(parseXmpHistory("<x:xmpmeta/>")).toEqual([]);
  });
});
