// Every domain service, merged. Each service's own `layer` provides the services it uses (Effect
// builds that graph, sharing one instance of each), so nothing here depends on order: what is left
// open are the ports — stores and the Transactor, Ids, AppConfig, the PaymentProcessor and the
// WebhookTransport — which src/layers/app.ts chooses from config.
import { Layer } from "effect"
import { Keys } from "./Keys.js"
import { Events } from "./Events.js"
import { Idempotency } from "./Idempotency.js"
import { Knowledge } from "./Knowledge.js"
import { Ledger } from "./Ledger.js"
import { Marketplace } from "./Marketplace.js"
import { RateLimiter } from "./RateLimiter.js"
import { Builder } from "./Builder.js"
import { RuleEvaluatorLive } from "./Evaluator.js"
import { Invest } from "./Invest.js"
import { Projects } from "./Projects.js"
import { Sessions } from "./Sessions.js"
import { Discovery } from "./Discovery.js"
import { Payments } from "./Payments.js"
import { Negotiations } from "./Negotiation.js"
import { Sagas } from "./Saga.js"
import { Mpp } from "./Mpp.js"
import { Catalog, CatalogOffersLive } from "./Catalog.js"
import { Commerce, NegotiatedPricesLive } from "./Commerce.js"
import { Disputes } from "./Disputes.js"
import { Reputation } from "./Reputation.js"
import { Wallet } from "./Wallet.js"
import { Webhooks } from "./Webhooks.js"

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
 * (SeedOffersLive in src/services/Offers.ts reads the seed file instead, for tests without storage);
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
  Disputes.layer,
  Reputation.layer
).pipe(Layer.provideMerge(ServicePortsLive))
