/**
 * Distribution mirrors answering 5xx, timing out or hanging up, as apt, dnf
 * (librepo) and apk print it when they give up. A 404 (a stale index: run
 * `apt-get update`), a package that does not exist, an end-of-life
 * repository, and the warnings of a mirror skipped are not here.
 */
import type { InfraFamily } from "./family.js";

export const OS_PACKAGE_FAMILIES: readonly InfraFamily[] = [
  // apt: "Failed to fetch %s  %s" (apt-get) with the method's reason: the HTTP status as "503  Service
  // Unavailable", connect.cc's "Could not connect to %s:%s (%s), connection timed out" and "Unable to connect
  // to %s:%s:", each followed by " [IP: …]" when known. Name resolution is the dns family's.
  // https://github.com/Debian/apt/blob/main/methods/connect.cc
  // https://github.com/ros-industrial/industrial_ci/issues/384 · https://github.com/uccser/cs-unplugged/issues/351
  // https://github.com/openthread/openthread/issues/4799 · https://github.com/actions/runner-images/issues/7603
  // https://github.com/sipcapture/homer5-docker/issues/21 · https://github.com/python-pillow/Pillow/issues/4508
  {
    family: "apt",
    description: "an apt mirror answered 5xx, timed out or hung up",
    scope: "tool",
    patterns: [
      new RegExp(
        String.raw`^E: Failed to fetch \S+ {2}(?:5\d\d {2}[^\[]*?|Could not connect to \S+ \([^)]*\),? ` +
          String.raw`connection timed out|Unable to connect to \S+:|Connection failed|Connection timed out|` +
          String.raw`Error reading from server\. Remote end closed connection)(?: \[IP: [^\]]+\])?$`,
      ),
    ],
    samples: [
      "E: Failed to fetch http://archive.ubuntu.com/ubuntu/pool/main/g/gcc-defaults/gcc_5.3.1-1ubuntu1_amd64.deb  " +
        "503  Service Unavailable [IP: 91.189.91.23 80]",
      "E: Failed to fetch http://deb.debian.org/debian/pool/main/g/gcc-defaults/g++_6.3.0-4_amd64.deb  " +
        "503  Service Temporarily Unavailable [IP: 52.84.0.142 80]",
      "E: Failed to fetch http://azure.archive.ubuntu.com/ubuntu/pool/main/g/glibc/libc6-dev-i386_2.27-" +
        "3ubuntu1_amd64.deb  Could not connect to azure.archive.ubuntu.com:80 (52.177.174.250), connection timed out",
      "E: Failed to fetch http://azure.archive.ubuntu.com/ubuntu/pool/universe/g/gst-plugins-bad1.0/libgstreamer-" +
        "plugins-bad1.0-0_1.20.3-0ubuntu1_amd64.deb  Unable to connect to azure.archive.ubuntu.com:http: " +
        "[IP: 52.252.75.106 80]",
      "E: Failed to fetch http://httpredir.debian.org/debian/pool/main/libs/libsub-name-perl/libsub-name-perl_0.12-" +
        "1_amd64.deb  Error reading from server. Remote end closed connection [IP: 128.31.0.66 80]",
      "2020-04-01T08:23:23.9758772Z E: Failed to fetch http://azure.archive.ubuntu.com/ubuntu/pool/main/b/blt/" +
        "tk8.6-blt2.5_2.5.3+dfsg-4_amd64.deb  Could not connect to azure.archive.ubuntu.com:80 (52.177.174.250), " +
        "connection timed out",
    ],
    counterparts: [
      // https://github.com/actions/runner-images/issues/3433: the index is stale; the workflow must update it.
      "E: Failed to fetch http://azure.archive.ubuntu.com/ubuntu/pool/main/c/ceph/librados2_15.2.8-0ubuntu0.20.04.1" +
        "_amd64.deb  404  Not Found [IP: 52.250.76.244 80]",
      "E: Unable to locate package libssl1.0-dev",
      "E: Unable to fetch some archives, maybe run apt-get update or try with --fix-missing?",
    ],
  },
  // dnf (librepo): "Failed to download metadata for repo '%s': Cannot prepare internal mirrorlist: %s", the
  // cause being librepo's "Status code: %ld for %s (IP: %s)" (downloader.c). The per-mirror lines before it
  // ("  - Curl error (28): …") are also printed for a repository dnf skips (skip_if_unavailable).
  // https://github.com/rpm-software-management/librepo/blob/master/librepo/downloader.c
  // https://github.com/remicollet/remirepo/issues/317 · https://github.com/syslog-ng/syslog-ng/issues/3882
  {
    family: "dnf",
    description: "a dnf/yum mirror list answered 5xx",
    scope: "tool",
    patterns: [
      new RegExp(
        String.raw`^Failed to download metadata for repo '[^']+': Cannot (?:prepare internal mirrorlist|` +
          String.raw`download repomd\.xml): Status code: 5\d\d for \S+(?: \(IP: [^)]*\))?$`,
      ),
    ],
    samples: [
      "Error: Failed to download metadata for repo 'remi': Cannot prepare internal mirrorlist: Status code: 503 " +
        "for http://cdn.remirepo.net/enterprise/8/remi/x86_64/mirror (IP: 213.246.39.135)",
      "2022-01-18T03:05:09.6241066Z Error: Failed to download metadata for repo 'fedora-cisco-openh264': Cannot " +
        "prepare internal mirrorlist: Status code: 503 for https://mirrors.fedoraproject.org/metalink?" +
        "repo=fedora-cisco-openh264-33&arch=x86_64 (IP: 209.132.190.2)",
    ],
    counterparts: [
      // https://github.com/WasmEdge/WasmEdge/issues/1139: CentOS 8 reached its end of life.
      "Error: Failed to download metadata for repo 'appstream': Cannot prepare internal mirrorlist: " +
        "No URLs in mirrorlist",
      // https://github.com/mikeeq/mbp-fedora/issues/61: an empty release version in the repository URL.
      "Error: Failed to download metadata for repo 'fedora': Cannot prepare internal mirrorlist: Status code: 404 " +
        "for https://mirrors.fedoraproject.org/metalink?repo=fedora-&arch=x86_64 (IP: 38.145.60.21)",
      "Error: Unable to find a match: no-such-package",
    ],
  },
  // apk (apk-tools 2, src/print.c): EAGAIN is "temporary error (try again later)", printed after the
  // repository's URL. "WARNING: Ignoring …" is apk skipping a repository; what fails next says whether it mattered.
  // https://github.com/alpinelinux/apk-tools/blob/v2.14.0/src/print.c
  // https://github.com/gliderlabs/docker-alpine/issues/264
  // https://github.com/timescale/timescaledb-docker/issues/211
  // https://github.com/gliderlabs/docker-alpine/issues/456
  {
    family: "apk",
    description: "an Alpine mirror failed temporarily",
    scope: "tool",
    patterns: [/^ERROR: https?:\/\/\S+: temporary error \(try again later\)$/],
    samples: [
      "ERROR: http://dl-cdn.alpinelinux.org/alpine/v3.4/main: temporary error (try again later)",
      "ERROR: https://dl-cdn.alpinelinux.org/alpine/v3.16/main: temporary error (try again later)",
      "ERROR: http://dl-3.alpinelinux.org/alpine/edge/testing/: temporary error (try again later)",
    ],
    counterparts: [
      "ERROR: unable to select packages:\n  bash5 (no such package):\n    required by: world[bash5]",
      // https://github.com/nodejs/docker-node/issues/659
      "ERROR: unsatisfiable constraints:\n  curl (missing):\n    required by: world[curl]",
    ],
  },
];
