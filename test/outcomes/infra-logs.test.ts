/**
 * Whole test-run logs, classified through classify(): a failing jest, pytest,
 * cargo, go or Gradle run whose output names a registry's 503, a timeout, an
 * OOM or a full disk is a genuine failure (checks-failed), never infra. The
 * same run cut short by the machine going away is infra. And the failure
 * reports of the test runners the catalogue's ecosystems use are recognised.
 */
import { classify } from "../../src/outcomes/classify.js";
import type { CheckFact, Facts } from "../../src/outcomes/facts.js";
import { hasTestFailure } from "../../src/outcomes/infra-patterns.js";

const HEAD = "c0ffee1";
const failing = (name: string, text: string): CheckFact => ({
  name,
  headSha: HEAD,
  status: "completed",
  conclusion: "failure",
  output: { title: name, text },
});
const facts = (checks: CheckFact[]): Facts => ({
  trigger: "check-failed",
  run: { exitCode: null },
  pr: { number: 7, state: "open", headSha: HEAD },
  branch: null,
  checks,
});
const log = (...lines: string[]) => lines.map((l, i) => `2024-05-10T10:01:${String(i).padStart(2, "0")}.1Z ${l}`);

const JEST = log(
  "> app@1.0.0 test",
  "> jest --ci",
  "PASS src/cache.test.ts",
  "FAIL src/registry.test.ts",
  "  registry client",
  "    ✓ caches the index (4 ms)",
  "    ✕ handles 503 from registry (12 ms)",
  "",
  "  ● registry client › handles 503 from registry",
  "",
  "    expect(received).toBe(expected) // Object.is equality",
  "",
  '    Expected: "retried"',
  '    Received: "npm ERR! 503 Service Unavailable - GET https://registry.npmjs.org/left-pad"',
  "",
  "Tests:       1 failed, 1 passed, 2 total",
);

const PYTEST = log(
  "============================= test session starts ==============================",
  "collected 42 items",
  "tests/test_fetch.py ........F..................................          [100%]",
  "=================================== FAILURES ===================================",
  "______________________________ test_pip_mirror_down ______________________________",
  "E       AssertionError: assert 'ok' == 'HTTP error 503 while getting https://files.pythonhosted.org/x.whl'",
  "----------------------------- Captured stdout call -----------------------------",
  // pytest prints what the test printed at the start of the line: the tool's own words, verbatim.
  "E: Failed to fetch http://archive.ubuntu.com/ubuntu/pool/main/c/curl/curl_8.5.0_amd64.deb  " +
    "503  Service Unavailable [IP: 91.189.91.23 80]",
  "pip._vendor.urllib3.exceptions.ReadTimeoutError: HTTPSConnectionPool(host='files.pythonhosted.org', " +
    "port=443): Read timed out.",
  "=========================== short test summary info ============================",
  "FAILED tests/test_fetch.py::test_pip_mirror_down - AssertionError: assert 'ok' == 'HTTP error 503 ...'",
  "========================= 1 failed, 41 passed in 3.21s =========================",
);

const CARGO = log(
  "running 12 tests",
  "test fetch::retries_on_timeout ... ok",
  "test fetch::fails_over_on_503 ... FAILED",
  "",
  "failures:",
  "",
  "---- fetch::fails_over_on_503 stdout ----",
  "thread 'fetch::fails_over_on_503' panicked at src/fetch.rs:40:9:",
  "assertion `left == right` failed",
  '  left: "failed to get successful HTTP response from `https://index.crates.io/se/rd/serde` (127.0.0.1), got 503"',
  ' right: "ok"',
  "[28] Timeout was reached (download of `serde v1.0.0` failed to transfer more than 10 bytes in 30s)",
  "",
  "test result: FAILED. 11 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.31s",
  "",
  "error: test failed, to rerun pass `--lib`",
);

const GO = log(
  "=== RUN   TestProxyFallback",
  "go: example.com/lib@v1.2.0: reading https://proxy.golang.org/example.com/lib/@v/v1.2.0.info: 502 Bad Gateway",
  "    proxy_test.go:44: fallback did not happen",
  "--- FAIL: TestProxyFallback (0.01s)",
  "FAIL",
  "FAIL\texample.com/fetch\t0.022s",
);

const GRADLE = log(
  "> Task :test",
  "",
  "MirrorClientTest > failsOverWhenTheMirrorAnswers503() FAILED",
  "    org.opentest4j.AssertionFailedError: expected: <ok> but was: <Could not GET " +
    "'https://repo.maven.apache.org/maven2/a/a/1/a-1.pom'. Received status code 503 from server: Service Unavailable>",
  "",
  "Could not GET 'https://repo.maven.apache.org/maven2/a/a/1/a-1.pom'. Received status code 503 from server: " +
    "Service Unavailable",
  "> Process 'Gradle Test Executor 1' finished with non-zero exit value 137",
  "3 tests completed, 1 failed",
  "> There were failing tests. See the report at: file:///home/runner/work/app/build/reports/tests/test/index.html",
);

