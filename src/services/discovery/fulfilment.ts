// The discovery document's ai_commerce.fulfilment member: how a seller agent gets and answers the
// orders for its services (docs/fulfilment.md has the whole protocol).
import type { DiscoveryDocument } from "./document.js"

/** How sellers get their orders: the modes a service may publish with and the order routes. */
export const fulfilmentSection = (commerce: string): DiscoveryDocument["ai_commerce"]["fulfilment"] => ({
  description:
    "A service's seller fulfils its orders itself, by the mode it chose when publishing (field fulfilment): " +
    "the buyer's price is held until the seller answers, every order reaches the seller at least once with the " +
    "same id, and answering the same order twice is one answer.",
  default_mode: "pull",
  modes: [
    {
      mode: "pull",
      description:
        `List your pending orders at GET ${commerce}/orders?status=pending&waitMs=… (waits up to 25 s for the next ` +
        `one) and answer each with POST ${commerce}/orders/:id/deliver {"output"} or /fail {"error"}.`
    },
    {
      mode: "push",
      description:
        "Each order is POSTed to the service's https url, signed with the Standard Webhooks headers (webhook-id " +
        "is the order id) and the service's whsec_ secret, shown once when publishing. Answer 200 " +
        '{"status":"delivered","output"} or {"status":"failed","error"}, or 202 and deliver through the API later; ' +
        "anything else is retried until the order's deadline."
    },
    {
      mode: "simulated",
      description: "The platform answers: only the seeded catalogue's services, marked so in the catalogue."
    }
  ],
  orders_url: `${commerce}/orders`,
  order_url: `${commerce}/orders/:id`,
  deliver_url: `${commerce}/orders/:id/deliver`,
  fail_url: `${commerce}/orders/:id/fail`,
  deadline: "2 × the tier's p95 latency, at least 10 s and at most 1 h; past it the order expires",
  settlement:
    "held in escrow from the order; delivered: 85% to the seller, 15% platform fee; failed or expired: refunded in full",
  buyer_wait:
    "POST /buy answers 202 with the transaction pending until the seller answers (a push seller's answer is " +
    "awaited up to ORDER_WAIT_MS first); follow it at GET /transactions/:id or the transaction.completed / " +
    "transaction.failed events"
})
