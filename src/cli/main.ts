/**
 * The operator CLI: the program definition. Commands that change the
 * database itself (migrate, prune) open it directly (local-commands.ts, with
 * doctor and classify); the others talk to a running service over its API
 * (api-commands.ts, workers.ts), so they work the same against one replica
 * or many. Output helpers and the API client are in io.ts; each verb group's
 * rendering is in its own file. The order of the calls below is the order
 * --help lists the commands in.
 */
import { existsSync } from "node:fs";
import { Command } from "commander";
import { EXIT, die } from "./io.js";
import { apiCommands } from "./api-commands.js";
import { workersCommandOf } from "./workers.js";
import { workerCommand } from "./worker.js";
import { localCommands } from "./local-commands.js";

const FOOTER = `
API commands read ORCHESTRA_URL (default http://localhost:$PORT or :3000) and ORCHESTRA_ADMIN_TOKEN.
Every command that prints data takes --json: the API's answer, for scripts.

exit codes:
  0  done
  1  the service or the database failed: what happened and what to do is on stderr
  2  usage error (unknown command or option, missing argument, bad setting): the usage line is on stderr`;

function program(): Command {
  const cli = new Command("orchestra")
    .description("Operate Orchestra: the queue, tasks, workers, deliveries, GitHub writes and the database.")
    .configureOutput({ outputError: (text, write) => write(`orchestra: ${text.replace(/^error: /, "")}`) })
    // Usage errors exit 2 (commander's own default is 1, which here means "the service failed").
    .exitOverride((err) => process.exit(err.exitCode === 0 ? EXIT.ok : EXIT.usage))
    .addHelpText("after", FOOTER);

  apiCommands(cli);
  workersCommandOf(cli);
  workerCommand(cli);
  localCommands(cli);

  // A usage error prints the usage line of the command it is about.
  const usageLines = (cmd: Command, path: string) => {
    cmd.showHelpAfterError(
      cmd === cli
        ? "usage: orchestra <command> [options]; orchestra --help lists the commands"
        : `usage: ${path} ${cmd.usage()}`,
    );
    for (const sub of cmd.commands) usageLines(sub, `${path} ${sub.name()}`);
  };
  usageLines(cli, "orchestra");
  return cli;
}

const argv = process.argv.slice(2);
if (existsSync(".env")) process.loadEnvFile(".env");
const cli = program();
if (argv.length === 0) cli.outputHelp();
else
  await cli
    .parseAsync(argv, { from: "user" })
    .catch((err: unknown) => die(EXIT.failed, `failed: ${err instanceof Error ? err.message : String(err)}`));
