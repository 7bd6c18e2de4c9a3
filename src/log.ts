import { pino, type Logger } from "pino";

/**
 * The service logger. Request logging includes headers; the ones carrying
 * credentials or signatures are redacted, because logs travel further than
 * secrets should.
 *
 * Levels: each processed webhook delivery gets one `info` line; each HTTP
 * request (webhook posts, worker and admin API calls) one `debug` line.
 */
export function createLogger(level: string, destination?: NodeJS.WritableStream): Logger {
  const options = {
    name: "orchestra",
    level,
    redact: {
      paths: [
        "req.headers.authorization",
        'req.headers["x-hub-signature-256"]',
        'req.headers["x-hub-signature"]',
        "req.headers.cookie",
      ],
      censor: "[redacted]",
    },
  };
  return destination ? pino(options, destination as pino.DestinationStream) : pino(options);
}
