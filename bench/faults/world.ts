// The world every fault scenario runs in: the stateful fake GitHub with one installation, one repository and
// its issues, one person with write access and one drive-by user without it, and the service as production
// runs it (bench/fleet/replicas.ts), every line it prints kept so the run can be searched for secrets.
import { randomBytes } from "node:crypto";
import { startFakeGitHub, type FakeGitHub } from "../../test/fake-github/index.js";
import { freshDatabase, type BenchDb } from "../claims/world.js";
import { makeTempDir, removeTempDir } from "../ingest/targets.js";
import { Replica } from "../fleet/replicas.js";

export const INSTALLATION = 9;
export const REPO = "acme/faults";
export const DRIVE_BY = "drive-by";

export interface FaultWorld {
  fake: FakeGitHub;
  service: Replica;
  db: BenchDb;
  adminToken: string;
  webhookSecret: string;
  /** Every line the service printed, in every life it had. */
  lines: string[];
  /** (Re)starts the service and answers how long until /ready said 200 (ms). */
  start(): Promise<number>;
  api<T>(path: string): Promise<T>;
  /** Values that must appear in no log line: the secrets, the key's body, every token GitHub issued. */
  secrets(): string[];
  close(): Promise<void>;
}

export async function startWorld(o: { root: string; pgUrl: string | null; issues: number }): Promise<FaultWorld> {
  const dir = makeTempDir("orchestra-faults-");
  const db = await freshDatabase(dir, o.pgUrl);
  const fake = await startFakeGitHub({ appSlug: "orchestra-faults" });
  fake.state.addInstallation(INSTALLATION, "acme");
  fake.state.addRepo(REPO, { installationId: INSTALLATION });
  fake.state.setPermission(REPO, DRIVE_BY, "read");
  for (let n = 1; n <= o.issues; n++) fake.state.addIssue(REPO, { number: n, title: `Issue ${n}`, user: "mona" });
  const adminToken = randomBytes(32).toString("hex");
  const webhookSecret = randomBytes(20).toString("hex");
  const service = await Replica.create("service", {
    root: o.root,
    dir,
    databaseUrl: db.url,
    github: { host: fake.host, appId: fake.appId, privateKey: fake.privateKey },
    webhookSecret,
    adminToken,
    // Every line the service writes in normal operation is searched for secrets, not only its warnings.
    logLevel: "info",
  });
  const lines: string[] = [];
  const world: FaultWorld = {
    fake,
    service,
    db,
    adminToken,
    webhookSecret,
    lines,
    async start() {
      const starting = service.start();
      service.child.onLine((line) => lines.push(line));
      return starting;
    },
    async api<T>(path: string): Promise<T> {
      const res = await fetch(`${service.url}${path}`, { headers: { authorization: `Bearer ${adminToken}` } });
      if (!res.ok) throw new Error(`${path} answered ${res.status}: ${await res.text()}`);
      return (await res.json()) as T;
    },
    secrets() {
      const keyBody = fake.privateKey.split("\n").filter((l) => l && !l.startsWith("-----"));
      const tokens = [...fake.state.tokens.keys()];
      return [adminToken, webhookSecret, `${adminToken}-metrics`, ...keyBody, ...tokens];
    },
    async close() {
      await service.stop().catch(() => undefined);
      await fake.close();
      await db.drop();
      removeTempDir(dir);
    },
  };
  fake.setWebhookTarget(`${service.url}/api/github/webhooks`, webhookSecret);
  return world;
}
