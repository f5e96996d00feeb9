// Agent API v1 (spec §6): the calling agent's webhook endpoint, its secret, a test ping, the
// delivery log and the event catalogue. Any valid key may manage its own agent's webhook.
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import { Conflict, InvalidInput, NotFound } from "../../schema/errors.js"
import {
  DeliveriesResponse,
  DeliveriesUrlParams,
  EventCatalogueResponse,
  PutWebhookBody,
  PutWebhookResponse,
  RotateSecretResponse,
  WebhookConfig,
  WebhookTestResponse
} from "../../schema/webhooks.js"
import { AgentAuth, RequiredPermission } from "../middleware/auth.js"

export class WebhooksGroup extends HttpApiGroup.make("webhooks")
  .add(
    HttpApiEndpoint.put("put", "/webhook")
      .setPayload(PutWebhookBody)
      .addSuccess(PutWebhookResponse)
      .addError(InvalidInput)
      .addError(Conflict)
      .annotate(RequiredPermission, null)
      .annotate(OpenApi.Summary, "Set this agent's webhook (url, events, enabled); the signing secret is shown once, on creation")
  )
  .add(
    HttpApiEndpoint.get("get", "/webhook")
      .addSuccess(WebhookConfig)
      .addError(NotFound)
      .annotate(RequiredPermission, null)
      .annotate(OpenApi.Summary, "This agent's webhook configuration and health (never the secret)")
  )
  .add(
    HttpApiEndpoint.del("remove", "/webhook")
      .addError(NotFound)
      .annotate(RequiredPermission, null)
      .annotate(OpenApi.Summary, "Delete this agent's webhook with its pending deliveries and delivery log")
  )
  .add(
    HttpApiEndpoint.post("rotateSecret", "/webhook/rotate-secret")
      .addSuccess(RotateSecretResponse)
      .addError(NotFound)
      .annotate(RequiredPermission, null)
      .annotate(OpenApi.Summary, "Rotate the signing secret (shown once); the previous one also signs for 24 hours")
  )
  .add(
    HttpApiEndpoint.post("test", "/webhook/test")
      .addSuccess(WebhookTestResponse, { status: 202 })
      .addError(NotFound)
      .addError(Conflict)
      .annotate(RequiredPermission, null)
      .annotate(OpenApi.Summary, "Queue a webhook.test event for this agent's endpoint")
  )
  .add(
    HttpApiEndpoint.get("deliveries", "/webhook/deliveries")
      .setUrlParams(DeliveriesUrlParams)
      .addSuccess(DeliveriesResponse)
      .annotate(RequiredPermission, null)
      .annotate(OpenApi.Summary, "Recent delivery attempts, newest first: event, attempt, status, response code, duration, error, next retry")
  )
  .add(
    HttpApiEndpoint.get("events", "/webhook/events")
      .addSuccess(EventCatalogueResponse)
      .annotate(RequiredPermission, null)
      .annotate(OpenApi.Summary, "The event catalogue: every event type with the JSON Schema of its payload")
  )
  .middleware(AgentAuth)
  .prefix("/api/v1/agent") {}
