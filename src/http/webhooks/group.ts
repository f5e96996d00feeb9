// Agent API v1 (spec §6): the calling agent's webhook endpoint, its secret, a test ping, the
// delivery log and the event catalogue. Managing the webhook (and reading its delivery log) needs
// webhooks:manage; the event catalogue is readable with any key.
import { HttpApiEndpoint, HttpApiGroup, OpenApi, HttpApiSchema } from "effect/http-api"
import { AGENT_API_PREFIX } from "../../schema/platform/routes.js"
import { Conflict, InvalidInput, NotFound, StorageUnavailable } from "../../schema/platform/errors.js"
import { DeliveriesResponse, DeliveriesUrlParams } from "../../schema/webhooks/deliveries.js"
import { EventCatalogueResponse } from "../../schema/webhooks/payloads.js"
import {
  PutWebhookBody,
  PutWebhookResponse,
  RotateSecretResponse,
  WebhookConfig,
  WebhookTestResponse
} from "../../schema/webhooks/endpoint.js"
import { AgentAuth, RequiredPermission } from "../middleware/auth.js"

export class WebhooksGroup extends HttpApiGroup.make("webhooks")
  .add(
    HttpApiEndpoint.put("put", "/webhook", {
      payload: PutWebhookBody,
      success: PutWebhookResponse,
      error: [InvalidInput, Conflict, StorageUnavailable]
    })
      .annotate(RequiredPermission, "webhooks:manage")
      .annotate(
        OpenApi.Summary,
        "Set this agent's webhook (url, events, enabled); the signing secret is shown once, on creation"
      )
  )
  .add(
    HttpApiEndpoint.get("get", "/webhook", {
      success: WebhookConfig,
      error: [InvalidInput, NotFound, StorageUnavailable]
    })
      .annotate(RequiredPermission, "webhooks:manage")
      .annotate(OpenApi.Summary, "This agent's webhook configuration and health (never the secret)")
  )
  .add(
    HttpApiEndpoint.delete("remove", "/webhook", { error: [InvalidInput, NotFound, StorageUnavailable] })
      .annotate(RequiredPermission, "webhooks:manage")
      .annotate(OpenApi.Summary, "Delete this agent's webhook with its pending deliveries and delivery log")
  )
  .add(
    HttpApiEndpoint.post("rotateSecret", "/webhook/rotate-secret", {
      success: RotateSecretResponse,
      error: [InvalidInput, NotFound, StorageUnavailable]
    })
      .annotate(RequiredPermission, "webhooks:manage")
      .annotate(OpenApi.Summary, "Rotate the signing secret (shown once); the previous one also signs for 24 hours")
  )
  .add(
    HttpApiEndpoint.post("test", "/webhook/test", {
      success: WebhookTestResponse.pipe(HttpApiSchema.status(202)),
      error: [InvalidInput, NotFound, Conflict, StorageUnavailable]
    })
      .annotate(RequiredPermission, "webhooks:manage")
      .annotate(OpenApi.Summary, "Queue a webhook.test event for this agent's endpoint")
  )
  .add(
    HttpApiEndpoint.get("deliveries", "/webhook/deliveries", {
      query: DeliveriesUrlParams,
      success: DeliveriesResponse,
      error: [InvalidInput, StorageUnavailable]
    })
      .annotate(RequiredPermission, "webhooks:manage")
      .annotate(
        OpenApi.Summary,
        "Recent delivery attempts, newest first: event, attempt, status, response code, duration, error, next retry"
      )
  )
  .add(
    HttpApiEndpoint.get("events", "/webhook/events", {
      success: EventCatalogueResponse,
      error: [InvalidInput, StorageUnavailable]
    })
      .annotate(RequiredPermission, null)
      .annotate(OpenApi.Summary, "The event catalogue: every event type with the JSON Schema of its payload")
  )
  .middleware(AgentAuth)
  .prefix(AGENT_API_PREFIX) {}
