import { execFileSync } from "node:child_process";
import sharp from "sharp";
import { describe, expect, it } from "vitest";
import {
  estimateQuality,
  ijgTable,
  JpegFormatError,
  readJpeg,
  STD_LUMA,
  tablesFingerprint,
} from "./jpeg-markers.js";

const noise = (w: number, h: number) => {
  const data = Buffer.alloc(w * h * 3);
  for (let i = 0; i < data.length; i++) data[i] = (i * 7919) % 251;
  return sharp(data, { raw: { width: w, height: h, channels: 3 } });
};

describe("readJpeg", () => {
  it.each([50, 75, 90, 100])(
    "reads libjpeg's tables at quality %i and names that quality exactly",
    async (q) => {
      const jpeg = await noise(64, 48).jpeg({ quality: q, chromaSubsampling: "4:2:0" }).toBuffer();
      const info = readJpeg(jpeg);
      expect(info.quality).toEqual({ quality: q, standard: true, distance: 0 });
      expect(info.tables.get(0)).toEqual(ijgTable(STD_LUMA, q));
      expect(info.frame).toMatchObject({ type: 0, width: 64, height: 48 });
      expect(info.subsampling).toBe("4:2:0");
      expect(info.markers[0]).toBe("SOI");
      expect(info.markers).toContain("SOS");
    },
  );

  it("reads the metadata segments, the sampling and appended bytes", async () => {
    const jpeg = await noise(32, 32)
      .withMetadata({ density: 300 })
      .jpeg({ quality: 85, chromaSubsampling: "4:4:4" })
      .toBuffer();
    const info = readJpeg(Buffer.concat([jpeg, Buffer.alloc(2000, 1)]));
    // sharp writes the density as EXIF resolution.
    expect(info.app.exif).toBe(true);
    expect(info.subsampling).toBe("4:4:4");
    expect(info.trailingBytes).toBe(2000);
  });

  it("tells a camera's own tables from libjpeg's", () => {
    let cjpeg = true;
    try {
      execFileSync("cjpeg", ["-version"], { stdio: "ignore" });
    } catch {
      cjpeg = false;
    }
    if (!cjpeg && process.env.CI)
      throw new Error("cjpeg (libjpeg-turbo-progs) is missing: npm run test:setup");
    if (!cjpeg) return;
    const own = Array.from({ length: 64 }, (_, i) => 2 + (i % 8) + Math.floor(i / 8));
    const luma = own.map((v) => Math.round(v * 1.3));
    expect(estimateQuality(luma).standard).toBe(false);
    const ppm = Buffer.concat([Buffer.from("P6\n16 16\n255\n"), Buffer.alloc(768, 128)]);
    const dir = execFileSync("mktemp", ["-d"], { encoding: "utf8" }).trim();
    execFileSync("sh", ["-c", `cat > ${dir}/q.txt`], { input: `${luma.join(" ")}\n${luma.join(" ")}\n` });
    const jpeg = execFileSync("cjpeg", ["-qtables", `${dir}/q.txt`, "-sample", "1x1"], { input: ppm });
    execFileSync("rm", ["-rf", dir]);
    const info = readJpeg(jpeg);
    expect(info.tables.get(0)).toEqual(luma);
    expect(info.quality?.standard).toBe(false);
    expect(tablesFingerprint(info)).not.toBe(tablesFingerprint(readJpeg(jpeg.subarray(0))) + "x");
  });

  it("refuses what is not a JPEG", () => {
    expect(() => readJpeg(new Uint8Array([0x89, 0x50, 0x4e, 0x47]))).toThrow(JpegFormatError);
  });
});
