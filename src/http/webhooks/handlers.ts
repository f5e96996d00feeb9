// Handlers for the webhooks group: configuration, secret rotation, test ping, delivery log, catalogue.
import { HttpApiBuilder } from "effect/http-api"
import { Effect } from "effect"
import { jsonSchemaOf } from "../../schema/platform/common.js"
import { eventTypes } from "../../schema/events/events.js"
import { eventCatalogue } from "../../schema/webhooks/payloads.js"
import { WebhookEnvelope } from "../../schema/webhooks/deliveries.js"
import { CurrentCaller } from "../../services/keys/Caller.js"
import { Webhooks } from "../../services/webhooks/Webhooks.js"
import { Api } from "../api.js"
import { securityEvent } from "../securityLog.js"

/** The endpoint's origin only: a webhook URL's path or query can hold a token (Slack-style). */
const originOnly = (url: string) => {
  try {
    return new URL(url).origin
  } catch {
    return "(invalid)"
  }
}

/** Every route of this group is behind a key, so the caller always has an agent. */
const agentId = Effect.map(CurrentCaller, (caller) => caller.agentId!)

const catalogue = {
  envelope: jsonSchemaOf(WebhookEnvelope),
  events: eventTypes.map((type) => ({
    type,
    description: eventCatalogue[type].description,
    dataSchema: jsonSchemaOf(eventCatalogue[type].schema)
  }))
}

export const WebhooksLive = HttpApiBuilder.group(Api, "webhooks", (handlers) =>
  handlers
    .handle("put", ({ payload }) =>
      Effect.flatMap(agentId, (id) =>
        Effect.flatMap(Webhooks, (w) => w.put(id, payload)).pipe(
          Effect.tap(() =>
            Effect.flatMap(CurrentCaller, (c) =>
              securityEvent("webhook.changed", {
                accountId: c.accountId,
                agentId: id,
                keyId: c.keyId,
                url: originOnly(payload.url)
              })
            )
          )
        )
      )
    )
    .handle("get", () => Effect.flatMap(agentId, (id) => Effect.flatMap(Webhooks, (w) => w.getConfig(id))))
    .handle("remove", () => Effect.flatMap(agentId, (id) => Effect.flatMap(Webhooks, (w) => w.remove(id))))
    .handle("rotateSecret", () =>
      Effect.flatMap(agentId, (id) =>
        Effect.flatMap(Webhooks, (w) => w.rotateSecret(id)).pipe(
          Effect.tap(() =>
            Effect.flatMap(CurrentCaller, (c) =>
              securityEvent("webhook.secret_rotated", { accountId: c.accountId, agentId: id, keyId: c.keyId })
            )
          )
        )
      )
    )
    .handle("test", () => Effect.flatMap(agentId, (id) => Effect.flatMap(Webhooks, (w) => w.sendTest(id))))
    .handle("deliveries", ({ query: urlParams }) =>
      Effect.flatMap(agentId, (id) => Effect.flatMap(Webhooks, (w) => w.listAttempts(id, urlParams)))
    )
    .handle("events", () => Effect.succeed(catalogue))
)
