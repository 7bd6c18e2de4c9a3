/**
 * The service as production runs it: `node dist/src/main.js`, a process of
 * its own, with its settings in the environment only. What differs is where
 * they point: the embedded database in the demo's temporary directory, the
 * simulated GitHub on 127.0.0.1 (GHE_HOST/GHE_PROTOCOL, as for a GitHub
 * Enterprise Server), and 127.0.0.1 as the address it listens on.
 */
import { randomBytes } from "node:crypto";
import { createServer } from "node:net";
import { join } from "node:path";
import { Child } from "./children.js";
import { SERVICE_NODE_FLAGS } from "../src/app/node-flags.js";

export interface Service {
  url: string;
  adminToken: string;
  webhookSecret: string;
  child: Child;
}

/** A port free right now on 127.0.0.1. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

/** Starts the service and answers once it listens; a start that fails says why, with the service's last lines. */
export async function startService(o: {
  root: string;
  packageRoot: string;
  github: { host: string; url: string; appId: number; privateKey: string };
  port?: number;
  baseEnv: Record<string, string>;
}): Promise<Service> {
  const adminToken = randomBytes(32).toString("hex");
  const webhookSecret = randomBytes(20).toString("hex");
  for (let tries = 1; ; tries++) {
    const port = o.port ?? (await freePort());
    const args = [...SERVICE_NODE_FLAGS, join(o.packageRoot, "dist", "src", "main.js")];
    const child = new Child("service", process.execPath, args, {
      // Not the checkout: main.js reads a .env from its working directory, and the demo must not take one.
      cwd: o.root,
      env: {
        ...o.baseEnv,
        APP_ID: String(o.github.appId),
        PRIVATE_KEY: o.github.privateKey,
        WEBHOOK_SECRET: webhookSecret,
        ORCHESTRA_ADMIN_TOKEN: adminToken,
        DATABASE_URL: `file:${join(o.root, "orchestra.db")}`,
        HOST: "127.0.0.1",
        PORT: String(port),
        LOG_LEVEL: "info",
        GHE_HOST: o.github.host,
        GHE_PROTOCOL: "http",
        // Nothing leaves the machine: the registry `npm-version:` conditions ask is the simulated GitHub's host too.
        ORCHESTRA_NPM_REGISTRY: o.github.url,
      },
    });
    const listening = await new Promise<boolean>((resolve) => {
      child.onLine((line) => {
        if (line.includes('"msg":"orchestra listening"')) resolve(true);
      });
      void child.exited.then(() => resolve(false));
    });
    if (listening) return { url: `http://127.0.0.1:${port}`, adminToken, webhookSecret, child };
    const why = child.tail();
    // Another process took the port between choosing it and listening: choose again.
    if (o.port === undefined && tries < 3 && /EADDRINUSE|already in use/.test(why)) continue;
    throw new Error(`the service did not start (exit ${child.exit?.code ?? child.exit?.signal}):\n${why}`);
  }
}
