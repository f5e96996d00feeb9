// Sessions: a multi-step agent session that keeps state between calls — browse → evaluate →
// acquire or create — with a step contract (which action may follow which state), the permission
// of each step, a sliding expiry, and a log of every step (docs/sessions.md).
import { traced } from "../platform/Tracing.js"
import { Clock, Context, Effect, Layer } from "effect"
import { Conflict, Forbidden, NotFound, type StorageUnavailable } from "../../schema/platform/errors.js"
import {
  type AgentSession,
  type SessionAction,
  type SessionContext,
  SessionExpired,
  type SessionRecord,
  type SessionState,
  type SessionStepRequest,
  type SessionStepResult
} from "../../schema/sessions/sessions.js"
import { Builder } from "../projects/Builder.js"
import type { Caller } from "../keys/Caller.js"
import { Ids, Transactor } from "../platform/Db.js"
import { SessionStore } from "./SessionStore.js"
import { actionPermission, allowedActions, MAX_SESSION_STEPS, SESSION_TTL_MS, toSession } from "./contract.js"
import { Payments } from "../payments/Payments.js"
import type { CheckoutIdempotency } from "../payments/checkout.js"
import { Projects } from "../projects/Projects.js"

/** Why a step can fail: the contract, the permission, or what the step itself called. */
export type SessionStepError =
  | Conflict
  | Forbidden
  | NotFound
  | SessionExpired
  | StorageUnavailable
  | Effect.Error<ReturnType<Projects["Service"]["listCatalog"]>>
  | Effect.Error<ReturnType<Payments["Service"]["startAcquisition"]>>
  | Effect.Error<ReturnType<Builder["Service"]["create"]>>

export interface SessionsService {
  /** Runs one step of the contract for the calling agent. */
  readonly step: (
    caller: Caller,
    request: SessionStepRequest,
    /** The request's Idempotency-Key, for the acquire step's processor checkout. */
    idempotency?: CheckoutIdempotency
  ) => Effect.Effect<{ session: AgentSession; result: SessionStepResult }, SessionStepError>
  /** The session, for its own agent only (404 for anyone else); expired ones are shown as such. */
  readonly get: (agentId: string, id: string) => Effect.Effect<AgentSession, NotFound | StorageUnavailable>
}

