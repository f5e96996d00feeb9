// The webhooks' network port: the URL policy and the one POST.
// The Node implementation is src/layers/webhooks/WebhookTransport.node.ts.
import { Context, type Effect } from "effect"
import type { InvalidInput } from "../../schema/platform/errors.js"

export interface WebhookRequest {
  readonly url: string
  readonly headers: Readonly<Record<string, string>>
  readonly body: string
  /** Keep the whole response body (up to the cap) for the caller: order pushes read the seller's answer. */
  readonly keepBody?: boolean
}

export interface WebhookResponse {
  /** A 2xx answer. */
  readonly ok: boolean
  readonly status: number | null
  readonly durationMs: number
  readonly error: string | null
  /** With `keepBody`: the body as UTF-8 when it arrived complete within the cap and the timeout. */
  readonly body?: string
}

export interface WebhookTransportService {
  /** Configuration-time check: syntax, scheme, and every address the host resolves to (400 naming the reason). */
  readonly check: (url: string) => Effect.Effect<void, InvalidInput>
  /** One POST: resolves and checks again, connects to the checked address, with timeout and body cap. Never fails. */
  readonly send: (request: WebhookRequest) => Effect.Effect<WebhookResponse>
  /**
   * The longest one `send` takes, resolution and connection included (WEBHOOK_TIMEOUT_MS): the leases
   * of order pushes and of notices are sized from it (purchases/push.ts pushLeaseMs, policy.ts batchLeaseMs).
   */
  readonly timeoutMs: number
}

export class WebhookTransport extends Context.Service<WebhookTransport, WebhookTransportService>()(
  "agent-commerce/WebhookTransport"
) {}