// A unit test asserting on the kernel's OOM line: jest quotes it, indented, in its diff.
const JEST_OOM = log(
  "FAIL src/kernel-log.test.ts",
  "  ● kernel log › names the process the OOM killer chose",
  "",
  "    expect(received).toEqual(expected) // deep equality",
  "",
  "    - Expected  - 1",
  "    + Received  + 1",
  "",
  "      [ 7063.247407] Memory cgroup out of memory: Killed process 63214 (uwsgi) total-vm:3149468kB",
  "    - victim: uwsgi",
  "    + victim: null",
  "",
  "Tests:       1 failed, 8 passed, 9 total",
);

describe("a failing test run that names an infrastructure failure is a genuine failure", () => {
  test.each([
    ["jest: a test named after a registry's 503, npm's line in its message", JEST],
    ["pytest: the test printed apt's and pip's lines at the start of a line", PYTEST],
    ["cargo test: cargo's own words in an assertion, curl's timeout printed", CARGO],
    ["go test: the go command's 502 in the test's output", GO],
    ["Gradle: JUnit failing on a 503, and the test executor killed afterwards", GRADLE],
    ["jest: a test asserting on the kernel's OOM line", JEST_OOM],
  ])("%s → checks-failed", (_name, lines) => {
    const text = [...lines, "##[error]Process completed with exit code 1."].join("\n");
    const v = classify(facts([failing("test", text)]));
    expect([v.class, v.recovery, v.evidence["failed"]]).toEqual([
      "checks-failed",
      "continue-fix-checks",
      [{ name: "test", conclusion: "failure", infra: null }],
    ]);
  });

  test("the same jest run cut short by the machine going away is infra: a rerun re-tests it", () => {
    const ends = [
      "##[error]The runner has received a shutdown signal. This can happen when the runner service is stopped, " +
        "or a manually started runner is canceled.",
      "##[error]Process completed with exit code 137.",
      "[ 7063.247407] Memory cgroup out of memory: Killed process 63214 (node) total-vm:3149468kB",
    ];
    for (const end of ends) {
      const v = classify(facts([failing("test", [...JEST, end].join("\n"))]));
      expect([end, v.class, v.recovery]).toEqual([end, "infra", "rerun-failed-jobs"]);
    }
  });

  test("without the test report, the tool's own lines are infra", () => {
    const install = log(
      "> npm ci",
      "E: Failed to fetch http://archive.ubuntu.com/ubuntu/pool/main/c/curl/curl_8.5.0_amd64.deb  " +
        "503  Service Unavailable [IP: 91.189.91.23 80]",
      "E: Unable to fetch some archives, maybe run apt-get update or try with --fix-missing?",
    );
    const v = classify(
      facts([failing("setup", [...install, "##[error]Process completed with exit code 100."].join("\n"))]),
    );
    expect([v.class, (v.evidence["failed"] as Array<{ infra: string }>)[0]!.infra]).toEqual([
      "infra",
      "output matches apt: 2024-05-10T10:01:01.1Z E: Failed to fetch http://archive.ubuntu.com/ubuntu/pool/main/c/" +
        "curl/curl_8.5.0_amd64.deb  503  Service Unavailable [IP: 91.189.91.23 80]",
    ]);
  });
});

describe("the test runners' failure reports", () => {
  test.each([
    ["cargo, a test binary that died", "error: test failed, to rerun pass `--lib`"],
    ["Gradle, a failed test", "com.example.MirrorClientTest > retries() FAILED"],
    [
      "Gradle, the Test task",
      "> There were failing tests. See the report at: file:///w/build/reports/tests/index.html",
    ],
    ["Maven Surefire, the summary", "[ERROR] Tests run: 12, Failures: 1, Errors: 0, Skipped: 0"],
    ["Maven Surefire, an error", "Tests run: 3, Failures: 0, Errors: 2, Skipped: 0, Time elapsed: 0.4 s <<< ERROR!"],
    ["dotnet test", "Failed!  - Failed:     1, Passed:    41, Skipped:     0, Total:    42, Duration: 1 s - A.dll"],
    ["RSpec", "12 examples, 1 failure"],
    ["Minitest", "9 runs, 14 assertions, 0 failures, 1 errors, 0 skips"],
    ["PHPUnit", "FAILURES!\nTests: 3, Assertions: 3, Failures: 1."],
    ["jest, in a job log with the runner's timestamps", "2024-05-10T10:01:02.1234567Z FAIL src/a.test.ts"],
  ])("%s is a test failure", (_name, text) => {
    expect(hasTestFailure(text)).toBe(true);
  });

  test.each([
    ["Maven Surefire, all passed", "[INFO] Tests run: 12, Failures: 0, Errors: 0, Skipped: 1"],
    ["dotnet test, all passed", "Passed!  - Failed:     0, Passed:    42, Skipped:     0, Total:    42"],
    ["RSpec, all passed", "12 examples, 0 failures"],
    ["Minitest, all passed", "9 runs, 14 assertions, 0 failures, 0 errors, 0 skips"],
    ["Gradle, a task", "> Task :test FAILED"],
  ])("%s is not", (_name, text) => {
    expect(hasTestFailure(text)).toBe(false);
  });
});
