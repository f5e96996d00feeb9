// Handlers for the projects group: catalog, evaluate, acquire, create, status, sessions.
import { HttpApiBuilder } from "effect/http-api"
import { Effect } from "effect"
import { Builder } from "../../services/projects/Builder.js"
import { CurrentCaller } from "../../services/keys/Caller.js"
import { Payments } from "../../services/payments/Payments.js"
import { requestIdempotency } from "../requestIdempotency.js"
import { Projects } from "../../services/projects/Projects.js"
import { Sessions } from "../../services/sessions/Sessions.js"
import { Api } from "../api.js"
import { cents } from "../../schema/platform/common.js"

/** Every route of this group is behind a key, so the caller always has an agent. */
const callerAgent = Effect.map(CurrentCaller, (caller) => ({ caller, agentId: caller.agentId! }))

export const ProjectsLive = HttpApiBuilder.group(Api, "projects", (handlers) =>
  handlers
    .handle("catalog", ({ query: urlParams }) => Effect.flatMap(Projects, (p) => p.listCatalog(urlParams)))
    .handle("catalogProject", ({ params: path }) => Effect.flatMap(Projects, (p) => p.getCatalogProject(path.id)))
    .handle("evaluate", ({ payload }) => Effect.flatMap(Projects, (p) => p.evaluate(payload.projectId)))
    .handle(
      "acquire",
      Effect.fnUntraced(function* ({ payload }) {
        const { caller } = yield* callerAgent
        const listing = yield* Effect.flatMap(Projects, (p) => p.getListing(payload.projectId))
        const idempotency = yield* requestIdempotency
        const checkout = yield* Effect.flatMap(Payments, (p) =>
          p.startAcquisition(
            { caller, projectId: listing.id, priceCents: listing.askingPriceCents, title: listing.name },
            idempotency
          )
        )
        return {
          projectId: listing.id,
          priceCents: cents(listing.askingPriceCents),
          checkoutUrl: checkout.checkoutUrl,
          sessionId: checkout.sessionId
        }
      })
    )
    .handle(
      "create",
      Effect.fnUntraced(function* ({ payload }) {
        const { caller, agentId } = yield* callerAgent
        const keyed = yield* requestIdempotency
        return yield* Effect.flatMap(Builder, (b) => b.create({ accountId: caller.accountId, agentId }, payload, keyed))
      })
    )
    .handle(
      "status",
      Effect.fnUntraced(function* ({ params: path }) {
        const { agentId } = yield* callerAgent
        return yield* Effect.flatMap(Builder, (b) => b.status(agentId, path.id))
      })
    )
    .handle(
      "session",
      Effect.fnUntraced(function* ({ payload }) {
        const { caller } = yield* callerAgent
        const idempotency = yield* requestIdempotency
        return yield* Effect.flatMap(Sessions, (s) => s.step(caller, payload, idempotency))
      })
    )
    .handle(
      "getSession",
      Effect.fnUntraced(function* ({ params: path }) {
        const { agentId } = yield* callerAgent
        return yield* Effect.flatMap(Sessions, (s) => s.get(agentId, path.id))
      })
    )
)
