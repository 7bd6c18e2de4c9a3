/**
 * Tokens at rest: sealed with AES-256-GCM under a key derived (HKDF-SHA256)
 * from the App's private key, which the service already holds and keeps
 * secret. A database copy without the key reveals no token. A new private
 * key cannot open tokens sealed under the old one; those expire within the
 * hour on their own.
 */
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from "node:crypto";

export interface Sealer {
  seal(token: string): string;
  /** null when it was sealed under another key, or is not a sealed token. */
  open(sealed: string): string | null;
}

const VERSION = "v1";

export function sealerFrom(privateKey: string): Sealer {
  const key = Buffer.from(hkdfSync("sha256", privateKey, "orchestra", "run-credentials/v1", 32));
  return {
    seal(token) {
      const iv = randomBytes(12);
      const cipher = createCipheriv("aes-256-gcm", key, iv);
      const body = Buffer.concat([cipher.update(token, "utf8"), cipher.final()]);
      return [VERSION, iv, cipher.getAuthTag(), body]
        .map((p) => (typeof p === "string" ? p : p.toString("base64url")))
        .join(".");
    },
    open(sealed) {
      const [version, iv, tag, body] = sealed.split(".");
      if (version !== VERSION || !iv || !tag || body === undefined) return null;
      try {
        const decipher = createDecipheriv("aes-256-gcm", key, Buffer.from(iv, "base64url"));
        decipher.setAuthTag(Buffer.from(tag, "base64url"));
        return Buffer.concat([decipher.update(Buffer.from(body, "base64url")), decipher.final()]).toString("utf8");
      } catch {
        return null;
      }
    },
  };
}
