// A PostgreSQL cluster of the bench's own, so that it can be stopped and started again without touching anyone
// else's server: `initdb` into a temporary directory, `pg_ctl` on a free 127.0.0.1 port with its socket in that
// directory, password authentication for a role of its own. Run as the `postgres` OS user when the bench runs as
// root (PostgreSQL refuses to run as root), as the bench's own user otherwise. Whatever way the bench's process
// exits, the cluster is stopped and its directory removed.
import { execFile, execFileSync } from "node:child_process";
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir, userInfo } from "node:os";
import { join } from "node:path";
import { freePort } from "../ingest/targets.js";

const ROOT = "/usr/lib/postgresql";
const USER = "orchestra";
const live = new Set<PgCluster>();

process.on("exit", () => {
  for (const c of live) c.destroySync();
});

/** The newest installed server's bin directory, or null when there is none. */
export function postgresBin(): string | null {
  const env = process.env["PG_BIN"];
  if (env) return existsSync(join(env, "pg_ctl")) ? env : null;
  if (!existsSync(ROOT)) return null;
  const versions = readdirSync(ROOT)
    .filter((v) => existsSync(join(ROOT, v, "bin", "pg_ctl")))
    .sort((a, b) => Number.parseFloat(b) - Number.parseFloat(a));
  return versions.length ? join(ROOT, versions[0]!, "bin") : null;
}

/** uid/gid of the `postgres` OS user when the bench runs as root; undefined otherwise (run as ourselves). */
function runAs(): { uid: number; gid: number } | undefined {
  if (userInfo().uid !== 0) return undefined;
  const line = execFileSync("getent", ["passwd", "postgres"], { encoding: "utf8" }).trim();
  const [, , uid, gid] = line.split(":");
  if (!uid || !gid) throw new Error("running as root, and there is no `postgres` OS user to run PostgreSQL as");
  return { uid: Number(uid), gid: Number(gid) };
}

export class PgCluster {
  readonly #as = runAs();
  private constructor(
    readonly bin: string,
    readonly dir: string,
    readonly port: number,
    readonly password: string,
  ) {}

  /** A new cluster, initialised and started. */
  static async start(bin: string): Promise<PgCluster> {
    const dir = mkdtempSync(join(tmpdir(), "orchestra-faults-pg-"));
    const password = `bench-${process.pid}-${Date.now().toString(36)}`;
    const c = new PgCluster(bin, dir, await freePort(), password);
    live.add(c);
    if (c.#as) chownSync(dir, c.#as.uid, c.#as.gid);
    const pwfile = join(dir, "pwfile");
    writeFileSync(pwfile, password + "\n", { mode: 0o600 });
    if (c.#as) chownSync(pwfile, c.#as.uid, c.#as.gid);
    await c.#run("initdb", ["-D", c.data, "-U", USER, `--pwfile=${pwfile}`, "--auth=scram-sha-256", "-E", "UTF8"]);
    rmSync(pwfile);
    await c.up();
    return c;
  }

  get data(): string {
    return join(this.dir, "data");
  }

  /** The server's own database; the bench creates its database in it. */
  get url(): string {
    return `postgresql://${USER}:${this.password}@127.0.0.1:${this.port}/postgres`;
  }

  /** Starts the server and answers once it accepts connections. */
  async up(): Promise<void> {
    const opts = `-p ${this.port} -k ${this.dir} -c listen_addresses=127.0.0.1`;
    await this.#run("pg_ctl", [
      "-D",
      this.data,
      "-l",
      join(this.dir, "server.log"),
      "-o",
      opts,
      "-w",
      "-t",
      "60",
      "start",
    ]);
  }

  /**
   * Stops the server: `fast` ends every session and shuts down cleanly (an operator's stop, a failover),
   * `immediate` ends every process at once and recovers from the WAL at the next start (a crash).
   */
  async down(mode: "fast" | "immediate"): Promise<void> {
    await this.#run("pg_ctl", ["-D", this.data, "-m", mode, "-w", "-t", "60", "stop"]);
  }

  destroySync(): void {
    live.delete(this);
    try {
      execFileSync(join(this.bin, "pg_ctl"), ["-D", this.data, "-m", "immediate", "-w", "stop"], {
        stdio: "ignore",
        ...this.#as,
      });
    } catch {
      // Not running.
    }
    rmSync(this.dir, { recursive: true, force: true });
  }

  #run(tool: string, args: string[]): Promise<void> {
    return new Promise((resolve, reject) => {
      // The working directory is the cluster's: the postgres user may not enter the bench's.
      execFile(join(this.bin, tool), args, { cwd: this.dir, ...this.#as }, (err, _stdout, stderr) => {
        if (err) reject(new Error(`${tool} ${args.at(-1)} failed: ${stderr.trim() || err.message}`));
        else resolve();
      });
    });
  }
}