const make = Effect.gen(function* () {
  const store = yield* SessionStore
  const projects = yield* Projects
  const payments = yield* Payments
  const builder = yield* Builder
  const ids = yield* Ids
  const { atomically } = yield* Transactor

  const notFound = (id: string) => new NotFound({ message: `session ${id} not found`, resource: "session", id })

  /**
   * Loads the caller's session (404 otherwise), refusing expired ones (410) and actions the state
   * does not accept (409).
   */
  const loadFor = Effect.fnUntraced(function* (agentId: string, id: string, action: SessionAction, lock: boolean) {
    const r = yield* lock ? store.getForUpdate(id) : store.get(id)
    if (!r || r.agentId !== agentId) return yield* Effect.fail(notFound(id))
    const now = yield* Clock.currentTimeMillis
    if (r.state === "completed" || r.state === "closed") {
      return yield* Effect.fail(
        new Conflict({ message: `session ${id} is ${r.state}; start a new one`, state: r.state })
      )
    }
    if (now >= Date.parse(r.expiresAt)) {
      return yield* Effect.fail(
        new SessionExpired({
          message: `session ${id} expired at ${r.expiresAt}; start a new one`,
          sessionId: id,
          expiredAt: r.expiresAt
        })
      )
    }
    if (!allowedActions[r.state].includes(action)) {
      return yield* Effect.fail(
        new Conflict({
          message:
            `"${action}" is not accepted while the session is ${r.state}; ` +
            `next: ${allowedActions[r.state].join(", ")}` +
            (action === "acquire" ? " (evaluate the project first)" : ""),
          state: r.state
        })
      )
    }
    if (r.steps.length >= MAX_SESSION_STEPS) {
      return yield* Effect.fail(
        new Conflict({
          message: `session ${id} reached its ${MAX_SESSION_STEPS}-step limit; start a new one`,
          state: r.state
        })
      )
    }
    return r
  })

  /** Records a step: new state and context, a log line, and a fresh expiry. */
  const record = Effect.fnUntraced(function* (
    r: SessionRecord,
    action: SessionAction,
    state: SessionState,
    context: SessionContext,
    summary: string
  ) {
    const now = yield* Clock.currentTimeMillis
    const at = new Date(now).toISOString()
    const next: SessionRecord = {
      ...r,
      state,
      context,
      steps: [...r.steps, { index: r.steps.length, action, at, summary }],
      updatedAt: at,
      expiresAt: new Date(now + SESSION_TTL_MS).toISOString()
    }
    yield* store.update(next)
    return toSession(next, now)
  })

  const start = Effect.fnUntraced(function* (agentId: string, goal: SessionRecord["goal"]) {
    const now = yield* Clock.currentTimeMillis
    const at = new Date(now).toISOString()
    const r: SessionRecord = {
      id: yield* ids.make("ses"),
      agentId,
      goal,
      state: "started",
      context: { browsedProjectIds: [], evaluations: [], outcome: null },
      steps: [{ index: 0, action: "start", at, summary: `started with goal ${goal}` }],
      createdAt: at,
      updatedAt: at,
      expiresAt: new Date(now + SESSION_TTL_MS).toISOString()
    }
    yield* store.insert(r)
    return toSession(r, now)
  })

  /** Runs one step of the contract for the calling agent. */
  const step = Effect.fnUntraced(
    function* (caller: Caller, request: SessionStepRequest, idempotency: CheckoutIdempotency | undefined) {
      const agentId = caller.agentId
      if (agentId === undefined) {
        return yield* Effect.fail(new Forbidden({ message: "sessions are run by an agent's API key" }))
      }
      const needed = actionPermission[request.action]
      if (needed !== null && !caller.permissions.has(needed)) {
        return yield* Effect.fail(
          new Forbidden({ message: `the ${request.action} step needs the ${needed} permission`, permission: needed })
        )
      }
      switch (request.action) {
        case "start": {
          const session = yield* start(agentId, request.goal ?? "explore")
          return { session, result: { action: "start" } satisfies SessionStepResult }
        }
        case "browse":
          return yield* atomically(
            Effect.gen(function* () {
              const r = yield* loadFor(agentId, request.sessionId, "browse", true)
              const catalog = yield* projects.listCatalog(request.filters ?? {})
              const session = yield* record(
                r,
                "browse",
                r.state === "evaluated" ? "evaluated" : "browsing",
                { ...r.context, browsedProjectIds: catalog.data.map((p) => p.id) },
                `browsed ${catalog.data.length} project${catalog.data.length === 1 ? "" : "s"}`
              )
              return { session, result: { action: "browse", catalog } satisfies SessionStepResult }
            })
          )
        case "evaluate":
          return yield* atomically(
            Effect.gen(function* () {
              const r = yield* loadFor(agentId, request.sessionId, "evaluate", true)
              const evaluation = yield* projects.evaluate(request.projectId)
              const { projectId, score, recommendation } = evaluation
              const entry = { projectId, score, recommendation }
              const session = yield* record(
                r,
                "evaluate",
                "evaluated",
                {
                  ...r.context,
                  evaluations: [...r.context.evaluations.filter((e) => e.projectId !== entry.projectId), entry]
                },
                `evaluated ${entry.projectId}: ${entry.score} (${entry.recommendation})`
              )
              return { session, result: { action: "evaluate", evaluation } satisfies SessionStepResult }
            })
          )
        case "acquire": {
          // Checked first, then the checkout is started outside any lock (it may call the payment
          // processor), then recorded; a concurrent step that completed the session meanwhile wins.
          const r = yield* loadFor(agentId, request.sessionId, "acquire", false)
          const last = r.context.evaluations[r.context.evaluations.length - 1]
          const projectId = request.projectId ?? last?.projectId
          if (projectId === undefined || !r.context.evaluations.some((e) => e.projectId === projectId)) {
            return yield* Effect.fail(
              new Conflict({
                message: `evaluate ${projectId ?? "a project"} in this session before acquiring it`,
                state: r.state
              })
            )
          }
          const listing = yield* projects.getListing(projectId)
          const priceCents = listing.askingPriceCents
          const checkout = yield* payments.startAcquisition(
            { caller, projectId, priceCents, title: listing.name },
            idempotency
          )
          return yield* atomically(
            Effect.gen(function* () {
              const fresh = yield* loadFor(agentId, request.sessionId, "acquire", true)
              const session = yield* record(
                fresh,
                "acquire",
                "completed",
                {
                  ...fresh.context,
                  outcome: {
                    type: "acquisition",
                    projectId,
                    checkoutUrl: checkout.checkoutUrl,
                    checkoutSessionId: checkout.sessionId
                  }
                },
                `started the acquisition of ${projectId} for ${listing.askingPriceCents} cents`
              )
              return {
                session,
                result: {
                  action: "acquire",
                  acquisition: {
                    projectId,
                    priceCents,
                    checkoutUrl: checkout.checkoutUrl,
                    sessionId: checkout.sessionId
                  }
                } as SessionStepResult
              }
            })
          )
        }
        case "create":
          return yield* atomically(
            Effect.gen(function* () {
              const r = yield* loadFor(agentId, request.sessionId, "create", true)
              const project = yield* builder.create({ accountId: caller.accountId, agentId }, request.project)
              const session = yield* record(
                r,
                "create",
                "completed",
                {
                  ...r.context,
                  outcome: { type: "project", projectId: project.id, buildStatus: project.build.status }
                },
                `created project ${project.id} (${project.name}); build ${project.build.status}`
              )
              return { session, result: { action: "create", project } satisfies SessionStepResult }
            })
          )
        case "close":
          return yield* atomically(
            Effect.gen(function* () {
              const r = yield* loadFor(agentId, request.sessionId, "close", true)
              const session = yield* record(r, "close", "closed", r.context, "closed by the agent")
              return { session, result: { action: "close" } satisfies SessionStepResult }
            })
          )
      }
    },
    (effect, _caller, request) => traced("Sessions.step", { attributes: { action: request.action } })(effect)
  )

  /** The session, for its own agent only (404 for anyone else); expired ones are shown as such. */
  const get = Effect.fnUntraced(function* (agentId: string, id: string) {
    const r = yield* store.get(id)
    if (!r || r.agentId !== agentId) return yield* Effect.fail(notFound(id))
    return toSession(r, yield* Clock.currentTimeMillis)
  })

  return Sessions.of({ step, get })
})

export class Sessions extends Context.Service<Sessions, SessionsService>()("agent-commerce/Sessions") {
  static readonly make = make
  /** Provides the domain services it uses; only ports (stores, processors, config) stay open. */
  static readonly layer = Layer.effect(Sessions, make).pipe(
    Layer.provide([Builder.layer, Payments.layer, Projects.layer])
  )
}
