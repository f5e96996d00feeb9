// Where each surface lives: the route prefixes the HttpApi groups are mounted under, and that
// discovery documents name. One place, so a group and the documents that point at it cannot drift.

/** The agent API (bearer keys). */
export const AGENT_API_PREFIX = "/api/v1/agent"
/** The commerce protocol, under the agent API. */
export const COMMERCE_PREFIX = `${AGENT_API_PREFIX}/commerce`
/** The account owner's dashboard API (session cookie). */
export const DASHBOARD_PREFIX = "/api/dashboard"
