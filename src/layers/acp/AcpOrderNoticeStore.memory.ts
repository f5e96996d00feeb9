// In-memory ACP order event notices: by session, and the open ones (not done) apart, so a claim pass
// looks at open notices only.
import { Effect, Layer } from "effect"
import type { AcpOrderNotice } from "../../schema/acp/sessions.js"
import { AcpOrderNoticeStore } from "../../services/acp/AcpOrderNoticeStore.js"
import { MemoryDb } from "../storage/memory/MemoryDb.js"

export const MemoryAcpOrderNoticeStore = Layer.effect(
  AcpOrderNoticeStore,
  Effect.gen(function* () {
    const db = yield* MemoryDb
    const rows = db.table<string, AcpOrderNotice>("acp_order_notices")
    const open = db.table<string, true>("acp_order_notices_open")
    const write = (n: AcpOrderNotice) =>
      Effect.all(
        [rows.set(n.sessionId, n), n.doneAt === null ? open.set(n.sessionId, true) : open.delete(n.sessionId)],
        {
          discard: true
        }
      )
    return AcpOrderNoticeStore.of({
      insert: (n) => Effect.suspend(() => (rows.get(n.sessionId) !== undefined ? Effect.void : write(n))),
      get: (sessionId) => Effect.sync(() => rows.get(sessionId)),
      claimDue: (now, leaseUntil, limit) =>
        Effect.suspend(() => {
          const due = [...open.rows.keys()]
            .flatMap((k) => rows.get(k) ?? [])
            .filter((n) => n.nextAttemptAt !== null && n.nextAttemptAt <= now)
            .sort((a, b) => (a.nextAttemptAt! < b.nextAttemptAt! ? -1 : a.nextAttemptAt! > b.nextAttemptAt! ? 1 : 0))
            .slice(0, limit)
            .map((n) => ({ ...n, nextAttemptAt: leaseUntil }))
          return Effect.as(Effect.forEach(due, write, { discard: true }), due)
        }),
      update: (n, leasedUntil) =>
        Effect.suspend(() =>
          rows.get(n.sessionId)?.nextAttemptAt === leasedUntil ? Effect.as(write(n), true) : Effect.succeed(false)
        ),
      reopen: (sessionId, agentId, now) =>
        Effect.suspend(() => {
          const n = rows.get(sessionId)
          return n === undefined || n.agentId !== agentId
            ? Effect.void
            : write({ ...n, nextAttemptAt: now, doneAt: null, attempts: 0, lastError: null })
        })
    })
  })
)
