/**
 * Whether the service can listen where PORT and HOST say, asked before
 * Probot's server tries: when its listen fails, Probot logs the error with
 * its stack trace before the promise rejects, which is not a message for
 * someone who only has to pick another port. The probe binds the same port
 * and host the same way and lets go at once; a failure becomes one line
 * naming the setting. (Between the probe and the server's listen another
 * process may still take the port: that failure is told the same way, after
 * Probot's log line.)
 */
import { createServer } from "node:net";
import type { StartupProblem } from "../config/problem.js";

/** The line for a failed listen on `host:port`, from the error's code. */
export function listenProblem(err: unknown, at: { host: string; port: number }, user: string): StartupProblem {
  const code = (err as { code?: unknown } | null)?.code;
  const { host, port } = at;
  switch (code) {
    case "EADDRINUSE":
      return {
        kind: "unavailable",
        line:
          `PORT ${port} is in use on ${host} (HOST): another process listens there; ` +
          `stop it, or set PORT to a free port`,
      };
    case "EACCES":
      return {
        kind: "permission",
        line:
          `PORT ${port} on ${host} (HOST) may not be bound by ${user}: ports below 1024 need privileges; ` +
          `set PORT to 1024 or above (a proxy in front can serve 443)`,
      };
    case "EADDRNOTAVAIL":
      return {
        kind: "config",
        line:
          `HOST ${host} is not an address of this machine: set HOST to one of its addresses, ` +
          `localhost, or 0.0.0.0 for every address (in a container)`,
      };
    case "ENOTFOUND":
    case "EAI_AGAIN":
    case "EAI_NONAME":
      return {
        kind: "config",
        line:
          `HOST ${host} does not resolve to an address: ` +
          `set HOST to a name or address of this machine, or localhost`,
      };
  }
  const why = err instanceof Error ? err.message : String(err);
  return { kind: "unavailable", line: `PORT ${port} on ${host} (HOST) cannot be listened on (${why})` };
}

/** Whether `err` is a failure to listen (or to resolve HOST for it): anything else at start-up is not about PORT. */
export function isListenError(err: unknown): boolean {
  const syscall = (err as { syscall?: unknown } | null)?.syscall;
  return syscall === "listen" || syscall === "getaddrinfo";
}

/** Binds `host:port` and lets go: null when the server will be able to listen there, else the error. */
export function probeListen(host: string, port: number): Promise<unknown> {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.once("error", (err) => resolve(err));
    probe.listen({ port, host }, () => probe.close(() => resolve(null)));
  });
}
