// The one place that reads the config and assembles the application: storage, payments, services, HTTP.
import { NodeHttpServer } from "@effect/platform-node"
import { ByteSize, Effect, Layer, Logger, References } from "effect"
import { HttpMiddleware, HttpRouter, HttpServer, HttpIncomingMessage } from "effect/http"
import { HttpApiBuilder } from "effect/http-api"
import { createServer } from "node:http"
import { Api } from "../http/api.js"
import { HandlersLive } from "../http/handlers.js"
import { GlobalMiddlewareLive } from "../http/middleware/global.js"
import { ROUTER_CONFIG } from "../http/routePath.js"
import { SiteRoutesLive } from "../http/site/routes.js"
import { SiteAssets } from "../http/site/assets.js"
import { ApiDocsRoutesLive } from "../http/site/apiDocs.js"
import { FaviconLive } from "../http/site/favicon.js"
import { AgentFilesLive } from "../http/site/agentFiles.js"
import { CheckoutRoutesLive } from "../http/site/checkout.js"
import { McpRoutesLive } from "../http/mcp/routes.js"
import { A2aRoutesLive } from "../http/a2a/routes.js"
import { A2aPushWorkerLive } from "../http/a2a/push.js"
import { AcpOrderEventsWorkerLive } from "../services/acp/AcpOrderEvents.js"
import { AcpRoutesLive } from "../http/acp/routes.js"
import { ProcedureAuthLive } from "../http/trpc/auth.js"
import { trpcRoutes } from "../http/trpc/adapter.js"
import { procedures } from "../http/procedures.js"
import { AppConfig } from "../services/platform/AppConfig.js"
import { Ids, Transactor } from "../services/platform/Db.js"
import { Keys } from "../services/keys/Keys.js"
import { Events } from "../services/events/Events.js"
import { Idempotency } from "../services/idempotency/Idempotency.js"
import { WriteReceipts } from "../services/idempotency/WriteReceipts.js"
import { Knowledge } from "../services/knowledge/Knowledge.js"
import { Ledger } from "../services/ledger/Ledger.js"
import { Marketplace } from "../services/marketplace/Marketplace.js"
import { RateLimiter } from "../services/keys/RateLimiter.js"
import { Builder } from "../services/projects/Builder.js"
import { RuleEvaluatorLive } from "../services/projects/Evaluator.js"
import { Governance } from "../services/invest/Governance.js"
import { Invest } from "../services/invest/Invest.js"
import { Projects } from "../services/projects/Projects.js"
import { Sessions } from "../services/sessions/Sessions.js"
import { AcpCheckout } from "../services/acp/AcpCheckout.js"
import { Discovery } from "../services/discovery/Discovery.js"
import { Payments } from "../services/payments/Payments.js"
import { Negotiations } from "../services/negotiation/Negotiation.js"
import { Sagas } from "../services/saga/Saga.js"
import { Mpp } from "../services/mpp/Mpp.js"
import { Catalog, CatalogOffersLive } from "../services/commerce/Catalog.js"
import { Publishing } from "../services/commerce/Publishing.js"
import { Commerce } from "../services/commerce/Commerce.js"
import { NegotiatedPricesLive } from "../services/negotiation/NegotiatedPricesLive.js"
import { SagaOrderOwnersLive } from "../services/saga/SagaOrderOwners.js"
import { AcpRefundListenersLive } from "../services/acp/AcpRefundListeners.js"
import { PaidPurchases } from "../services/mpp/PaidPurchases.js"
import { X402 } from "../services/x402/X402.js"
import { X402WorkerLive } from "./x402/X402Worker.js"
import { X402PortsLive } from "./x402/X402Ports.js"
import { Disputes } from "../services/commerce/Disputes.js"
import { Reputation } from "../services/reputation/Reputation.js"
import { Wallet } from "../services/wallet/Wallet.js"
import { Audit } from "../services/audit/Audit.js"
import { Overview } from "../services/audit/Overview.js"
import { WebhookDelivery } from "../services/webhooks/WebhookDelivery.js"
import { Webhooks } from "../services/webhooks/Webhooks.js"
import { DisputeWorkerLive } from "../services/commerce/Disputes.js"
import { Orders } from "../services/purchases/Orders.js"
import { SellerBoard } from "../services/purchases/SellerBoard.js"
import { CommerceSeedLive } from "./seed/seedCommerce.js"
import { WebhookWorkerLive } from "../services/webhooks/WebhookWorker.js"
import { PushWorkerLive } from "../services/purchases/PushWorker.js"
import { NegotiationWorkerLive } from "../services/negotiation/worker.js"
import { SagaWorkerLive } from "../services/saga/worker.js"
import { BuilderWorkerLive } from "../services/projects/Builder.js"
import { seedCatalogProjects } from "../services/projects/Projects.js"
import { SeedLive } from "./seed/seed.js"
import { EmbeddedStorageLive, MemoryStorageLive, PgStorageLive } from "./stores.js"
import { FakeProcessorLive } from "./payments/PaymentProcessor.fake.js"
import { Refusals } from "../services/refusals/Refusals.js"
import { StripeProcessorLive } from "./payments/PaymentProcessor.stripe.js"
import { FakeDelegatedPaymentsLive } from "./payments/DelegatedPayments.fake.js"
import { StripeDelegatedPaymentsLive } from "./payments/DelegatedPayments.stripe.js"
import { NodeWebhookTransport } from "./webhooks/WebhookTransport.node.js"
import { FakeCheckout } from "../services/payments/FakeCheckout.js"
import { WebhookTransport } from "../services/webhooks/WebhookTransport.js"
import { PushConfigStore } from "../services/a2a/PushConfigStore.js"
import { X402TaskStore } from "../services/a2a/X402TaskStore.js"
import { keepingOnly, seeingOnly } from "../http/servedContext.js"

