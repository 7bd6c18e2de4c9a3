/**
 * The machine running out of memory, in every form a build prints it.
 *
 * - `oom-kill` (runner): the kernel's OOM killer, the step's shell reporting
 *   the SIGKILL, the runner's exit code 137. The machine under the job ran dry.
 * - `killed` (tool): a build tool reporting that its child died of SIGKILL:
 *   make's `Error 137`, gcc's "Killed signal terminated program cc1plus",
 *   cargo's `(signal: 9, SIGKILL: kill)`, npm, yarn, Gradle's test executor.
 * - `out-of-memory` (tool): the allocator refusing: cc1plus "out of memory
 *   allocating", the JVM unable to commit native memory.
 *
 * A process reaching its own heap limit is not here, and deliberately so:
 * V8's "JavaScript heap out of memory" and the JVM's
 * `java.lang.OutOfMemoryError: Java heap space` report a limit the repository
 * sets (`--max-old-space-size`, `-Xmx`, `org.gradle.jvmargs`), or a leak in the
 * code under test. Gradle says as much ("The project memory settings are likely
 * not configured or are configured to an insufficient value"). A rerun hits
 * the same limit; a fix raises it. They are the counterparts of `out-of-memory`.
 */
import { KERNEL, type InfraFamily } from "./family.js";

