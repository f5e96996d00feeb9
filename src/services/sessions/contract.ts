// The session step contract: which actions each state accepts, the permission each step needs,
// the sliding expiry and the step limit, and how a stored session is shown.
import type { Permission } from "../../schema/keys/keys.js"
import {
  AgentSession,
  type SessionAction,
  type SessionRecord,
  type SessionState
} from "../../schema/sessions/sessions.js"

/** A session expires this long after its last step (sliding). */
export const SESSION_TTL_MS = 30 * 60 * 1000
/** Steps one session may take (start included). */
export const MAX_SESSION_STEPS = 50

/** The step contract: actions accepted in each state. */
export const allowedActions: Record<SessionState, ReadonlyArray<SessionAction>> = {
  started: ["browse", "evaluate", "create", "close"],
  browsing: ["browse", "evaluate", "create", "close"],
  evaluated: ["browse", "evaluate", "acquire", "create", "close"],
  completed: [],
  closed: []
}

/** The key permission each action needs (start and close need only a valid key). */
export const actionPermission: Record<SessionAction, Permission | null> = {
  start: null,
  browse: "catalog:read",
  evaluate: "evaluate",
  acquire: "acquire",
  create: "create",
  close: null
}

export const toSession = (r: SessionRecord, now: number): AgentSession => {
  const expired = now >= Date.parse(r.expiresAt) && r.state !== "completed" && r.state !== "closed"
  return AgentSession.make({
    id: r.id,
    agentId: r.agentId,
    goal: r.goal,
    state: r.state,
    nextActions: expired ? [] : [...allowedActions[r.state]],
    context: r.context,
    steps: [...r.steps],
    createdAt: r.createdAt,
    updatedAt: r.updatedAt,
    expiresAt: r.expiresAt,
    expired
  })
}
