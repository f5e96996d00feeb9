// Discovery: builds the GET /api/discover document (spec §2.1) from config, live catalogue data and
// the route catalogue, classifies the visitor, and keeps the encoded document cached per visitor.
// Beside it: document.ts (schema and constants), sections.ts (the document's sections),
// visitor.ts (who is asking), encoding.ts (the document as bytes).
import { Clock, Context, Effect, Layer, Option, Ref } from "effect"
import type { Visitor } from "../../schema/discovery/discovery.js"
import type { StorageUnavailable } from "../../schema/platform/errors.js"
import { AppConfig } from "../platform/AppConfig.js"
import { Evaluator } from "../projects/Evaluator.js"
import { Keys } from "../keys/Keys.js"
import { Marketplace } from "../marketplace/Marketplace.js"
import type { CatalogRoute, DiscoveryDocument } from "./document.js"
import { assemble, type Built, type EncodedDocument, encodeBuild, inputsKeyOf } from "./encoding.js"
import { anonymousVisitor, BEARER, classifyUserAgent, type UserAgentClass } from "./visitor.js"

/** How often a cached document re-reads templates and plans to see whether it must be rebuilt. */
export const REVALIDATE_MS = 60_000

export interface DiscoveryRequest {
  readonly routes: ReadonlyArray<CatalogRoute>
  readonly authorization?: string | undefined
  readonly userAgent?: string | undefined
}

export interface DiscoveryService {
  /** The encoded document for this visitor, from the cached build. */
  readonly document: (request: DiscoveryRequest) => Effect.Effect<EncodedDocument, StorageUnavailable>
  /** The decoded document for a visitor (tests and other surfaces; the HTTP route uses `document`). */
  readonly build: (request: DiscoveryRequest) => Effect.Effect<DiscoveryDocument, StorageUnavailable>
  readonly classifyUserAgent: (userAgent: string | undefined) => UserAgentClass
}

const make = Effect.gen(function* () {
  const config = yield* AppConfig
  const marketplace = yield* Marketplace
  const keys = yield* Keys
  const evaluator = yield* Evaluator
  const cache = yield* Ref.make<Option.Option<Built>>(Option.none())

  const readInputs = Effect.all({ templates: marketplace.listTemplates, plans: marketplace.listPlans })

  /** The cached build, rebuilt when missing, when the routes changed, or when templates or plans changed. */
  const current: (routes: ReadonlyArray<CatalogRoute>) => Effect.Effect<Built, StorageUnavailable> = Effect.fnUntraced(
    function* (routes: ReadonlyArray<CatalogRoute>) {
      const now = yield* Clock.currentTimeMillis
      const cached = yield* Ref.get(cache)
      if (Option.isSome(cached) && cached.value.routes === routes && now - cached.value.checkedAt < REVALIDATE_MS) {
        return cached.value
      }
      const inputs = yield* readInputs
      const key = inputsKeyOf(inputs)
      const next =
        Option.isSome(cached) && cached.value.routes === routes && cached.value.inputsKey === key
          ? { ...cached.value, checkedAt: now }
          : encodeBuild(config, evaluator.name, routes, inputs, now)
      yield* Ref.set(cache, Option.some(next))
      return next
    }
  )

  /** Names the agent behind a valid bearer key (no rate limit is spent); undefined otherwise. */
  const keyVisitor = Effect.fnUntraced(function* (authorization: string | undefined) {
    const match = BEARER.exec(authorization ?? "")
    if (!match) {
      return { visitor: undefined, rejected: authorization !== undefined ? "not a bearer token" : undefined }
    }
    const result = yield* Effect.result(keys.authenticate(match[1]))
    if (result._tag === "Failure") {
      const e = result.failure
      return { visitor: undefined, rejected: e._tag === "Unauthorized" ? e.message : "the key could not be checked" }
    }
    const { agent, key } = result.success
    const visitor: Visitor = {
      classified_as: "ai_agent",
      agent_name: agent.name,
      organization: agent.organization,
      message:
        `Authenticated as agent "${agent.name}"${agent.organization ? ` of ${agent.organization}` : ""}. ` +
        `Your key may call the endpoints its permissions allow: ${key.permissions.join(", ")}.`,
      authenticated: true,
      detected_by: "api_key",
      permissions: [...key.permissions]
    }
    return { visitor, rejected: undefined }
  })

  // The hot path of an anonymous request is a clock read, a Ref read, the User-Agent match and a
  // map lookup; no span, so it stays close to a raw server (the bench measures it).
  const document: (request: DiscoveryRequest) => Effect.Effect<EncodedDocument, StorageUnavailable> = Effect.fnUntraced(
    function* (request: DiscoveryRequest) {
      const built = yield* current(request.routes)
      const c = classifyUserAgent(request.userAgent)
      if (request.authorization !== undefined) {
        const { visitor, rejected } = yield* keyVisitor(request.authorization)
        return assemble(built, visitor ?? anonymousVisitor(config.baseUrl, request.userAgent, c, rejected), true)
      }
      const ua = (request.userAgent ?? "").trim() === "" ? "none" : "ua"
      const cacheKey = `${c.classified_as}|${c.agent_name ?? ""}|${ua}`
      const hit = built.anonymous.get(cacheKey)
      if (hit) return hit
      const encoded = assemble(built, anonymousVisitor(config.baseUrl, request.userAgent, c, undefined), false)
      // Only the build this variant belongs to gains it (a concurrent rebuild keeps its own map).
      yield* Ref.update(cache, (cached) =>
        Option.isSome(cached) && cached.value.generatedAt === built.generatedAt && cached.value.routes === built.routes
          ? Option.some({ ...cached.value, anonymous: new Map(cached.value.anonymous).set(cacheKey, encoded) })
          : cached
      )
      return encoded
    }
  )

  const build = (request: DiscoveryRequest) =>
    Effect.map(document(request), (d) => JSON.parse(new TextDecoder().decode(d.body)) as DiscoveryDocument)

  return Discovery.of({ document, build, classifyUserAgent })
})

export class Discovery extends Context.Service<Discovery, DiscoveryService>()("agent-commerce/Discovery") {
  /** Provides the domain services it uses; only ports (stores, processors, config) stay open. */
  static readonly layer = Layer.effect(Discovery, make).pipe(Layer.provide([Keys.layer, Marketplace.layer]))
}
