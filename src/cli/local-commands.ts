/**
 * The commands that work from here rather than through the service: doctor checks this environment, migrate and
 * prune open the database directly, classify runs the classifier on a facts document.
 */
import type { Command } from "commander";
import { EXIT, die, out } from "./io.js";
import { classifyCommand, readAll } from "./classify.js";
import { pruneCommand } from "./prune.js";
import { migrateCommand } from "./migrate.js";

export function localCommands(cli: Command): void {
  cli
    .command("doctor")
    .description(
      "check from here, with the service's environment, what Orchestra needs: settings, " +
        "database and migrations, GitHub and the App's credentials, the App's and each installation's " +
        "permissions and events against app.yml, failed webhook deliveries; exit 1 when a check fails",
    )
    .option("--json", "{checks: [{name, status, detail, fix?}]}")
    .action(async (o: { json?: boolean }) => {
      // Loaded here: it brings Probot's octokit, which the other commands do not need.
      const { doctorCommand } = await import("./doctor/index.js");
      process.exitCode = await doctorCommand({ json: o.json === true }, { env: process.env, out });
    });

  cli
    .command("migrate")
    .description("apply pending database migrations (DATABASE_URL; default ./data/orchestra.db)")
    .action(migrateCommand);

  cli
    .command("prune")
    .description("delete old rows now, as retention would (ORCHESTRA_RETENTION_*, DATABASE_URL); progress on stderr")
    .option("--dry-run", "count them, delete nothing")
    .option("--json", "the counts as JSON")
    .action(async (o: { dryRun?: boolean; json?: boolean }) => {
      process.exitCode = await pruneCommand(
        { dryRun: o.dryRun === true, json: o.json === true },
        { env: process.env, out, err: (t) => process.stderr.write(t) },
      );
    });

  cli
    .command("classify")
    .description(
      "what Orchestra would do with a run: reads the facts document (JSON) " +
        "on stdin, prints {class, recovery, evidence}",
    )
    .usage("[--batch] < facts.json")
    .option("--batch", "an array of documents in, an array of answers out")
    .action(async (o: { batch?: boolean }) => {
      // Waiting on a terminal would look like a hang; say what it expects instead.
      if (process.stdin.isTTY)
        die(EXIT.usage, "classify reads a facts document (JSON) on stdin, e.g. orchestra classify < facts.json");
      const answer = classifyCommand(await readAll(process.stdin), { batch: o.batch === true });
      out(answer.stdout);
      process.stderr.write(answer.stderr);
      // exitCode, not exit(): exit() can cut off a large answer still draining into a pipe.
      process.exitCode = answer.code;
    });
}
