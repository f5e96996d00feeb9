// Every domain service, merged. Each service's own `layer` provides the services it uses (Effect
// builds that graph, sharing one instance of each), so nothing here depends on order: what is left
// open are the ports — stores and the Transactor, Ids, AppConfig, the PaymentProcessor and the
// WebhookTransport — which src/layers/app.ts chooses from config.
import { Layer } from "effect"
import { Keys } from "./keys/Keys.js"
import { Events } from "./events/Events.js"
import { Idempotency } from "./idempotency/Idempotency.js"
import { Knowledge } from "./knowledge/Knowledge.js"
import { Ledger } from "./ledger/Ledger.js"
import { Marketplace } from "./marketplace/Marketplace.js"
import { RateLimiter } from "./keys/RateLimiter.js"
import { Builder } from "./projects/Builder.js"
import { RuleEvaluatorLive } from "./projects/Evaluator.js"
import { Invest } from "./invest/Invest.js"
import { Projects } from "./projects/Projects.js"
import { Sessions } from "./sessions/Sessions.js"
import { Discovery } from "./discovery/Discovery.js"
import { Payments } from "./payments/Payments.js"
import { Negotiations } from "./negotiation/Negotiation.js"
import { Sagas } from "./saga/Saga.js"
import { Mpp } from "./mpp/Mpp.js"
import { Catalog, CatalogOffersLive } from "./commerce/Catalog.js"
import { Commerce } from "./commerce/Commerce.js"
import { NegotiatedPricesLive } from "./commerce/NegotiatedPrices.js"
import { PaidPurchases } from "./commerce/PaidPurchases.js"
import { Disputes } from "./commerce/Disputes.js"
import { Reputation } from "./reputation/Reputation.js"
import { Wallet } from "./wallet/Wallet.js"
import { Webhooks } from "./webhooks/Webhooks.js"

export const ServicesLive = Layer.mergeAll(Marketplace.layer, Knowledge.layer, Keys.layer, RateLimiter.layer, Ledger.layer, Events.layer, Idempotency.layer, Catalog.layer)

/** Projects, builder, sessions, investment, discovery; the evaluator is its own layer (swap RuleEvaluatorLive for a model-backed one). */
export const ProjectServicesLive = Layer.mergeAll(Sessions.layer, Invest.layer, Discovery.layer).pipe(
  Layer.provideMerge(Layer.mergeAll(Projects.layer, Builder.layer)),
  Layer.provideMerge(RuleEvaluatorLive)
)

/** Negotiation, the purchase saga and pay-per-request (MPP); they need the Offers port below them (OffersLive). */
export const NegotiationServicesLive = Layer.mergeAll(Sagas.layer, Mpp.layer).pipe(Layer.provideMerge(Negotiations.layer))

/** Outgoing webhooks; needs a WebhookTransport (NodeWebhookTransport, chosen in src/layers/app.ts) below it. */
export const WebhookServicesLive = Webhooks.layer

/**
 * Ports implemented by services: negotiation, sagas and MPP read offers from the commerce catalog
 * (SeedOffersLive in src/services/commerce/Offers.ts reads the seed file instead, for tests without storage);
 * Commerce reads negotiated prices from Negotiations; projects are scored by the rule evaluator
 * (swap RuleEvaluatorLive for a model-backed one).
 */
const OffersFromCatalogLive = CatalogOffersLive.pipe(Layer.provide(Catalog.layer))
const ServicePortsLive = Layer.mergeAll(
  OffersFromCatalogLive,
  NegotiatedPricesLive.pipe(Layer.provide(Negotiations.layer), Layer.provide(OffersFromCatalogLive)),
  RuleEvaluatorLive
)

/** Every domain service, needing only the storage, payment, transport, id and config ports. */
export const DomainServicesLive = Layer.mergeAll(
  Marketplace.layer,
  Knowledge.layer,
  Keys.layer,
  RateLimiter.layer,
  Ledger.layer,
  Events.layer,
  Idempotency.layer,
  Catalog.layer,
  Payments.layer,
  Projects.layer,
  Builder.layer,
  Sessions.layer,
  Invest.layer,
  Discovery.layer,
  Negotiations.layer,
  Sagas.layer,
  Mpp.layer,
  Webhooks.layer,
  Wallet.layer,
  Commerce.layer,
  PaidPurchases.layer,
  Disputes.layer,
  Reputation.layer
).pipe(Layer.provideMerge(ServicePortsLive))
