import { decodeJwt, SignJWT } from "jose";
import { describe, expect, it } from "vitest";
import { ApiError } from "../errors.js";
import { manualClock, TEST_KEY } from "../testdata/app-kit.js";
import { createTokenService } from "./tokens.js";

const make = (clock = manualClock(), ttlSeconds = 60) => ({
  clock,
  tokens: createTokenService({ key: TEST_KEY, ttlSeconds, clock }),
});

async function expect401(p: Promise<unknown>, detail: string): Promise<void> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ApiError);
  expect((err as ApiError).status).toBe(401);
  expect((err as ApiError).detail).toBe(detail);
}

describe("token service", () => {
  it("issues an HS256 token with sub, scope, iat, exp, iss, aud and jti", async () => {
    const { tokens, clock } = make();
    const issued = await tokens.issue("alice", [
      "DocumentVerification:detections:get",
      "DocumentVerification:detections:create",
    ]);
    expect(issued.expiresIn).toBe(60);
    expect(issued.scope).toBe("DocumentVerification:detections:get DocumentVerification:detections:create");
    const claims = decodeJwt(issued.accessToken);
    const iat = Math.floor(clock.now().getTime() / 1000);
    expect(claims).toMatchObject({
      sub: "alice",
      scope: issued.scope,
      iat,
      exp: iat + 60,
      iss: "docverify",
      aud: "docverify",
    });
    expect(claims.jti).toMatch(/^[0-9a-f-]{36}$/);
    const other = await tokens.issue("alice", []);
    expect(decodeJwt(other.accessToken).jti).not.toBe(claims.jti);
  });

  it("verifies its own tokens into the principal", async () => {
    const { tokens, clock } = make();
    const { accessToken } = await tokens.issue("alice", ["a:b", "c:d"], "binding-1");
    expect(await tokens.verify(accessToken)).toEqual({
      clientId: "alice",
      scopes: ["a:b", "c:d"],
      issuedAtMs: clock.now().getTime(),
      binding: "binding-1",
    });
    // the cached answer is a copy
    (await tokens.verify(accessToken)).scopes.push("x");
    expect((await tokens.verify(accessToken)).scopes).toEqual(["a:b", "c:d"]);
  });

  it("says `Token has expired` once exp is reached, also for a cached token", async () => {
    const { tokens, clock } = make();
    const { accessToken } = await tokens.issue("alice", ["a"]);
    await tokens.verify(accessToken);
    expect(tokens.cachedTokens()).toBe(1);
    clock.advance(59_000);
    await expect(tokens.verify(accessToken)).resolves.toMatchObject({ clientId: "alice" });
    clock.advance(1_000);
    await expect401(tokens.verify(accessToken), "Token has expired");
    expect(tokens.cachedTokens()).toBe(0);
    // a fresh service (no cache) agrees
    await expect401(
      createTokenService({ key: TEST_KEY, ttlSeconds: 60, clock }).verify(accessToken),
      "Token has expired",
    );
  });

  it("rejects tampered, foreign, malformed and wrong-audience tokens as `Invalid bearer token`", async () => {
    const { tokens, clock } = make();
    const { accessToken } = await tokens.issue("alice", ["DocumentVerification:detections:get"]);
    const [h, p, s] = accessToken.split(".");
    const payload = JSON.parse(Buffer.from(p!, "base64url").toString());
    const forged = Buffer.from(JSON.stringify({ ...payload, scope: "DocumentVerification:*" })).toString(
      "base64url",
    );
    await expect401(tokens.verify(`${h}.${forged}.${s}`), "Invalid bearer token");
    const flipped = s!.slice(0, -2) + (s!.slice(-2) === "AA" ? "BB" : "AA");
    await expect401(tokens.verify(`${h}.${p}.${flipped}`), "Invalid bearer token");
    await expect401(tokens.verify("not-a-jwt"), "Invalid bearer token");
    expect(tokens.cachedTokens()).toBe(0);
    await expect401(tokens.verify(`${h}.${p}.`), "Invalid bearer token");

    const otherKey = createTokenService({ key: new Uint8Array(32).fill(7), ttlSeconds: 60, clock });
    await expect401(
      tokens.verify((await otherKey.issue("alice", ["a"])).accessToken),
      "Invalid bearer token",
    );

    const iat = Math.floor(clock.now().getTime() / 1000);
    const wrongAud = await new SignJWT({ scope: "a" })
      .setProtectedHeader({ alg: "HS256" })
      .setSubject("alice")
      .setIssuer("docverify")
      .setAudience("someone-else")
      .setIssuedAt(iat)
      .setExpirationTime(iat + 60)
      .setJti("j")
      .sign(TEST_KEY);
    await expect401(tokens.verify(wrongAud), "Invalid bearer token");
    const noScope = await new SignJWT({})
      .setProtectedHeader({ alg: "HS256" })
      .setSubject("alice")
      .setIssuer("docverify")
      .setAudience("docverify")
      .setIssuedAt(iat)
      .setExpirationTime(iat + 60)
      .setJti("j")
      .sign(TEST_KEY);
    await expect401(tokens.verify(noScope), "Invalid bearer token");
  });

  it("rejects the `none` algorithm", async () => {
    const { tokens, clock } = make();
    const iat = Math.floor(clock.now().getTime() / 1000);
    const enc = (o: object) => Buffer.from(JSON.stringify(o)).toString("base64url");
    const unsigned = `${enc({ alg: "none" })}.${enc({ sub: "alice", scope: "DocumentVerification:*", iat, exp: iat + 60, iss: "docverify", aud: "docverify", jti: "x" })}.`;
    await expect401(tokens.verify(unsigned), "Invalid bearer token");
  });

  it("keeps its cache bounded", async () => {
    const clock = manualClock();
    const tokens = createTokenService({ key: TEST_KEY, ttlSeconds: 60, clock, cacheSize: 2 });
    const t = await Promise.all([1, 2, 3].map((i) => tokens.issue(`c${i}`, ["a"])));
    await tokens.verify(t[0]!.accessToken);
    await tokens.verify(t[1]!.accessToken);
    expect(tokens.cachedTokens()).toBe(2);
    await tokens.verify(t[2]!.accessToken);
    expect(tokens.cachedTokens()).toBe(2);
    // an evicted token still verifies (by its signature)
    expect((await tokens.verify(t[0]!.accessToken)).scopes).toEqual(["a"]);
    expect(tokens.cachedTokens()).toBe(2);
  });

  it("refuses a short key and a bad lifetime", () => {
    expect(() => createTokenService({ key: new Uint8Array(16), ttlSeconds: 60 })).toThrow(/at least 32/);
    expect(() => createTokenService({ key: TEST_KEY, ttlSeconds: 0 })).toThrow(/lifetime/);
  });

  it("hmac is keyed: same input same tag, other key other tag", () => {
    const a = createTokenService({ key: TEST_KEY, ttlSeconds: 60 });
    const b = createTokenService({ key: new Uint8Array(32).fill(1), ttlSeconds: 60 });
    expect(a.hmac("x")).toMatch(/^[0-9a-f]{64}$/);
    expect(a.hmac("x")).toBe(a.hmac("x"));
    expect(a.hmac("x")).not.toBe(b.hmac("x"));
  });
});
