// The service's replicas as production runs them: `node dist/src/main.js` each, production settings
// (NODE_ENV=production, GitHub's pacing on), one database, one App; ready when /ready answers 200.
import { join } from "node:path";
import { Child } from "../../demo/children.js";
import { freePort, sleep } from "../ingest/targets.js";
import { SERVICE_NODE_FLAGS } from "../../src/app/node-flags.js";

export interface ReplicaSettings {
  root: string;
  dir: string;
  databaseUrl: string;
  github: { host: string; appId: number; privateKey: string };
  webhookSecret: string;
  adminToken: string;
  /** LOG_LEVEL [warn] */
  logLevel?: string;
}

/** A release this replica made of what a replica that stopped beating held (its log line). */
export interface TakeoverSeen {
  at: number;
  deliveries: number;
  effects: number;
}

export class Replica {
  child!: Child;
  /** Every takeover it logged, over all its starts. */
  readonly takeovers: TakeoverSeen[] = [];
  constructor(
    readonly name: string,
    readonly port: number,
    readonly s: ReplicaSettings,
  ) {}

  static async create(name: string, s: ReplicaSettings): Promise<Replica> {
    return new Replica(name, await freePort(), s);
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** Starts it and answers how long it took to answer /ready with 200 (ms). */
  async start(): Promise<number> {
    const started = Date.now();
    const args = [...SERVICE_NODE_FLAGS, join(this.s.root, "dist", "src", "main.js")];
    this.child = new Child(this.name, process.execPath, args, {
      cwd: this.s.dir,
      env: {
        PATH: process.env["PATH"] ?? "/usr/bin:/bin",
        HOME: this.s.dir,
        NODE_ENV: "production",
        LOG_LEVEL: this.s.logLevel ?? "warn",
        LOG_FORMAT: "json",
        HOST: "127.0.0.1",
        PORT: String(this.port),
        APP_ID: String(this.s.github.appId),
        PRIVATE_KEY: this.s.github.privateKey,
        WEBHOOK_SECRET: this.s.webhookSecret,
        ORCHESTRA_ADMIN_TOKEN: this.s.adminToken,
        ORCHESTRA_METRICS_TOKEN: `${this.s.adminToken}-metrics`,
        DATABASE_URL: this.s.databaseUrl,
        GHE_HOST: this.s.github.host,
        GHE_PROTOCOL: "http",
      },
    });
    this.child.onLine((line) => {
      if (!line.includes("replicas: a replica stopped beating")) return;
      const l = JSON.parse(line) as { time: number; deliveries?: number; effects?: number };
      this.takeovers.push({ at: l.time, deliveries: l.deliveries ?? 0, effects: l.effects ?? 0 });
    });
    for (;;) {
      if (this.child.exit) throw new Error(`${this.name} exited while starting:\n${this.child.tail()}`);
      const ok = await fetch(`${this.url}/ready`).then(
        (r) => r.status === 200,
        () => false,
      );
      if (ok) return Date.now() - started;
      await sleep(50);
    }
  }

  kill(): Promise<unknown> {
    this.child.kill("SIGKILL");
    return this.child.exited;
  }

  stop(): Promise<unknown> {
    return this.child.stop(10_000);
  }
}
