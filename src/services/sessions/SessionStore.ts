// The storage port of agent sessions.
import { Context, type Effect } from "effect"
import type { StorageUnavailable } from "../../schema/platform/errors.js"
import type { SessionRecord } from "../../schema/sessions/sessions.js"

export interface SessionStoreService {
  readonly insert: (r: SessionRecord) => Effect.Effect<void, StorageUnavailable>
  readonly get: (id: string) => Effect.Effect<SessionRecord | undefined, StorageUnavailable>
  /** The row, locked for this unit of work. */
  readonly getForUpdate: (id: string) => Effect.Effect<SessionRecord | undefined, StorageUnavailable>
  readonly update: (r: SessionRecord) => Effect.Effect<void, StorageUnavailable>
}

export class SessionStore extends Context.Service<SessionStore, SessionStoreService>()("agent-commerce/SessionStore") {}