/**
 * Ports implemented by services above the domain that declares them: purchases, negotiation, sagas
 * and MPP read offers from the commerce catalog (SeedOffersLive in src/services/purchases/Offers.ts
 * reads the seed file instead, for tests without storage); purchases redeem negotiated prices through
 * Negotiations and tell a saga that its order ended (SagaOrderOwnersLive); a dispute's refund tells an
 * ACP checkout session's order events (AcpRefundListenersLive); projects are scored by the
 * rule evaluator (swap RuleEvaluatorLive for a model-backed one).
 */
const OffersFromCatalogLive = CatalogOffersLive.pipe(Layer.provide(Catalog.layer))
const ServicePortsLive = Layer.mergeAll(
  OffersFromCatalogLive,
  NegotiatedPricesLive.pipe(Layer.provide(Negotiations.layer), Layer.provide(OffersFromCatalogLive)),
  SagaOrderOwnersLive,
  AcpRefundListenersLive,
  RuleEvaluatorLive
)

/** Every domain service, needing only the storage, payment, transport, id and config ports. */
const DomainServicesLive = Layer.mergeAll(
  Marketplace.layer,
  Knowledge.layer,
  Keys.layer,
  RateLimiter.layer,
  Ledger.layer,
  Events.layer,
  Idempotency.layer,
  WriteReceipts.layer,
  Catalog.layer,
  Publishing.layer,
  Payments.layer,
  Projects.layer,
  Builder.layer,
  Sessions.layer,
  Invest.layer,
  Governance.layer,
  Discovery.layer,
  Negotiations.layer,
  Sagas.layer,
  Mpp.layer,
  Webhooks.layer,
  WebhookDelivery.layer,
  Wallet.layer,
  Audit.layer,
  Overview.layer,
  Refusals.layer,
  Commerce.layer,
  AcpCheckout.layer,
  Orders.layer,
  SellerBoard.layer,
  PaidPurchases.layer,
  X402.layer,
  Disputes.layer,
  Reputation.layer
).pipe(Layer.provideMerge(ServicePortsLive))

/** Storage chosen by STORAGE: every store port plus the Transactor. */
export const StorageLive = Layer.unwrap(
  Effect.map(AppConfig, (config) =>
    config.storage === "postgres"
      ? PgStorageLive
      : config.storage === "embedded"
        ? EmbeddedStorageLive
        : MemoryStorageLive
  )
)

/** Payment processor chosen by PAYMENTS: the PaymentProcessor port (and the fake's hosted page). */
export const PaymentProcessorLive = Layer.unwrap(
  Effect.map(AppConfig, (config) =>
    config.payments === "stripe"
      ? Layer.merge(StripeProcessorLive, StripeDelegatedPaymentsLive)
      : Layer.merge(FakeProcessorLive, FakeDelegatedPaymentsLive)
  )
)

/** The ports chosen from config: storage (stores and Transactor), payment processor, webhook transport, ids. */
export const PortsLive = Layer.mergeAll(PaymentProcessorLive, NodeWebhookTransport, X402PortsLive).pipe(
  Layer.provideMerge(StorageLive),
  Layer.provideMerge(Ids.Live)
)

/** Seed data, loaded into the stores at every start (idempotent). */
const SeedsLive = Layer.mergeAll(SeedLive, CommerceSeedLive)

/** Background workers (each a no-op when WORKERS=false) and the seeded catalogue projects. */
const WorkersLive = Layer.mergeAll(
  BuilderWorkerLive,
  NegotiationWorkerLive,
  SagaWorkerLive,
  WebhookWorkerLive,
  PushWorkerLive,
  A2aPushWorkerLive,
  AcpOrderEventsWorkerLive,
  X402WorkerLive,
  DisputeWorkerLive,
  Layer.effectDiscard(seedCatalogProjects.pipe(Effect.orDie))
)

/** Services with storage, seeded, workers running. Needs AppConfig. */
export const CoreLive = Layer.mergeAll(WorkersLive, SiteAssets.layer).pipe(
  Layer.provideMerge(DomainServicesLive),
  Layer.provideMerge(SeedsLive),
  Layer.provideMerge(PortsLive)
)

