// Handlers of the owner's console routes: the agent must be the signed-in account's (else 404); the
// CSV export streams page by page, so a long history is never held in memory at once.
import { HttpApiBuilder } from "effect/http-api"
import { HttpServerResponse } from "effect/http"
import { Effect, Option, Stream } from "effect"
import { CurrentCaller } from "../../services/keys/Caller.js"
import { Keys } from "../../services/keys/Keys.js"
import { Audit } from "../../services/audit/Audit.js"
import { Overview } from "../../services/audit/Overview.js"
import { Commerce } from "../../services/commerce/Commerce.js"
import { Api } from "../api.js"
import { AUDIT_HEADER, auditRow, TRANSACTION_HEADER, transactionRow } from "./csv.js"

/** Rows per page read for an export: one statement per this many rows. */
const EXPORT_PAGE = 100

/** The agent must belong to the signed-in account (else 404). */
const ownedAgent = (agentId: string) =>
  Effect.flatMap(CurrentCaller, (caller) =>
    Effect.flatMap(Keys, (k) => Effect.as(k.ownedAgent(caller.accountId, agentId), agentId))
  )

/** The header, then each page's rows as one text chunk, read only as the client takes them. */
const pagedCsv = <E>(
  header: string,
  page: (cursor: string | undefined) => Effect.Effect<{ readonly rows: string; readonly next: string | null }, E>
) =>
  Stream.concat(
    Stream.make(header),
    Stream.paginate(undefined as string | undefined, (cursor) =>
      Effect.map(page(cursor), ({ rows, next }) => [rows === "" ? [] : [rows], Option.fromNullishOr(next)] as const)
    )
  ).pipe(Stream.encodeText)

export const ConsoleLive = HttpApiBuilder.group(Api, "console", (handlers) =>
  handlers
    .handle("overview", () =>
      Effect.flatMap(CurrentCaller, (caller) => Effect.flatMap(Overview, (o) => o.overview(caller.accountId)))
    )
    .handle("agentAudit", ({ params, query }) =>
      Effect.flatMap(ownedAgent(params.agentId), (id) => Effect.flatMap(Audit, (a) => a.list(id, query)))
    )
    .handle(
      "agentExport",
      Effect.fnUntraced(function* ({ params, query }) {
        const agentId = yield* ownedAgent(params.agentId)
        const commerce = yield* Commerce
        const audit = yield* Audit
        const body =
          query.kind === "transactions"
            ? pagedCsv(TRANSACTION_HEADER, (cursor) =>
                Effect.map(
                  commerce.listTransactions(agentId, { limit: EXPORT_PAGE, ...(cursor ? { cursor } : {}) }),
                  (p) => ({ rows: p.data.map(transactionRow).join(""), next: p.nextCursor })
                )
              )
            : pagedCsv(AUDIT_HEADER, (cursor) =>
                Effect.map(audit.list(agentId, { limit: EXPORT_PAGE, cursor }), (p) => ({
                  rows: p.entries.map(auditRow).join(""),
                  next: p.nextCursor
                }))
              )
        return HttpServerResponse.stream(body, {
          contentType: "text/csv; charset=utf-8",
          headers: {
            "content-disposition": `attachment; filename="${agentId}-${query.kind}.csv"`,
            "cache-control": "no-store"
          }
        })
      })
    )
)
