/**
 * The disk filling up, as the runner, git, npm, pip, Docker/BuildKit, the
 * linkers and rustc print ENOSPC ("No space left on device").
 */
import type { InfraFamily } from "./family.js";

export const DISK_FAMILIES: readonly InfraFamily[] = [
  // GitHub Actions runner (.NET) failing to write its own diagnostic log: the runner's disk is full.
  // https://github.com/actions/runner-images/issues/10699 · https://github.com/actions/runner/issues/1807
  // https://github.com/marrlab/DomainLab/issues/277
  {
    family: "disk-full-runner",
    description: "the Actions runner could not write its own files: the machine's disk is full",
    scope: "runner",
    patterns: [
      /^(?:Unhandled exception\. )?System\.IO\.IOException: No space left on device\b/,
      /^No space left on device : '[^']+'$/,
    ],
    samples: [
      "System.IO.IOException: No space left on device : " +
        "'/home/runner/runners/2.319.1/_diag/Worker_20240929-071716-utc.log'",
      "Unhandled exception. System.IO.IOException: No space left on device : " +
        "'/actions-runner/_diag/Runner_20220913-135355-utc.log'",
      "Error: 23-07-26T15:43:03.7046912Z ##[error]No space left on device : '/home/runner/runners/2.306.0/" +
        "_diag/pages/ff19b11a-bf94-41ea-b14f-e1a6042dfd23_210bfe07-8b4d-5520-d98c-37a82dddc51d_1.log'",
    ],
    counterparts: [
      // The runner's warning (src/Runner.Worker/JobExtension.cs): space is low, the job goes on; whatever fails
      // next says why. https://github.com/actions/runner-images/issues/8166
      "You are running out of disk space. The runner will stop working when the machine runs out of disk space. " +
        "Free space left: 32 MB",
      "AssertionError: expected 'No space left on device' to equal 'ok'",
    ],
  },
  // npm, pip, git, Docker/BuildKit, the linkers and rustc reporting ENOSPC.
  // https://github.com/npm/npm/issues/9104 · https://github.com/Rich-Harris/packd/issues/159
  // https://github.com/npm/cli/issues/1805
  // https://github.com/Tkd-Alex/Twitch-Channel-Points-Miner-v2/issues/460
  // https://github.com/adoptium/temurin-build/issues/4311
  // https://github.com/satackey/action-docker-layer-caching/issues/78
  // https://github.com/GaloisInc/crucible/issues/1175
  // git: https://github.com/renovatebot/renovate/issues/3449
  // https://github.com/YannickRe/azuredevops-buildagents/issues/79
  // BuildKit: https://github.com/harvard-lil/perma/pull/3388 · https://github.com/guacsec/guac/issues/2832
  // (in the last, goreleaser's "│ " precedes Docker's line; the sample is Docker's part)
  // GNU ld (through rustc's "= note: "): https://github.com/apache/arrow-rs/issues/1993
  // https://github.com/apache/datafusion/issues/2947
  // Go's linker: https://github.com/open-telemetry/opentelemetry-collector-contrib/issues/44291
  // LLVM and rustc: https://github.com/aya-rs/bpf-linker/pull/295
  // https://github.com/project-chip/connectedhomeip/issues/28242
  {
    family: "disk-full",
    description: "a package manager, git, Docker, a linker or a compiler ran out of disk space",
    scope: "tool",
    patterns: [
      /^npm (?:ERR!|error) code ENOSPC$/,
      /^npm (?:ERR!|error|WARN)(?: \w+)? ENOSPC: no space left on device\b/,
      new RegExp(
        String.raw`^ERROR: Could not install packages due to an (?:OSError|EnvironmentError): ` +
          String.raw`\[Errno 28\] No space left on device$`,
      ),
      new RegExp(
        String.raw`^(?:docker: |Error response from daemon: |failed to register layer: |#\d+ ERROR: |` +
          String.raw`(?:ERROR: )?failed to (?:build: failed to )?solve: ).*: no space left on device$`,
      ),
      /^fatal: (?:write error|cannot create directory at '[^']*'): No space left on device$/,
      /^(?:= note: )?(?:\S*\/)?ld(?:\.\w+)?: final link failed: No space left on device$/,
      /^\S*\/link: mapping output file failed: no space left on device$/,
      /^(?:rustc-)?LLVM ERROR: IO failure on output stream: No space left on device$/,
      /^(?:cargo:warning=)?error: .+: No space left on device \(os error 28\)$/,
    ],
    samples: [
      "npm ERR! code ENOSPC",
      "npm ERR! nospc ENOSPC: no space left on device, write",
      "npm WARN tar ENOSPC: no space left on device, write",
      "ERROR: Could not install packages due to an OSError: [Errno 28] No space left on device",
      "docker: failed to register layer: " +
        "write /usr/local/gcc13/libexec/gcc/x86_64-pc-linux-gnu/13.2.0/f951: no space left on device",
      "Error response from daemon: " +
        "write /var/lib/docker/tmp/docker-export-122249911/afb84dc4c4395339966/layer.tar: no space left on device",
      "#55 ERROR: write /usr/local/rustup/toolchains/nightly-2023-01-23-x86_64-unknown-linux-gnu/lib/" +
        "rustlib/x86_64-unknown-linux-gnu/lib/librustc_macros-1f5c22ed96efe43a.so: no space left on device",
      "ERROR: failed to solve: failed to create temp dir: mkdir /tmp/containerd-mount4076981537: " +
        "no space left on device",
      "ERROR: failed to build: failed to solve: ResourceExhausted: write " +
        "/var/lib/docker/overlay2/yp9tg0uq1ufym66lbal7o82n2/diff/guacone-linux-arm64: no space left on device",
      "fatal: write error: No space left on device",
      "fatal: cannot create directory at '*****************************': No space left on device",
      "/usr/bin/ld: final link failed: No space left on device",
      "  = note: /usr/bin/ld: final link failed: No space left on device",
      "/opt/hostedtoolcache/go/1.24.10/x64/pkg/tool/linux_amd64/link: mapping output file failed: " +
        "no space left on device",
      "rustc-LLVM ERROR: IO failure on output stream: No space left on device",
      "LLVM ERROR: IO failure on output stream: No space left on device",
      "cargo:warning=error: failed to write /tmp/rustczv1z8A/lib.rmeta: No space left on device (os error 28)",
    ],
    counterparts: [
      '--- FAIL: TestDiskFull (0.00s)\n    disk_test.go:12: got "no space left on device", want nil\n' +
        "FAIL\nFAIL\texample.com/disk\t0.004s",
      "FAILED tests/test_cache.py::test_full_disk - OSError: [Errno 28] No space left on device",
      // jest's watcher hitting the inotify limit: a setting of the machine's kernel, not its disk.
      "Error: ENOSPC: System limit for number of file watchers reached, watch '/home/runner/work/app/src'",
      "ENOSPC",
    ],
  },
];
