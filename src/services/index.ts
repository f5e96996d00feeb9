// Every domain service, merged; each needs only storage ports (and other services) from below.
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

export const ServicesLive = Layer.mergeAll(Marketplace.Default, Knowledge.Default, Keys.Default, RateLimiter.Default, Ledger.Default, Events.Default, Idempotency.Default)

/** Projects, builder, sessions, investment; the evaluator is its own layer (swap RuleEvaluatorLive for a model-backed one). */
export const ProjectServicesLive = Layer.mergeAll(Sessions.Default, Invest.Default).pipe(
  Layer.provideMerge(Layer.mergeAll(Projects.Default, Builder.Default)),
  Layer.provideMerge(RuleEvaluatorLive)
)