export const MEMORY_FAMILIES: readonly InfraFamily[] = [
  // The kernel OOM killer (mm/oom_kill.c: "%s: Killed process %d (%s) ..." with "Out of memory" or
  // "Memory cgroup out of memory"; dump_header: "%s invoked oom-killer: gfp_mask=%#x(%pGg), ..."),
  // bash reporting the SIGKILL, and the runner's step result for 128+9.
  // Exit code 143 (SIGTERM) is not here: alone it does not say who sent the signal.
  // https://github.com/torvalds/linux/blob/master/mm/oom_kill.c
  // https://github.com/testdrivenio/fastapi-tdd-docker/issues/6
  // https://github.com/gitcoinco/grants-stack-indexer/issues/130
  // https://github.com/airalab/robonomics/issues/34 · https://github.com/broadinstitute/gene-hints/issues/25
  // (in the last, a tqdm progress line written with \r precedes bash's line; the sample is bash's part)
  // https://github.com/reportportal/kubernetes/issues/203 · https://github.com/kubernetes/kubernetes/issues/56891
  // https://github.com/docker/for-linux/issues/1001
  {
    family: "oom-kill",
    description: "the process was killed by SIGKILL (exit code 137), in practice the out-of-memory killer",
    scope: "runner",
    patterns: [
      /^Process completed with exit code 137\.?$/,
      new RegExp(String.raw`^${KERNEL}(?:Memory cgroup out of memory|Out of memory): Kill(?:ed)? process \d+ \(`),
      new RegExp(String.raw`^${KERNEL}\S+ invoked oom-killer: gfp_mask=0x[0-9a-f]+`),
      /^\S+: line \d+: +\d+ Killed {2,}\S/,
    ],
    samples: [
      "Error: Process completed with exit code 137.",
      "Out of memory: Killed process 362 (node) total-vm:22457500kB, anon-rss:691864kB, " +
        "file-rss:0kB, shmem-rss:0kB, UID:0 pgtables:19376kB oom_score_adj:0",
      "[1262320.621442] Out of memory: Kill process 23983 (robonomics) score 844 or sacrifice child",
      "/home/runner/work/_temp/3996971a-eb39-4aaf-91b7-d4ed401873fb.sh: " +
        "line 1:  1619 Killed                  python gene_hints/gene_hints.py",
      "[ 7063.247407] Memory cgroup out of memory: Killed process 63214 (uwsgi) total-vm:3149468kB, " +
        "anon-rss:164992kB, file-rss:52176kB, shmem-rss:92kB, UID:0 pgtables:1372kB oom_score_adj:986",
      "[ 7093.543707] uwsgi invoked oom-killer: gfp_mask=0xcc0(GFP_KERNEL), order=0, oom_score_adj=986",
      "[Thu Dec  7 00:05:15 2017] Memory cgroup out of memory: Kill process 24572 (java) score 0 or sacrifice child",
      "May 15 23:01:53 ubuntu-s-1vcpu-2gb-ams3-01 kernel: [  152.700479] Memory cgroup out of memory: " +
        "Kill process 4142 (python3) score 68 or sacrifice child",
    ],
    counterparts: [
      "Error: Process completed with exit code 143.",
      " FAIL  src/exit.test.ts > maps exit code 137 to oom\n × maps exit code 137 to oom 3ms",
      // A test asserting on the kernel's line: jest quotes it, indented, in its diff.
      "  ● parses the kernel log › finds the killed process\n\n    expect(received).toEqual(expected)\n\n" +
        "    - Expected  - 1\n    + Received  + 1\n\n" +
        "      Out of memory: Killed process 362 (node) total-vm:22457500kB, anon-rss:691864kB\n" +
        "    - killed: node\n    + killed: null",
    ],
  },
  // Build tools reporting a child killed by SIGKILL. GNU make: "%s[%s: %s] Error %d" (job.c); gcc's
  // driver: "%s signal terminated program %s" (gcc.cc), older "Killed (program cc1plus)"; cargo-util
  // process_error.rs: "(signal: 9, SIGKILL: kill)"; npm's exit status; yarn v1; Gradle's ExecHandle
  // "Process '%s' finished with non-zero exit value %d" and DaemonDisappearedException.
  // https://github.com/rust-lang/rust/issues/20577 · https://github.com/crosstool-ng/crosstool-ng/issues/708
  // https://github.com/hoytech/strfry/issues/41 · https://github.com/fuzziqersoftware/newserv/issues/60
  // https://github.com/ptitSeb/box64/issues/250 · https://github.com/emscripten-core/emscripten/issues/4480
  // https://github.com/naim94a/lumen/issues/28 · https://github.com/nimiq/core-js/issues/295
  // https://github.com/sxfad/react-admin/issues/11 · https://github.com/UnitTestBot/UTBotJava/issues/561
  // https://github.com/actions/runner/issues/2503 · https://github.com/cgeo/cgeo/issues/5963
  {
    family: "killed",
    description: "a build tool reports its child was killed by SIGKILL (exit 137), in practice the OOM killer",
    scope: "tool",
    patterns: [
      /^make(?:\[\d+\])?: \*\*\* \[[^\]]+\] Error 137$/,
      /^\S+: (?:fatal error: Killed signal terminated program \S+|internal compiler error: Killed \(program \S+\))$/,
      /^process didn't exit successfully: .* \(signal: 9, SIGKILL: kill\)$/,
      /^npm (?:ERR!|error) (?:errno 137|Exit status 137|signal SIGKILL)$/,
      /^error Command failed with signal "SIGKILL"\.$/,
      /^(?:> )?Process '[^']+' finished with non-zero exit value 137$/,
      new RegExp(
        String.raw`^(?:org\.gradle\.launcher\.daemon\.client\.DaemonDisappearedException: )?` +
          String.raw`Gradle build daemon disappeared unexpectedly \(it may have been killed or may have crashed\)$`,
      ),
    ],
    samples: [
      "make: *** [x86_64-unknown-linux-gnu/stage0/lib/rustlib/x86_64-unknown-linux-gnu/lib/stamp.rustc] Error 137",
      "make[2]: *** [s-automata] Error 137",
      "g++: fatal error: Killed signal terminated program cc1plus",
      "c++: fatal error: Killed signal terminated program cc1plus",
      "cc: fatal error: Killed signal terminated program cc1",
      "c++: internal compiler error: Killed (program cc1plus)",
      "  process didn't exit successfully: `rustc --crate-name lumen --edition=2018 lumen/src/main.rs " +
        "--error-format=json --json=diagnostic-rendered-ansi --crate-type bin --emit=dep-info,link -C opt-level=3 " +
        "-C panic=abort -C lto=fat -C metadata=754aa585402be938 -C extra-filename=-754aa585402be938 " +
        "--out-dir /lumen/target/release/deps -L dependency=/lumen/target/release/deps " +
        "--extern clap=/lumen/target/release/deps/libclap-bd9defc126bfcc6d.rlib` (signal: 9, SIGKILL: kill)",
      "npm ERR! errno 137",
      "npm ERR! Exit status 137",
      'error Command failed with signal "SIGKILL".',
      "> Process 'Gradle Test Executor 4' finished with non-zero exit value 137",
      "Gradle build daemon disappeared unexpectedly (it may have been killed or may have crashed)",
      "org.gradle.launcher.daemon.client.DaemonDisappearedException: Gradle build daemon disappeared " +
        "unexpectedly (it may have been killed or may have crashed)",
    ],
    counterparts: [
      "make: *** [Makefile:160: all] Error 2",
      "npm ERR! code ELIFECYCLE\nnpm ERR! errno 1",
      "npm ERR! signal SIGTERM",
      // A test binary aborting (a bug), and gcc crashing on the source (a compiler bug): neither is the machine.
      "  process didn't exit successfully: `/home/runner/work/app/target/debug/deps/app-1a2b3c4d` " +
        "(signal: 6, SIGABRT: process abort signal)",
      "c++: internal compiler error: Segmentation fault signal terminated program cc1plus",
      "> Process 'Gradle Test Executor 28' finished with non-zero exit value 1",
    ],
  },
  // The allocator refusing. libiberty's xmalloc_failed: "%s%sout of memory allocating %lu bytes after a
  // total of %lu bytes" (what cc1, cc1plus, ld and as print); HotSpot's os::commit_memory warning and
  // vmError's "There is insufficient memory for the Java Runtime Environment to continue."
  // An absurd request (exabytes, from a corrupt input file) is not the machine: at most 12 digits.
  // https://github.com/gcc-mirror/gcc/blob/master/libiberty/xmalloc.c
  // https://github.com/bitwiseworks/gcc-os2/issues/36 · https://github.com/chung-leong/qb/issues/7
  // https://github.com/jitpack/jitpack.io/issues/126 · https://github.com/kiegroup/kie-wb-common/pull/3099
  // https://github.com/gradle/gradle-profiler/issues/203
  {
    family: "out-of-memory",
    description: "the machine had no memory left to give: a compiler's or the JVM's allocation failed",
    scope: "tool",
    patterns: [
      new RegExp(
        String.raw`^(?:cc1(?:plus|obj)?|lto1|f951|ld|as)(?:\.exe)?: out of memory allocating \d{1,12} bytes` +
          String.raw`(?: after a total of \d{1,12} bytes)?$`,
      ),
      /^(?:\[\w+\] )?# There is insufficient memory for the Java Runtime Environment to continue\.$/,
      new RegExp(
        String.raw`^(?:\[\w+\] )?(?:OpenJDK|Java HotSpot\(TM\)) 64-Bit Server VM warning: INFO: ` +
          String.raw`os::commit_memory\(0x[0-9a-f]+, \d+, \d\) failed; error='Cannot allocate memory' \(errno=12\)$`,
      ),
    ],
    samples: [
      "cc1plus.exe: out of memory allocating 65536 bytes after a total of 284622848 bytes",
      "cc1: out of memory allocating 408 bytes after a total of 908787712 bytes",
      "# There is insufficient memory for the Java Runtime Environment to continue.",
      "[INFO] # There is insufficient memory for the Java Runtime Environment to continue.",
      "Java HotSpot(TM) 64-Bit Server VM warning: INFO: os::commit_memory(0x0000000100d46000, 131072, 0) " +
        "failed; error='Cannot allocate memory' (errno=12)",
      "[ERROR] Java HotSpot(TM) 64-Bit Server VM warning: INFO: os::commit_memory(0x0000000415580000, " +
        "738197504, 0) failed; error='Cannot allocate memory' (errno=12)",
    ],
    counterparts: [
      // Heap limits the repository sets, or a leak: raised or fixed in the repository, not by a rerun.
      // https://github.com/dept/easy-genomics/pull/160 · https://github.com/cdklabs/jsii-docgen/pull/916
      // https://github.com/micrometer-metrics/micrometer/pull/3114 · https://github.com/apache/iceberg/issues/1846
      // https://github.com/bazelbuild/bazel/issues/5180
      "FATAL ERROR: Reached heap limit Allocation failed - JavaScript heap out of memory",
      "FATAL ERROR: Ineffective mark-compacts near heap limit Allocation failed - JavaScript heap out of memory",
      'Exception in thread "Daemon client event forwarder" java.lang.OutOfMemoryError: Java heap space',
      "Expiring Daemon because JVM heap space is exhausted",
      "The system is out of resources.\nConsult the following stack trace for details.\n" +
        "java.lang.OutOfMemoryError: GC overhead limit exceeded",
      // https://github.com/ClickHouse/ClickHouse/issues/26728: a corrupt archive asks for exabytes.
      "/opt/rh/devtoolset-10/root/usr/bin/ranlib: out of memory allocating 6873453400573489713 bytes " +
        "after a total of 16908288 bytes",
    ],
  },
];
