/**
 * The App's JWT signer: one signature kept for most of its life, checked
 * the way GitHub checks it (the fake GitHub's verifier, with the key pair's
 * public half).
 */
import { generateKeyPairSync } from "node:crypto";
import { appJwtSigner } from "../../src/github/app-jwt.js";
import { checkAppJwt } from "../fake-github/auth.js";

const { privateKey, publicKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
const pem = privateKey.export({ type: "pkcs1", format: "pem" }).toString();
const T0 = Date.UTC(2026, 0, 1, 12, 0, 0);
const claims = (jwt: string) =>
  JSON.parse(Buffer.from(jwt.split(".")[1]!, "base64url").toString()) as Record<string, number>;

describe("appJwtSigner", () => {
  test("GitHub accepts what it signs: RS256, iat 30 s back, exp 10 minutes after iat, iss the App id", async () => {
    const sign = appJwtSigner(pem, () => T0);
    const { jwt, expiresAt } = await sign(42);
    expect(checkAppJwt(jwt, publicKey, 42, T0 / 1000)).toBeNull();
    expect(claims(jwt)).toEqual({ iat: T0 / 1000 - 30, exp: T0 / 1000 + 570, iss: 42 });
    expect(expiresAt).toBe(new Date(T0 + 570_000).toISOString());
  });

  test("a key with escaped line breaks, as set in an environment variable, signs the same", async () => {
    const a = await appJwtSigner(pem, () => T0)(42);
    const b = await appJwtSigner(pem.replace(/\n/g, "\\n"), () => T0)(42);
    expect(b.jwt).toBe(a.jwt);
  });

  test.each([
    ["at once", 0, true],
    ["8 minutes on (more than a minute left)", 8 * 60_000, true],
    ["a minute before expiry", 8.5 * 60_000, false],
    ["after expiry", 10 * 60_000, false],
  ])("asked again %s: the kept token is reused = %s", async (_when, later, reused) => {
    let now = T0;
    const sign = appJwtSigner(pem, () => now);
    const first = await sign(42);
    now = T0 + later;
    const again = await sign(42);
    expect(again.jwt === first.jwt).toBe(reused);
    expect(checkAppJwt(again.jwt, publicKey, 42, Math.floor(now / 1000))).toBeNull();
  });

  test("a retry with a clock difference is signed fresh, shifted, and not kept", async () => {
    const sign = appJwtSigner(pem, () => T0);
    const first = await sign(42);
    const skewed = await sign(42, 300);
    expect(skewed.jwt).not.toBe(first.jwt);
    expect(claims(skewed.jwt).iat).toBe(T0 / 1000 + 300 - 30);
    expect((await sign(42)).jwt).toBe(first.jwt);
  });

  test("another App id is never answered with the kept token", async () => {
    const sign = appJwtSigner(pem, () => T0);
    const a = await sign(42);
    const b = await sign("43");
    expect(b.jwt).not.toBe(a.jwt);
    expect(checkAppJwt(b.jwt, publicKey, 43, T0 / 1000)).toBeNull();
  });
});
