/**
 * REST representations, shaped like GitHub's (see the schemas and examples in
 * @octokit/openapi): every URL points back at the fake so clients that follow
 * links (pagination, `url` fields) stay on it. Also usable to build webhook
 * payloads that agree with what the API returns (`fake.json`).
 *
 * The serializer is built from one part per area, each extending the last:
 * json/core.ts (URLs, timestamps, node ids, users, the App, installations,
 * repositories), json/issues.ts, json/git.ts, json/pulls.ts, json/checks.ts
 * and json/actions.ts.
 */
import { ActionsJson } from "./json/actions.js";

export { nodeId, ts, type Urls } from "./json/core.js";

export class Serializer extends ActionsJson {}