/** Every route: the HttpApi, its OpenAPI document and docs (ApiDocsRoutesLive), procedures, site files. */
export const RoutesLive = Layer.mergeAll(
  HttpApiBuilder.layer(Api).pipe(Layer.provide(HandlersLive)),
  ApiDocsRoutesLive,
  FaviconLive,
  trpcRoutes(procedures),
  SiteRoutesLive,
  AgentFilesLive,
  CheckoutRoutesLive,
  McpRoutesLive,
  A2aRoutesLive,
  AcpRoutesLive
).pipe(Layer.provide(GlobalMiddlewareLive))

const logListening = Effect.gen(function* () {
  const server = yield* HttpServer.HttpServer
  const config = yield* AppConfig
  const a = server.address
  const address = a._tag === "UnixPathAddress" ? "unix socket" : `${String(a.address)}:${a.port}`
  yield* Effect.logInfo(
    `listening on ${address} (base url ${config.baseUrl}, storage ${config.storage}, payments ${config.payments})`
  )
})

/** Request-level services the routes ask for (the adapters' ports). */
const AdaptersLive = ProcedureAuthLive

/**
 * The backstop body limit (MAX_BODY_BYTES) as a service of the server's context, once, rather than
 * provided per request: the global middleware answers 413 from Content-Length before any body is read.
 */
const MaxBodySizeLive = Layer.effect(
  HttpIncomingMessage.MaxBodySize,
  Effect.map(AppConfig, (config) => ByteSize.bytes(config.maxBodyBytes))
)

/** No trace exporter is configured: the per-request span costs throughput for nothing. */
const TracerOffLive = Layer.succeed(HttpMiddleware.TracerDisabledWhen, () => true)

/** The routes served on an HttpServer, with what they ask of the request scope; services come from below. */
/**
 * LOG_LEVEL governs what the app logs whoever builds it (main, tests, tools): request fibers read
 * the minimum level from the context the server was started in.
 */
const MinimumLogLevelLive = Layer.unwrap(
  Effect.map(AppConfig, (config) => Layer.succeed(References.MinimumLogLevel, config.logLevel))
)

/**
 * The app's services the HTTP server sees: config, ids, the unit of work and the domain services;
 * not the stores and ports beneath them, which every request would otherwise carry
 * (src/http/servedContext.ts). The exceptions are what routes use directly today: the fake
 * processor's hosted page (FakeCheckout), A2A's push configs and x402 tasks, and the push's
 * transport. The compiler checks the list against what the routes require.
 */
const HTTP_SERVICES = [
  AppConfig,
  Ids,
  Transactor,
  SiteAssets,
  FakeCheckout,
  PushConfigStore,
  X402TaskStore,
  WebhookTransport,
  Marketplace,
  Knowledge,
  Keys,
  RateLimiter,
  Idempotency,
  WriteReceipts,
  Catalog,
  Publishing,
  Payments,
  Projects,
  Builder,
  Sessions,
  Invest,
  Governance,
  Discovery,
  Negotiations,
  Sagas,
  Mpp,
  Webhooks,
  Wallet,
  Audit,
  Overview,
  Refusals,
  Commerce,
  AcpCheckout,
  Orders,
  SellerBoard,
  PaidPurchases,
  X402,
  Disputes,
  Reputation
] as const

/** A context cut to what the HTTP server sees (for a harness that serves RoutesLive itself: bench/requestPath.ts). */
export const keepHttpServices = keepingOnly(...HTTP_SERVICES)

export const HttpLive = HttpRouter.serve(RoutesLive, {
  disableLogger: true,
  disableListenLog: true,
  routerConfig: ROUTER_CONFIG
}).pipe(
  Layer.provide([TracerOffLive, MaxBodySizeLive, AdaptersLive, MinimumLogLevelLive]),
  seeingOnly(...HTTP_SERVICES)
)

/** The app on a given HttpServer: routes, services, storage. Needs AppConfig and an HttpServer. */
export const AppLive = HttpLive.pipe(Layer.provideMerge(CoreLive))

/**
 * The HTTP server on the configured port, with everything it needs except AppConfig. Storage,
 * migrations, seeding and services are built first and the port is bound after them, so a request
 * never reaches a server that cannot answer it yet, and a bad database fails before "listening".
 */
export const ServerLive = (port: number) =>
  Layer.mergeAll(HttpLive, Layer.effectDiscard(logListening)).pipe(
    Layer.provide(NodeHttpServer.layer(createServer, { port, gracefulShutdownTimeout: "5 seconds" })),
    Layer.provideMerge(CoreLive)
  )

export const LoggerLive = Layer.unwrap(
  Effect.map(AppConfig, (config) =>
    Layer.mergeAll(
      Logger.layer([config.logFormat === "json" ? Logger.consoleJson : Logger.consolePretty()]),
      Layer.succeed(References.MinimumLogLevel, config.logLevel)
    )
  )
)
