/**
 * `orchestra doctor [--json]`: checks, from this machine and with the
 * service's environment, what Orchestra needs to work: the settings, the
 * database and its migrations, GitHub answering to the App's credentials,
 * the App's and each installation's permissions and events against app.yml,
 * the GitHub host (its release, and the fallbacks Orchestra uses for what it
 * lacks), and recent webhook deliveries that failed. One line per check as it
 * completes; exit 0 when nothing failed (warnings allowed), 1 otherwise.
 *
 * A check that depends on a failed one is not run and says so (`skip`), so a
 * missing key is reported once, not as five GitHub failures.
 */
import { scrub, secretsOf } from "../../redact/redact.js";
import { checkText, exitCodeOf, summaryText, type Check } from "./check.js";
import { appAccessCheck, installationAccessCheck, type Access } from "./compare.js";
import { deliveriesCheck } from "./deliveries.js";
import { appCheck, appOctokit, listInstallations, readDeliveries, type AppTarget } from "./github.js";
import { hostCheck } from "./host.js";
import { databaseCheck, environmentCheck } from "./local.js";
import { manifestPath, readManifest } from "./manifest.js";

/** How far back failed webhook deliveries are looked for. */
export const DELIVERIES_WINDOW_MS = 24 * 3_600_000;

export interface DoctorIo {
  env: NodeJS.ProcessEnv;
  out(text: string): void;
  now?: () => Date;
}

const skip = (name: string, why: string): Check => ({ name, status: "skip", detail: `not checked: ${why}` });

export async function doctorCommand(flags: { json: boolean }, io: DoctorIo): Promise<number> {
  const now = io.now ?? (() => new Date());
  const secrets = secretsOf(io.env);
  const checks: Check[] = [];
  // Every line goes through the scrubber too: an error text from a driver or from GitHub may quote a setting.
  const report = (c: Check) => {
    const clean: Check = { ...c, detail: scrub(c.detail, secrets), ...(c.fix ? { fix: scrub(c.fix, secrets) } : {}) };
    checks.push(clean);
    if (!flags.json) io.out(checkText(clean));
  };

  const { check: envCheck, env } = environmentCheck(io.env);
  report(envCheck);
  report(await databaseCheck(io.env));

  await githubChecks(
    env ? { appId: env.credentials.appId, privateKey: env.credentials.privateKey, baseUrl: env.baseUrl } : null,
    report,
    now(),
  );

  io.out(flags.json ? `${JSON.stringify({ checks }, null, 2)}\n` : summaryText(checks));
  return exitCodeOf(checks);
}

async function githubChecks(target: AppTarget | null, report: (c: Check) => void, now: Date): Promise<void> {
  const later = ["app permissions", "installations", "github host", "webhook deliveries"];
  if (!target) {
    for (const name of ["github", ...later])
      report(skip(name, "the environment check failed (the App's id and key are needed)"));
    return;
  }
  const octokit = appOctokit(target);
  const { check, app } = await appCheck(octokit, target);
  report(check);
  if (!app) {
    for (const name of later) report(skip(name, "GitHub did not accept or answer GET /app (see the github line)"));
    return;
  }

  let wanted: Access | null = null;
  try {
    wanted = readManifest();
  } catch (err) {
    report({
      name: "app permissions",
      status: "fail",
      detail: `cannot read what Orchestra asks for from ${manifestPath()}: ${(err as Error).message}`,
      fix: "app.yml ships with Orchestra beside package.json; restore it from the release this service runs",
    });
  }
  if (wanted) report(appAccessCheck(wanted, app.access, app));

  const installations = await listInstallations(octokit, target);
  if (!Array.isArray(installations)) report(installations);
  else if (installations.length === 0) {
    report({
      name: "installations",
      status: "warn",
      detail: `the App ${app.slug} is not installed on any account: no repository sends it events`,
      fix: `install it on the organization it should manage (the App's public page, Install App)`,
    });
  } else if (!wanted) report(skip("installations", "app.yml could not be read (see the app permissions line)"));
  else for (const inst of installations) report(installationAccessCheck(wanted, app.access, inst, app));
  const reader = Array.isArray(installations) ? installations.find((i) => !i.suspended) : undefined;
  report(await hostCheck(target, reader?.id ?? null));

  const log = await readDeliveries(octokit, target, new Date(now.getTime() - DELIVERIES_WINDOW_MS));
  report("items" in log ? deliveriesCheck(log, now, DELIVERIES_WINDOW_MS) : log);
}
