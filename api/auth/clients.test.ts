import { mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import {
  ClientsFileError,
  createClientRegistry,
  hashSecret,
  hashSecretSync,
  loadClientRegistry,
  parseSecretHash,
} from "./clients.js";

const cost = { ln: 4, r: 8, p: 1 };

describe("hashSecret", () => {
  it("produces a scrypt PHC string with the cost, a salt and a hash", async () => {
    const phc = await hashSecret("s3cret", cost);
    expect(phc).toMatch(/^\$scrypt\$ln=4,r=8,p=1\$[A-Za-z0-9+/]+\$[A-Za-z0-9+/]+$/);
    const parsed = parseSecretHash(phc)!;
    expect(parsed.cost).toEqual(cost);
    expect(parsed.salt).toHaveLength(16);
    expect(parsed.hash).toHaveLength(32);
  });

  it("salts: the same secret hashes differently each time", async () => {
    expect(await hashSecret("same", cost)).not.toBe(await hashSecret("same", cost));
  });

  it("uses the default cost (ln=15) when none is given", () => {
    expect(hashSecretSync("x")).toMatch(/^\$scrypt\$ln=15,r=8,p=1\$/);
  });

  it("refuses malformed PHC strings and out-of-range costs", () => {
    expect(parseSecretHash("plain")).toBeUndefined();
    expect(parseSecretHash("$argon2id$v=19$m=1,t=1,p=1$abc$def")).toBeUndefined();
    expect(parseSecretHash("$scrypt$ln=40,r=8,p=1$c2FsdHNhbHRzYWx0$aGFzaGhhc2hoYXNoaGFzaA")).toBeUndefined();
    expect(parseSecretHash("$scrypt$ln=4,r=8,p=1$c2FsdA$aGFzaGhhc2hoYXNoaGFzaA")).toBeUndefined(); // salt < 8 bytes
  });
});

describe("client registry", () => {
  it("verifies plain secrets (hashed at load) and PHC hashes, and forgets plain secrets", async () => {
    const reg = createClientRegistry(
      {
        clients: [
          {
            client_id: "a",
            client_secret: "secret-a",
            scopes: ["DocumentVerification:*"],
            sample_allowance: 3,
          },
          { client_id: "b", client_secret_hash: await hashSecret("secret-b", cost), scopes: [] },
        ],
      },
      { cost },
    );
    const a = await reg.verify("a", "secret-a");
    expect(a?.client_id).toBe("a");
    expect(a?.sample_allowance).toBe(3);
    expect(a).not.toHaveProperty("client_secret");
    expect(a?.client_secret_hash).toMatch(/^\$scrypt\$/);
    expect((await reg.verify("b", "secret-b"))?.client_id).toBe("b");
    expect(reg.get("b")?.sample_allowance).toBe(0);
    expect(reg.get("b")?.buckets).toEqual([]);
    expect(reg.ids().sort()).toEqual(["a", "b"]);
  });

  it("rejects a wrong secret, another client's secret and an unknown client", async () => {
    const reg = createClientRegistry(
      {
        clients: [
          { client_id: "a", client_secret: "secret-a", scopes: [] },
          { client_id: "b", client_secret: "secret-b", scopes: [] },
        ],
      },
      { cost },
    );
    expect(await reg.verify("a", "secret-b")).toBeUndefined();
    expect(await reg.verify("a", "")).toBeUndefined();
    expect(await reg.verify("a", "secret-a ")).toBeUndefined();
    expect(await reg.verify("nobody", "secret-a")).toBeUndefined();
    expect(reg.get("nobody")).toBeUndefined();
  });

  it("returns copies: changing an answer does not change the registry", async () => {
    const reg = createClientRegistry(
      { clients: [{ client_id: "a", client_secret: "s", scopes: ["x"] }] },
      { cost },
    );
    reg.get("a")!.scopes.push("DocumentVerification:*");
    expect(reg.get("a")!.scopes).toEqual(["x"]);
  });

  it("explains what is wrong with an invalid clients file", () => {
    expect(() => createClientRegistry({ clients: [{ client_id: "a", scopes: [] }] })).toThrow(
      /exactly one of client_secret or client_secret_hash/,
    );
    expect(() =>
      createClientRegistry({
        clients: [
          { client_id: "a", client_secret: "x", scopes: [] },
          { client_id: "a", client_secret: "y", scopes: [] },
        ],
      }),
    ).toThrow(/unique/);
    expect(() =>
      createClientRegistry({ clients: [{ client_id: "a", client_secret_hash: "md5:abc", scopes: [] }] }),
    ).toThrow(ClientsFileError);
  });

  it("loads a clients file from disk and names the file when it cannot", async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), "clients-"));
    try {
      const file = path.join(dir, "clients.json");
      await writeFile(
        file,
        JSON.stringify({ clients: [{ client_id: "a", client_secret: "s", scopes: [] }] }),
      );
      const reg = await loadClientRegistry(file, { cost });
      expect((await reg.verify("a", "s"))?.client_id).toBe("a");
      await writeFile(file, "{not json");
      await expect(loadClientRegistry(file, { cost })).rejects.toThrow(file);
      await expect(loadClientRegistry(path.join(dir, "missing.json"))).rejects.toThrow(/missing\.json/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
