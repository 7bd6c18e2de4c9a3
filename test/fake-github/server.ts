/**
 * The HTTP side: every request is recorded, checked against GitHub's REST
 * description, authenticated like GitHub does, then answered from state.
 * Anything the App does that GitHub would not accept — or that the fake does
 * not model — becomes a violation, so end-to-end tests fail loudly instead of
 * passing against a lenient mock.
 *
 * FakeServer is built from one part per responsibility, each extending the
 * last: server/core.ts (the routes served, what is recorded, checks, faults,
 * hooks and holds), server/graphql.ts (GraphQL requests), server/rest.ts
 * (matching, validating, authenticating and running a REST operation) and
 * server/listener.ts (the socket, recording each request, sending answers).
 */
import { HttpListener } from "./server/listener.js";

export type { ChaosOptions, ChaosStats, InjectRule, OutageOptions } from "./faults.js";
export type { RecordedRequest } from "./http.js";
export type { FakeServerOptions } from "./server/core.js";

export class FakeServer extends HttpListener {}
