/**
 * Git's smart HTTP protocol at the URLs GitHub serves it
 * (`<host>/<owner>/<repo>.git/info/refs?service=…`, `…/git-upload-pack`,
 * `…/git-receive-pack`), answered by git's own `git http-backend`, run as a
 * CGI program for each request. The fake only authenticates (see auth.ts)
 * and, once a push is in, reads it back into its model before git's answer
 * goes out: when `git push` returns, the REST API already shows the push.
 */
import { spawn } from "node:child_process";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { FakeState, Repo } from "../state.js";
import { authorizeGit, type GitService } from "./auth.js";
import { gitEnv } from "./repository.js";

/** The CGI program; Debian's `git` package installs it here. */
export const HTTP_BACKEND = "/usr/lib/git-core/git-http-backend";

export interface GitRoute {
  owner: string;
  name: string;
  /** what follows the repository in the path */
  rest: "info/refs" | "git-upload-pack" | "git-receive-pack";
}

const GIT_PATH = /^\/([^/]+)\/([^/]+?)(?:\.git)?\/(info\/refs|git-upload-pack|git-receive-pack)$/;

/** `/<owner>/<repo>.git/info/refs` and the like; null for any other path. */
export function matchGitRoute(pathname: string): GitRoute | null {
  const m = GIT_PATH.exec(pathname);
  if (!m) return null;
  return { owner: decodeURIComponent(m[1]!), name: decodeURIComponent(m[2]!), rest: m[3] as GitRoute["rest"] };
}

/** The operation a git request is recorded under (`git:git-receive-pack`), from its path and query. */
export function gitService(route: GitRoute, query: URLSearchParams): GitService {
  if (route.rest !== "info/refs") return route.rest;
  return query.get("service") === "git-receive-pack" ? "git-receive-pack" : "git-upload-pack";
}

export interface GitAnswer {
  status: number;
  /** a refusal's text (what git prints after "remote:") */
  message?: string;
}

/** Answers one git request on `res`; resolves with what was answered once it is sent. */
export async function serveGit(
  state: FakeState,
  route: GitRoute,
  url: URL,
  req: IncomingMessage,
  res: ServerResponse,
  violation: (message: string) => void,
): Promise<GitAnswer> {
  const service = gitService(route, url.searchParams);
  const fullName = `${route.owner}/${route.name}`;
  const repo = state.findRepo(fullName);
  const wrongMethod = route.rest === "info/refs" ? req.method !== "GET" : req.method !== "POST";
  if (wrongMethod || (route.rest === "info/refs" && !url.searchParams.get("service"))) {
    // GitHub speaks only the smart protocol, and each endpoint takes one method
    return refuse(req, res, 404, "Not Found");
  }
  const access = authorizeGit(state, repo, service, req.headers.authorization);
  if (!access.ok) return refuse(req, res, access.status, access.message);
  const git = repo && state.git.of(repo);
  if (!repo || !git) {
    violation(
      `git ${service} for ${fullName}, which is not git-backed (addRepo(name, { git: true }) makes it cloneable)`,
    );
    return refuse(req, res, 404, "Repository not found.");
  }
  return runBackend(
    state,
    repo,
    route,
    url,
    req,
    res,
    access.actor,
    service === "git-receive-pack" && route.rest !== "info/refs",
  );
}

async function refuse(req: IncomingMessage, res: ServerResponse, status: number, message: string): Promise<GitAnswer> {
  req.resume();
  const headers: Record<string, string> = { "content-type": "text/plain; charset=utf-8" };
  if (status === 401) headers["www-authenticate"] = 'Basic realm="GitHub"';
  const text = `${message}\n`;
  headers["content-length"] = String(Buffer.byteLength(text));
  res.writeHead(status, headers);
  res.end(text);
  return { status, message };
}

function runBackend(
  state: FakeState,
  repo: Repo,
  route: GitRoute,
  url: URL,
  req: IncomingMessage,
  res: ServerResponse,
  actor: string,
  isPush: boolean,
): Promise<GitAnswer> {
  const root = state.git.projectRoot;
  const env: NodeJS.ProcessEnv = {
    ...gitEnv(root),
    GIT_PROJECT_ROOT: root,
    GIT_HTTP_EXPORT_ALL: "1",
    PATH_INFO: `${state.git.pathOf(repo)}/${route.rest}`,
    REQUEST_METHOD: req.method ?? "GET",
    QUERY_STRING: url.search.replace(/^\?/, ""),
    REMOTE_USER: actor,
    REMOTE_ADDR: req.socket.remoteAddress ?? "127.0.0.1",
    CONTENT_TYPE: req.headers["content-type"] ?? "",
  };
  if (req.headers["content-length"]) env.CONTENT_LENGTH = req.headers["content-length"];
  if (req.headers["content-encoding"]) env.HTTP_CONTENT_ENCODING = req.headers["content-encoding"];
  if (req.headers["git-protocol"]) env.GIT_PROTOCOL = String(req.headers["git-protocol"]);
  const child = spawn(HTTP_BACKEND, [], { env, stdio: ["pipe", "pipe", "pipe"] });
  req.pipe(child.stdin);
  child.stdin.on("error", () => undefined);
  const stderr: Buffer[] = [];
  child.stderr.on("data", (c: Buffer) => stderr.push(c));
  return new Promise<GitAnswer>((resolve, reject) => {
    let head: Buffer = Buffer.alloc(0);
    let parsed: { status: number; headers: Record<string, string> } | null = null;
    const body: Buffer[] = [];
    child.stdout.on("data", (chunk: Buffer) => {
      if (parsed) {
        // a push's answer waits until the model has the push; a fetch streams
        if (isPush) body.push(chunk);
        else res.write(chunk);
        return;
      }
      head = Buffer.concat([head, chunk]);
      const split = cgiHeaderEnd(head);
      if (!split) return;
      parsed = parseCgiHeaders(head.subarray(0, split.at).toString("latin1"));
      const rest = head.subarray(split.at + split.length);
      if (isPush) body.push(rest);
      else {
        res.writeHead(parsed.status, parsed.headers);
        res.write(rest);
      }
    });
    child.on("error", reject);
    child.on("close", (code) => {
      void (async () => {
        if (!parsed) {
          res.writeHead(500, { "content-type": "text/plain" });
          res.end(`git http-backend failed (exit ${code}): ${Buffer.concat(stderr).toString("utf8")}`);
          return { status: 500 };
        }
        if (isPush) {
          await state.git.received(repo, state.git.of(repo)!, actor);
          const text = Buffer.concat(body);
          res.writeHead(parsed.status, { ...parsed.headers, "content-length": String(text.length) });
          res.end(text);
        } else res.end();
        return { status: parsed.status };
      })().then(resolve, reject);
    });
  });
}

function cgiHeaderEnd(buf: Buffer): { at: number; length: number } | null {
  const crlf = buf.indexOf("\r\n\r\n");
  const lf = buf.indexOf("\n\n");
  if (crlf >= 0 && (lf < 0 || crlf <= lf)) return { at: crlf, length: 4 };
  return lf >= 0 ? { at: lf, length: 2 } : null;
}

function parseCgiHeaders(text: string): { status: number; headers: Record<string, string> } {
  let status = 200;
  const headers: Record<string, string> = {};
  for (const line of text.split(/\r?\n/)) {
    const i = line.indexOf(":");
    if (i < 0) continue;
    const name = line.slice(0, i).trim().toLowerCase();
    const value = line.slice(i + 1).trim();
    if (name === "status") status = Number(value.split(" ")[0]) || 200;
    else headers[name] = value;
  }
  return { status, headers };
}
