/**
 * `npm run demo`: starts the demo (demo.ts), prints where the dashboard is
 * and how to sign in, then the story line by line; Ctrl-C (SIGINT) or
 * SIGTERM stops everything it started and removes its temporary directory
 * (a second Ctrl-C kills it all at once).
 *
 *   npm run demo                 # the dashboard on a free port
 *   npm run demo -- --port 3000  # on this one
 */
import { startDemo, type Demo } from "./demo.js";

const out = (line: string): void => void process.stdout.write(line + "\n");
const err = (line: string): void => void process.stderr.write(`orchestra demo: ${line}\n`);
const message = (e: unknown): string => (e instanceof Error ? e.message : String(e));

function portOption(argv: string[]): number | undefined {
  const i = argv.indexOf("--port");
  if (i === -1) return undefined;
  const port = Number(argv[i + 1]);
  if (!Number.isInteger(port) || port < 1 || port > 65535) {
    err("--port takes a TCP port number, e.g. --port 3000");
    process.exit(2);
  }
  return port;
}

/** Ends the demo once: the first call stops it in order, a second one (another Ctrl-C) abandons it at once. */
function stopper(demo: Demo): (why: string, code: number) => void {
  let stopping = false;
  return (why, code) => {
    if (stopping) {
      out("Stopping at once.");
      demo.abandon();
      process.exit(code || 1);
    }
    stopping = true;
    out(`\nStopping (${why}): the worker, the service, the simulated GitHub; removing ${demo.root}`);
    demo.stop().then(
      () => {
        const violations = demo.violations();
        for (const v of violations) err(`the simulated GitHub saw what GitHub would not do: ${v}`);
        out("Stopped.");
        process.exit(violations.length ? 1 : code);
      },
      (e: unknown) => {
        err(`while stopping: ${message(e)}`);
        demo.abandon();
        process.exit(1);
      },
    );
  };
}

async function main(): Promise<void> {
  const port = portOption(process.argv.slice(2));
  out("Orchestra demo: the service as `npm start` runs it, on SQLite in a temporary directory, against a simulated");
  out("GitHub (real git, GitHub's signed webhooks, writes paced one a second as in production), and one");
  out("`orchestra worker` whose agent is a shell script. All on 127.0.0.1; no GitHub App, no model. Ctrl-C stops it.");
  const demo = await startDemo({ print: out, ...(port === undefined ? {} : { port }) });
  const stop = stopper(demo);
  process.on("SIGINT", () => stop("SIGINT", 0));
  process.on("SIGTERM", () => stop("SIGTERM", 0));
  demo.broken.catch((e: unknown) => {
    err(message(e));
    stop("a part stopped", 1);
  });

  out("");
  out(`  dashboard  ${demo.serviceUrl}/dashboard`);
  out(`  sign in    ${demo.signInUrl}`);
  out("             (signs in once; or sign in on the dashboard with the admin token)");
  out(`  admin      ${demo.adminToken}`);
  out(`  data       ${demo.root}`);
  out("");
  try {
    await demo.begin();
  } catch (e) {
    err(message(e));
    return stop("the demo could not begin", 1);
  }
  await demo.told;
  out("");
  out("The story is told: every step is on the dashboard. It keeps running until Ctrl-C.");
}

main().catch((e: unknown) => {
  err(message(e));
  process.exit(1);
});
