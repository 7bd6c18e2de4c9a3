/**
 * DATABASE_URL checked the way the PostgreSQL driver will read it, so that a
 * URL the driver would misread stops start-up as a configuration error
 * instead of reaching the driver. The driver parses the URL with the WHATWG
 * parser (pg-connection-string), where the host starts after the last `@`
 * *before the first `/`, `?` or `#`*; the masking of URLs in messages treats
 * everything up to the last `@` as user information. A password holding a
 * raw `/`, `?` or `#` before an `@` splits the two: the driver connected to a
 * "host" cut out of the password and named it in its error
 * ("Can't reach database server at Zr9x"), a fragment of the secret that no
 * masking could catch. Such a URL is refused here, and nothing that parses
 * differently from how it is masked ever reaches the driver.
 */

const EXAMPLE = "postgresql://user:password@host:5432/database";

/** Whether `url` is one the service accepts: null when it is, else what is wrong (after "DATABASE_URL "). */
export function databaseUrlProblem(url: string): string | null {
  if (url.startsWith("file:")) return url.length > "file:".length ? null : "must name a file after file:";
  if (!/^postgres(ql)?:\/\/[^/]+\/[^/?]+/.test(url))
    return `must be file:<path> for SQLite or ${EXAMPLE}; leave it unset for ` + "the embedded database under ./data/";
  const afterScheme = url.indexOf("//") + 2;
  const authorityEnd = firstOf(url, ["/", "?", "#"], afterScheme);
  if (url.lastIndexOf("@") > authorityEnd)
    return (
      "must have / ? # and @ in its user name and password percent-encoded (%2F %3F %23 %40, " +
      "as encodeURIComponent does): as written, part of the password would be read as the host"
    );
  const authority = url.slice(afterScheme, authorityEnd);
  // After the last `@` of the authority: the host and port, which are not secret.
  const hostPort = authority.slice(authority.lastIndexOf("@") + 1);
  const port = /^(?:\[[^\]]*\]|[^:]*)(?::(.*))?$/.exec(hostPort)?.[1];
  if (port !== undefined && port !== "" && !(/^[0-9]+$/.test(port) && Number(port) >= 1 && Number(port) <= 65535))
    return `must have a port number from 1 to 65535 after the host, not "${port}"`;
  if (!parses(url))
    return (
      `must be a valid URL, e.g. ${EXAMPLE}: an IPv6 host goes in [brackets], ` +
      "and a user name or password holding : / ? # @ or % percent-encodes them"
    );
  return null;
}

/** As the driver parses it: a URL with credentials and no host (`user:pw@/db`) is retried with a placeholder host. */
function parses(url: string): boolean {
  return URL.canParse(url) || URL.canParse(url.replace("@/", "@placeholder/"));
}

function firstOf(text: string, chars: string[], from: number): number {
  const found = chars.map((c) => text.indexOf(c, from)).filter((i) => i !== -1);
  return found.length ? Math.min(...found) : text.length;
}
