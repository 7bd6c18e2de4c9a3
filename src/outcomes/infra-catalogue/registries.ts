/**
 * Package indexes of Python, Rust, Go and Ruby answering 5xx or timing out,
 * as pip, cargo, the go command and RubyGems/Bundler print it. A 404 or 410
 * (no such version), a 403, and a retry the tool recovered from are not here:
 * a rerun would get the same answer, or the job went on.
 */
import type { InfraFamily } from "./family.js";

export const REGISTRY_FAMILIES: readonly InfraFamily[] = [
  // pip: network/download.py logs "HTTP error %s while getting %s"; operations/prepare.py raises
  // "Could not install requirement {req} because of HTTP error {exc} for URL {link}", where exc is
  // network/utils.py's "{status} Server Error: {reason} for url: {url}"; the vendored urllib3 raises
  // ReadTimeoutError "Read timed out." when the index stops sending.
  // https://github.com/pypa/pip/blob/main/src/pip/_internal/network/download.py
  // https://github.com/RobotLocomotion/pytorch-dense-correspondence/issues/42
  // https://github.com/SkBlaz/py3plex/issues/430
  // https://github.com/jschrewe/django-mongodbforms/issues/58 · https://github.com/HuangCongQing/Python/issues/6
  // https://github.com/conbench/conbench/issues/815 (BuildKit's "#10 18.23 " precedes pip's line; the sample is pip's)
  {
    family: "pypi",
    description: "PyPI (or a pip index) answered 5xx or stopped answering",
    scope: "tool",
    patterns: [
      /^(?:ERROR: )?HTTP error 5\d\d while getting https?:\/\/\S+/,
      /^(?:ERROR: )?Could not install requirement .+? because of (?:HTTP )?error (?:HTTP Error )?5\d\d\b/,
      new RegExp(
        String.raw`^pip\._vendor\.urllib3\.exceptions\.ReadTimeoutError: HTTPSConnectionPool\(host='[^']+', ` +
          String.raw`port=\d+\): Read timed out\.`,
      ),
    ],
    samples: [
      "  HTTP error 503 while getting https://files.pythonhosted.org/packages/62/a1/" +
        "0d452b6901b0157a0134fd27ba89bf95a857fbda64ba52e1ca2cf61d8412/pip-10.0.0-py2.py3-none-any.whl" +
        "#sha256=86a60a96d85e329962a9e6f6af612cbc11106293dbc83f119802b5bee9874cf3 (from https://pypi.org/simple/pip/)",
      "  ERROR: HTTP error 502 while getting https://files.pythonhosted.org/packages/a3/dc/" +
        "17031897dae0efacfea57dfd3a82fdd2a2aeb58e0ff71b77b87e44edc772/setuptools-80.9.0-py3-none-any.whl " +
        "(from https://pypi.org/simple/setuptools/) (requires-python:>=3.9)",
      "ERROR: Could not install requirement setuptools from https://files.pythonhosted.org/packages/a3/dc/" +
        "17031897dae0efacfea57dfd3a82fdd2a2aeb58e0ff71b77b87e44edc772/setuptools-80.9.0-py3-none-any.whl because " +
        "of HTTP error 502 Server Error: Gateway Error for url: https://files.pythonhosted.org/packages/a3/dc/" +
        "17031897dae0efacfea57dfd3a82fdd2a2aeb58e0ff71b77b87e44edc772/setuptools-80.9.0-py3-none-any.whl for URL " +
        "https://files.pythonhosted.org/packages/a3/dc/17031897dae0efacfea57dfd3a82fdd2a2aeb58e0ff71b77b87e44edc772/" +
        "setuptools-80.9.0-py3-none-any.whl (from https://pypi.org/simple/setuptools/) (requires-python:>=3.9)",
      "Could not install requirement mongodbforms because of HTTP error HTTP Error 503: Backend is unhealthy for " +
        "URL https://pypi.python.org/packages/source/m/mongodbforms/mongodbforms-0.2.2.tar.gz" +
        "#md5=8c608375e66791962966becd62cbaf10 (from https://pypi.python.org/simple/mongodbforms/)",
      "pip._vendor.urllib3.exceptions.ReadTimeoutError: HTTPSConnectionPool(host='files.pythonhosted.org', " +
        "port=443): Read timed out.",
    ],
    counterparts: [
      // https://github.com/tox-dev/tox/issues/789: a 404 is a missing file, not an outage.
      "  HTTP error 404 while getting https://files.pythonhosted.org/packages/e6/41/" +
        "4dcfd713282bf3213b0384320fa8841e4db032ddcb80bc08a540159d42a8/tox-3.0.0-py2.py3-none-any.whl" +
        "#sha256=9ee7de958a43806402a38c0d2aa07fa8553f4d2c20a15b140e9f771c2afeade0 (from https://pypi.org/simple/tox/)",
      // pip's resolver when the name or the version is wrong (resolution/resolvelib/factory.py).
      "ERROR: Could not find a version that satisfies the requirement reqeusts==2.99 (from versions: none)\n" +
        "ERROR: No matching distribution found for reqeusts==2.99",
      // https://github.com/pypi/warehouse/issues/3708: urllib3 retrying; the install may well go on.
      "  Retrying (Retry(total=4, connect=None, read=None, redirect=None, status=None)) after connection broken " +
        "by 'ReadTimeoutError(\"HTTPSConnectionPool(host='files.pythonhosted.org', port=443): Read timed out. " +
        "(read timeout=15)\",)': /packages/56/28/45a9d3bba612fc3f47ef085a14446a4f68f45ce10070562edff1e9291150/" +
        "apache_libcloud-2.3.0-py2.py3-none-any.whl",
      "FAILED tests/test_mirror.py::test_handles_503_from_registry - AssertionError: " +
        "HTTP error 503 while getting https://files.pythonhosted.org/x.whl",
    ],
  },
  // cargo: util/errors.rs renders HttpNotSuccessful as "failed to get successful HTTP response from `{url}`
  // ({ip}), got {code}" (older cargo: "failed to get 200 response from `{url}`, got {code}"); curl's errors
  // reach it as curl-rust's "[{code}] {curl_easy_strerror}" (curl lib/strerror.c). Retries print
  // "warning: spurious network error (N tries remaining): …" first; only the final error is matched.
  // https://github.com/rust-lang/cargo/blob/master/src/util/errors.rs
  // https://github.com/rust-lang/crates.io/issues/12482 (BuildKit's "#16 14.77 " precedes cargo's line)
  // https://github.com/rust-lang/crates.io/issues/1808 · https://github.com/kbknapp/cargo-outdated/issues/212
  // https://github.com/ArturKovacs/emulsion/pull/150
  {
    family: "crates",
    description: "crates.io (or a cargo registry) answered 5xx or timed out",
    scope: "tool",
    patterns: [
      /^failed to get (?:successful HTTP response|200 response) from `[^`]+`(?: \([^)]*\))?, got 5\d\d$/,
      new RegExp(
        String.raw`^\[(?:7|16|18|28|35|52|55|56|92)\] (?:Couldn't connect to server|Timeout was reached|` +
          String.raw`SSL connect error|Error in the HTTP2 framing layer|Transferred a partial file|` +
          String.raw`Server returned nothing \(no headers, no data\)|Failed sending data to the peer|` +
          String.raw`Failure when receiving data from the peer|Stream error in the HTTP/2 framing layer)\b`,
      ),
    ],
    samples: [
      "  failed to get successful HTTP response from `https://index.crates.io/go/og/google-api-proto` " +
        "(151.101.1.91), got 503",
      "  failed to get 200 response from `https://crates.io/api/v1/crates/serde/1.0.99/download`, got 500",
      "  failed to get 200 response from `https://crates.io/api/v1/crates/core-foundation/0.6.4/download`, got 502",
      "  [28] Timeout was reached (download of `khronos_api v3.1.0` failed to transfer more than 10 bytes in 30s)",
    ],
    counterparts: [
      // https://github.com/kbknapp/cargo-outdated/issues/212: cargo retrying; the download may well succeed.
      "warning: spurious network error (2 tries remaining): [28] Timeout was reached (download of " +
        "`arrayref v0.3.6` failed to transfer more than 10 bytes in 30s)",
      // cargo's test suite (tests/testsuite/registry.rs) on the same retry, answered 503.
      "warning: spurious network error (1 try remaining): failed to get successful HTTP response from " +
        "`http://127.0.0.1:[..]/dl/bar/1.0.0/download` (127.0.0.1), got 503",
      "error: no matching package named `serde_jsonn` found",
      "test registry::retries_on_503 ... FAILED\n\ntest result: FAILED. 11 passed; 1 failed; 0 ignored",
    ],
  },
  // The go command: web.HTTPError is "reading {url}: {status}" (cmd/go/internal/web/api.go); a connection
  // that never completed is net/http's `Get "{url}": dial tcp …: i/o timeout`, both after "go: {module}@{v}: ".
  // 404 and 410 mean the version does not exist (GOPROXY falls back on them) and are not matched.
  // https://github.com/golang/go/blob/master/src/cmd/go/internal/web/api.go
  // https://github.com/jmozah/exportSwarmKey/issues/3 · https://github.com/cnotch/ipchub/issues/5
  // https://github.com/testground/testground/issues/1185 · https://github.com/golang/go/issues/70042
  {
    family: "go-modules",
    description: "the Go module proxy or checksum database answered 5xx or did not answer",
    scope: "tool",
    patterns: [
      /^go(?: get| mod download)?: .*: reading https?:\/\/\S+: 5\d\d\b/,
      new RegExp(
        String.raw`^go(?: get)?: .*: Get "?https?://[^"\s]+"?: (?:dial tcp \S+: i/o timeout|` +
          String.raw`net/http: TLS handshake timeout|read tcp \S+: read: connection reset by peer|EOF)$`,
      ),
    ],
    samples: [
      'go: github.com/ethereum/go-ethereum@v1.9.25: Get "https://proxy.golang.org/github.com/ethereum/go-ethereum/' +
        '@v/v1.9.25.mod": dial tcp 142.250.206.209:443: i/o timeout',
      "go: github.com/BurntSushi/toml@v0.3.1: Get https://proxy.golang.org/github.com/%21burnt%21sushi/toml/@v/" +
        "v0.3.1.mod: dial tcp 142.251.43.17:443: i/o timeout",
      "go: github.com/kr/text@v0.2.0/go.mod: verifying module: github.com/kr/text@v0.2.0/go.mod: " +
        'Get "https://sum.golang.org/lookup/github.com/kr/text@v0.2.0": dial tcp 172.217.160.81:443: i/o timeout',
      "go: cuelang.org/go@v0.11.0-alpha.3.0.20241018144220-537f744a9cc7: verifying go.mod: " +
        "cuelang.org/go@v0.11.0-alpha.3.0.20241018144220-537f744a9cc7/go.mod: reading https://sum.golang.org/" +
        "lookup/cuelang.org/go@v0.11.0-alpha.3.0.20241018144220-537f744a9cc7: 500 Internal Server Error",
      'go: cuelang.org/go@v0.10.1: verifying module: cuelang.org/go@v0.10.1: Get "https://sum.golang.org/lookup/' +
        'cuelang.org/go@v0.10.1": EOF',
    ],
    counterparts: [
      // https://github.com/mszostok/codeowners-validator/issues/59 · https://github.com/goproxyio/goproxy/issues/202
      "verifying github.com/mszostok/codeowners-validator@v0.5.1/go.mod: github.com/mszostok/" +
        "codeowners-validator@v0.5.1/go.mod: reading https://sum.golang.org/lookup/github.com/mszostok/" +
        "codeowners-validator@v0.5.1: 410 Gone",
      "go get github.com/goproxyio/goproxy@v1.0.0: github.com/goproxyio/goproxy@v1.0.0: verifying module: " +
        "github.com/goproxyio/goproxy@v1.0.0: reading https://gosum.io/lookup/github.com/goproxyio/goproxy@v1.0.0: " +
        "404 Not Found",
      "--- FAIL: TestProxyRetries (0.00s)\n" +
        '    proxy_test.go:31: got "reading https://proxy.golang.org/x/@v/list: 503 Service Unavailable", want nil',
    ],
  },
  // RubyGems' RemoteFetcher raises FetchError "bad response #{message} #{code}" followed by " (#{uri})"
  // (lib/rubygems/remote_fetcher.rb), which gem and Bundler print; a connection timeout is its Errno.
  // https://github.com/rubygems/rubygems/blob/master/lib/rubygems/remote_fetcher.rb
  // https://github.com/ruby/rubygems/issues/534 · https://github.com/ruby/rubygems/issues/4661
  // https://github.com/Shippable/support/issues/1326 · https://github.com/rubygems/bundler/issues/2421
  {
    family: "rubygems",
    description: "rubygems.org (or a gem source) answered 5xx or timed out",
    scope: "tool",
    patterns: [
      /^(?:Gem::RemoteFetcher::FetchError: )?bad response [A-Z][A-Za-z ]*? 5\d\d\s+\(https?:\/\/[^)\s]+\)$/,
      /^Unable to download data from https?:\/\/\S+ - bad response [A-Z][A-Za-z ]*? 5\d\d \(https?:\/\/[^)\s]+\)$/,
      /^Gem::RemoteFetcher::FetchError: Errno::(?:ETIMEDOUT|ECONNRESET): .* \(https?:\/\/[^)\s]+\)$/,
    ],
    samples: [
      "Gem::RemoteFetcher::FetchError: bad response Service Unavailable 503 " +
        "(http://production.cf.rubygems.org/gems/summon-2.0.5.gem)",
      "    bad response Service Unavailable 503     (http://production.cf.rubygems.org/gems/summon-2.0.5.gem)",
      "          Unable to download data from https://rubygems.org/ - bad response Service Not Found 500 " +
        "(https://rubygems.org/specs.4.8.gz)",
      'Gem::RemoteFetcher::FetchError: Errno::ETIMEDOUT: Connection timed out - connect(2) for "bb-m.rubygems.org" ' +
        "port 443 (https://rubygems.org/gems/fastercsv-1.5.5.gem)",
      "Gem::RemoteFetcher::FetchError: Errno::ETIMEDOUT: Operation timed out " +
        "(https://rubygems.org/gems/net-ssh-2.6.6.gem)",
    ],
    counterparts: [
      // A yanked gem, or a private source without credentials: the same words, a 4xx.
      "Gem::RemoteFetcher::FetchError: bad response Forbidden 403 " +
        "(https://rubygems.org/gems/ffi-1.17.0-x86_64-linux.gem)",
      "Could not find gem 'rails (= 9.9.9)' in rubygems repository https://rubygems.org/ or installed locally.",
      // https://github.com/rubygems/bundler/issues/6231 (its list of gems shortened): Bundler retrying; it went on.
      "Retrying dependency api due to error (2/4): Bundler::HTTPError Network error while fetching " +
        "https://rails-assets.org/api/v1/dependencies?gems=rails-assets-colorbox%2Crails-assets-tether " +
        "(too many connection resets (due to Net::ReadTimeout - Net::ReadTimeout) after 7 requests on " +
        "47013578411360, last used 20.221591058 seconds ago)",
      "rspec ./spec/fetcher_spec.rb:12 # Fetcher retries a bad response Service Unavailable 503\n" +
        "1 example, 1 failure",
    ],
  },
];
