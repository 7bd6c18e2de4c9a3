/**
 * Headless Chromium for the dashboard's browser tests: Debian's `chromium`
 * driven by playwright-core (which downloads no browser of its own).
 * ORCHESTRA_TEST_CHROMIUM names another executable. Where none is installed
 * the browser tests are skipped with a note, unless ORCHESTRA_REQUIRE_BROWSER
 * is set (`.ci/run` sets it and installs chromium), where they fail instead.
 */
import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { chromium, type Browser } from "playwright-core";

const CANDIDATES = [
  "/usr/bin/chromium",
  "/usr/bin/chromium-browser",
  "/usr/bin/google-chrome",
  "/usr/bin/google-chrome-stable",
];

export function chromiumPath(): string | null {
  const named = process.env["ORCHESTRA_TEST_CHROMIUM"];
  if (named) return named;
  return CANDIDATES.find((p) => existsSync(p)) ?? null;
}

export const browserRequired = (): boolean => Boolean(process.env["ORCHESTRA_REQUIRE_BROWSER"]);

export async function launchBrowser(): Promise<Browser> {
  const executablePath = chromiumPath();
  if (!executablePath)
    throw new Error(
      "no Chromium found: install Debian's chromium (apt-get install chromium) or set ORCHESTRA_TEST_CHROMIUM to a Chromium executable",
    );
  // The browser only looks at the App; it runs on the machine's own clock. A suite run under a preloaded clock
  // (libfaketime's LD_PRELOAD, to run it at 23:59 UTC) would otherwise hang Chromium's start.
  const { LD_PRELOAD: _preload, ...env } = process.env;
  // --no-sandbox: CI runs as root, where Chromium refuses its sandbox.
  return chromium.launch({ executablePath, args: ["--no-sandbox", "--disable-dev-shm-usage"], env });
}

/** Where the browser tests save a screenshot of each view (kept by CI as test artifacts). */
export function screenshotPath(name: string): string {
  const dir = join(process.cwd(), "artifacts", "screenshots");
  mkdirSync(dir, { recursive: true });
  return join(dir, `${name}.png`);
}
