// The replicas' front door, as a load balancer in front of several replicas is: each request (GitHub's
// webhooks, the workers' API calls) goes to the next replica in turn; one that does not take the connection
// (killed, not started again yet) is skipped, so a delivery or a claim reaches a live replica. Bodies are
// read whole first, so a request can be sent again to another replica as it was.
import { createServer, request, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { once } from "node:events";

export interface Front {
  url: string;
  /** Replica URLs, in turn; changed while running when a replica is killed or started again. */
  targets: string[];
  close(): Promise<void>;
}

function forward(target: string, req: IncomingMessage, body: Buffer): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    const out = request(
      new URL(req.url ?? "/", target),
      { method: req.method, headers: { ...req.headers, host: new URL(target).host } },
      resolve,
    );
    out.once("error", reject);
    out.end(body);
  });
}

export async function startFront(targets: string[]): Promise<Front> {
  let next = 0;
  const front: Front = { url: "", targets, close: async () => {} };
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const body = Buffer.concat(chunks);
      const tries = [...front.targets];
      const start = next++;
      const attempt = async (i: number): Promise<void> => {
        if (i >= tries.length) {
          res.writeHead(502).end("no replica took the request");
          return;
        }
        try {
          const answer = await forward(tries[(start + i) % tries.length]!, req, body);
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
        } catch {
          await attempt(i + 1);
        }
      };
      void attempt(0);
    });
  });
  server.keepAliveTimeout = 1000;
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  front.url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  front.close = () =>
    new Promise((r) => {
      server.closeAllConnections();
      server.close(() => r());
    });
  return front;
}
