// Handlers for the system group.
import { HttpApiBuilder } from "effect/http-api"
import { Effect } from "effect"
import { AppConfig } from "../../services/platform/AppConfig.js"
import { Marketplace } from "../../services/marketplace/Marketplace.js"
import { Api } from "../api.js"

export const SystemLive = HttpApiBuilder.group(Api, "system", (handlers) =>
  handlers.handle(
    "health",
    Effect.fnUntraced(function* () {
      const config = yield* AppConfig
      // A storage round trip proves readiness (fails as 503 when the database is down).
      yield* Effect.flatMap(Marketplace, (m) => m.ready)
      return { status: "ok" as const, storage: config.storage, payments: config.payments, version: "1.0.0" }
    })
  )
)
