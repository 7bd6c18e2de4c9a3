/**
 * The App's JWT, signed once and reused for most of its life instead of on
 * every App-level request: GitHub's App client would import the private key
 * and sign anew for each run token minted, which costs more CPU than the
 * rest of a claim's bookkeeping. The claims match the App client's own (iat
 * 30 s back for clock drift, exp 10 minutes after it, iss the App id); a
 * token within a minute of expiry is signed again. A retry with a clock
 * difference (GitHub said our clock is off) is signed fresh and not kept.
 */
import { createPrivateKey, createSign, type KeyObject } from "node:crypto";

export interface SignedAppJwt {
  jwt: string;
  expiresAt: string;
}

/** The App client's `createJwt` option: (appId, timeDifference in seconds) → a JWT. */
export type AppJwtSigner = (appId: number | string, timeDifference?: number) => Promise<SignedAppJwt>;

const DRIFT_S = 30;
const LIFETIME_S = 600;
const RENEW_WITHIN_S = 60;

const base64url = (o: unknown) => Buffer.from(JSON.stringify(o)).toString("base64url");

export function appJwtSigner(privateKey: string, now: () => number = Date.now): AppJwtSigner {
  let key: KeyObject | undefined;
  let kept: { appId: string; jwt: string; exp: number } | undefined;
  return (appId, timeDifference = 0) => {
    const id = String(appId);
    const nowS = Math.floor(now() / 1000) + timeDifference;
    if (!timeDifference && kept && kept.appId === id && kept.exp - nowS > RENEW_WITHIN_S) {
      return Promise.resolve({ jwt: kept.jwt, expiresAt: new Date(kept.exp * 1000).toISOString() });
    }
    // Keys set in an environment variable often carry their line breaks escaped.
    key ??= createPrivateKey(privateKey.replace(/\\n/g, "\n"));
    const iat = nowS - DRIFT_S;
    const exp = iat + LIFETIME_S;
    const iss = /^\d+$/.test(id) ? Number(id) : id;
    const body = `${base64url({ alg: "RS256", typ: "JWT" })}.${base64url({ iat, exp, iss })}`;
    const jwt = `${body}.${createSign("RSA-SHA256").update(body).sign(key).toString("base64url")}`;
    if (!timeDifference) kept = { appId: id, jwt, exp };
    return Promise.resolve({ jwt, expiresAt: new Date(exp * 1000).toISOString() });
  };
}
