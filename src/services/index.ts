// Every domain service, merged; each needs only storage ports (and other services) from below.
import { Layer } from "effect"
import { Knowledge } from "./Knowledge.js"
import { Marketplace } from "./Marketplace.js"

export const ServicesLive = Layer.mergeAll(Marketplace.Default, Knowledge.Default)
