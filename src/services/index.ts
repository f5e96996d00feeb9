// Every domain service, merged; each needs only storage ports (and other services) from below.
import { Layer } from "effect"
import { Keys } from "./Keys.js"
import { Events } from "./Events.js"
import { Idempotency } from "./Idempotency.js"
import { Knowledge } from "./Knowledge.js"
import { Ledger } from "./Ledger.js"
import { Marketplace } from "./Marketplace.js"
import { RateLimiter } from "./RateLimiter.js"

export const ServicesLive = Layer.mergeAll(Marketplace.Default, Knowledge.Default, Keys.Default, RateLimiter.Default, Ledger.Default, Events.Default, Idempotency.Default)
