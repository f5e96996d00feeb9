// A2A push notification configurations (docs/a2a.md "Push notifications"): where the caller asked to
// be told that one of its tasks has ended, and how far that notification has got.
import { Schema } from "effect"

/** Most configurations one task may have, and most one agent may have waiting at once. */
export const PUSH_CONFIGS_PER_TASK = 10
export const PUSH_CONFIGS_OPEN_PER_AGENT = 100
/** A configuration's id as the client names it (or we do: `pnc_…`). */
export const PUSH_CONFIG_ID = /^[A-Za-z0-9._:-]{1,64}$/
/** The notification token and the authentication credentials are at most this long. */
export const PUSH_SECRET_MAX = 512

export const PushConfigRecord = Schema.Struct({
  taskId: Schema.String,
  id: Schema.String,
  agentId: Schema.String,
  url: Schema.String,
  /** Sent as `X-A2A-Notification-Token` when no authentication is given. */
  token: Schema.NullOr(Schema.String),
  /** Sent as `Authorization: <scheme> <credentials>`. */
  authScheme: Schema.NullOr(Schema.String),
  authCredentials: Schema.NullOr(Schema.String),
  createdAt: Schema.String,
  /** When the worker looks at it next (to see whether its task has ended, or to retry); null once done. */
  nextAttemptAt: Schema.NullOr(Schema.String),
  /** Notifications sent and not answered with a 2xx. */
  attempts: Schema.Number,
  lastError: Schema.NullOr(Schema.String),
  /** The final task state the endpoint acknowledged (2xx); null until then, and when given up. */
  pushedState: Schema.NullOr(Schema.String),
  /** When it was done: acknowledged, or given up after PUSH_NOTIFY_ATTEMPTS. */
  doneAt: Schema.NullOr(Schema.String)
})
export type PushConfigRecord = typeof PushConfigRecord.Type
