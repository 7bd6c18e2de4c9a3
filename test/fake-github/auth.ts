/**
 * App authentication as GitHub checks it: an RS256 JWT signed with the App's
 * private key on `/app/*` (and `/repos/{o}/{r}/installation`), installation
 * tokens everywhere else.
 */
import { createPublicKey, generateKeyPair, verify, type KeyObject } from "node:crypto";
import { APP_KEYS_ENV, KEY_OPTIONS } from "../support/global-setup.js";

export interface AppKeys {
  /** PKCS#1 PEM ("BEGIN RSA PRIVATE KEY"), the format GitHub hands out */
  privateKey: string;
  publicKey: KeyObject;
}

let shared: Promise<AppKeys> | null = null;

/**
 * The App's key pair. RSA generation costs 50–250 ms of CPU, most of a fake's
 * start, so one pair serves every fake of a test run (made by its global
 * setup; made here when there is none); each fake still has an App id of its
 * own, and a JWT signed with any other key is refused.
 */
export function takeAppKeys(): Promise<AppKeys> {
  const given = process.env[APP_KEYS_ENV];
  if (given && !shared) {
    const { privateKey, publicKey } = JSON.parse(given) as { privateKey: string; publicKey: string };
    shared = Promise.resolve({ privateKey, publicKey: createPublicKey(publicKey) });
  }
  shared ??= new Promise<AppKeys>((resolve, reject) => {
    generateKeyPair("rsa", KEY_OPTIONS, (err, publicKey, privateKey) => {
      if (err) reject(err);
      else resolve({ privateKey, publicKey: createPublicKey(publicKey) });
    });
  });
  return shared;
}

export function parseAuthorization(header: string | undefined): { scheme: string; credentials: string } | null {
  if (!header) return null;
  const m = /^(\S+)\s+(.+)$/.exec(header.trim());
  return m ? { scheme: m[1]!.toLowerCase(), credentials: m[2]!.trim() } : null;
}

/** GitHub's own wording for each way a JWT can be refused. */
export const JWT_ERRORS = {
  decode: "A JSON web token could not be decoded",
  exp: "'Expiration time' claim ('exp') must be a numeric value representing the future time at which the assertion expires",
  expTooFar: "'Expiration time' claim ('exp') is too far in the future",
  iat: "'Issued at' claim ('iat') must be an Integer representing the time that the assertion was issued",
  iss: "'Issuer' claim ('iss') must be an Integer",
  integration: "Integration not found",
} as const;

/** Returns null when the JWT is acceptable, else GitHub's 401 message. */
export function checkAppJwt(jwt: string, publicKey: KeyObject, appId: number, nowSeconds: number): string | null {
  const parts = jwt.split(".");
  if (parts.length !== 3) return JWT_ERRORS.decode;
  const [h, p, s] = parts as [string, string, string];
  let header: { alg?: string };
  let payload: { iat?: unknown; exp?: unknown; iss?: unknown };
  try {
    header = JSON.parse(Buffer.from(h, "base64url").toString("utf8"));
    payload = JSON.parse(Buffer.from(p, "base64url").toString("utf8"));
  } catch {
    return JWT_ERRORS.decode;
  }
  if (header.alg !== "RS256") return JWT_ERRORS.decode;
  const signed = verify("RSA-SHA256", Buffer.from(`${h}.${p}`), publicKey, Buffer.from(s, "base64url"));
  if (!signed) return JWT_ERRORS.decode;
  if (typeof payload.iat !== "number" || !Number.isInteger(payload.iat) || payload.iat > nowSeconds + 60) {
    return JWT_ERRORS.iat;
  }
  if (typeof payload.exp !== "number" || payload.exp <= nowSeconds) return JWT_ERRORS.exp;
  if (payload.exp - payload.iat > 600 + 60) return JWT_ERRORS.expTooFar;
  if (payload.iss === undefined || !/^\d+$/.test(String(payload.iss))) return JWT_ERRORS.iss;
  if (String(payload.iss) !== String(appId)) return JWT_ERRORS.integration;
  return null;
}
