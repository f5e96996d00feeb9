// The storage port of ACP checkout sessions. Adapters: src/layers/acp/AcpSessionStore.{memory,postgres}.ts.
import { Context, type Effect } from "effect"
import type { AcpSessionRecord } from "../../schema/acp/sessions.js"
import type { StorageUnavailable } from "../../schema/platform/errors.js"

export interface AcpSessionStoreService {
  readonly insert: (r: AcpSessionRecord) => Effect.Effect<void, StorageUnavailable>
  readonly get: (id: string) => Effect.Effect<AcpSessionRecord | undefined, StorageUnavailable>
  /** The row, locked for this unit of work. */
  readonly getForUpdate: (id: string) => Effect.Effect<AcpSessionRecord | undefined, StorageUnavailable>
  readonly update: (r: AcpSessionRecord) => Effect.Effect<void, StorageUnavailable>
}

export class AcpSessionStore extends Context.Service<AcpSessionStore, AcpSessionStoreService>()(
  "agent-commerce/AcpSessionStore"
) {}
