/**
 * The demo's child processes (the service, the worker), each in a process
 * group of its own, so that Ctrl-C reaches the demo alone and the demo stops
 * them in order: the worker first (it hands its work off to the service),
 * then the service. Whatever is still running when the demo's process exits,
 * by any path but SIGKILL, is killed with its group.
 */
import { spawn, type ChildProcess } from "node:child_process";

const TAIL_LINES = 200;
const running = new Set<Child>();

process.on("exit", () => {
  for (const child of running) child.kill("SIGKILL");
});

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export class Child {
  readonly proc: ChildProcess;
  readonly exited: Promise<Exit>;
  #tail: string[] = [];
  #listeners: Array<(line: string) => void> = [];
  #exit: Exit | null = null;

  constructor(
    readonly name: string,
    command: string,
    args: string[],
    opts: { cwd: string; env: Record<string, string> },
  ) {
    this.proc = spawn(command, args, {
      cwd: opts.cwd,
      env: opts.env,
      detached: true,
      stdio: ["ignore", "pipe", "pipe"],
    });
    running.add(this);
    this.exited = new Promise((resolve) => {
      this.proc.once("exit", (code, signal) => {
        running.delete(this);
        this.#exit = { code, signal };
        resolve(this.#exit);
      });
    });
    for (const stream of [this.proc.stdout!, this.proc.stderr!]) {
      let partial = "";
      stream.setEncoding("utf8");
      stream.on("data", (chunk: string) => {
        const lines = (partial + chunk).split("\n");
        partial = lines.pop()!;
        for (const line of lines) this.#line(line);
      });
    }
  }

  get pid(): number {
    return this.proc.pid!;
  }

  /** Null while it runs. */
  get exit(): Exit | null {
    return this.#exit;
  }

  /** Calls `listener` with each line it writes from now on. */
  onLine(listener: (line: string) => void): void {
    this.#listeners.push(listener);
  }

  /** Its last lines of output, for saying why it stopped. */
  tail(n = 20): string {
    return this.#tail.slice(-n).join("\n");
  }

  /** Signals its whole process group. */
  kill(signal: NodeJS.Signals): void {
    if (this.#exit) return;
    try {
      process.kill(-this.pid, signal);
    } catch {
      // The group is gone already.
    }
  }

  /** SIGTERM to its group, and SIGKILL after `graceMs` if it has not exited by then. */
  async stop(graceMs: number): Promise<Exit> {
    if (this.#exit) return this.#exit;
    this.kill("SIGTERM");
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<void>((resolve) => (timer = setTimeout(resolve, graceMs)));
    const first = await Promise.race([this.exited, late.then(() => null)]);
    clearTimeout(timer);
    if (!first) this.kill("SIGKILL");
    const exit = await this.exited;
    // Anything it started and left behind in its group (a git or an agent process) goes with it.
    try {
      process.kill(-this.pid, "SIGKILL");
    } catch {
      // Nothing was left.
    }
    return exit;
  }

  #line(line: string): void {
    this.#tail.push(line);
    if (this.#tail.length > TAIL_LINES) this.#tail.shift();
    for (const l of this.#listeners) l(line);
  }
}
