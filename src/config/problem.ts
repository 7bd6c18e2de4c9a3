/**
 * Why the service cannot start, as it is told: one line that names the
 * setting, says what is wrong and what to do. The kind picks the exit code
 * (src/main.ts; docs/configuration.md lists them).
 */
import { userInfo } from "node:os";

export interface StartupProblem {
  /**
   * `config`: a setting is missing, malformed or names the wrong thing; retrying will not help.
   * `unavailable`: what a setting names is not there now (a server that does not answer, a port in use).
   * `permission`: this user may not do what the setting asks (write a file, bind a port).
   */
  kind: "config" | "unavailable" | "permission";
  line: string;
}

/** The user this process runs as, for a line that says who may not: `user nobody (uid 65534)`. */
export function processUser(): string {
  const uid = typeof process.getuid === "function" ? process.getuid() : undefined;
  try {
    const { username } = userInfo();
    return uid === undefined ? `user ${username}` : `user ${username} (uid ${uid})`;
  } catch {
    // A uid without a passwd entry (containers run as arbitrary uids): the number is all there is.
    return uid === undefined ? "this user" : `uid ${uid}`;
  }
}
