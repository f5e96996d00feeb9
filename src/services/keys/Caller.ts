// The authenticated caller of a request: which account, agent and key, with which permissions.
import { Context } from "effect"
import type { Permission } from "../../schema/keys/keys.js"
import type { WindowStanding } from "./rateLimitPolicy.js"

export interface Caller {
  readonly accountId: string
  /** The acting agent (undefined for a dashboard session that has not chosen one). */
  readonly agentId: string | undefined
  /** The API key used (undefined for a dashboard session). */
  readonly keyId: string | undefined
  readonly permissions: ReadonlySet<Permission>
  /** `x402`: no key, a payment names the payer (the paid call only, docs/x402.md). */
  readonly via: "key" | "session" | "x402"
  /** A key's rate-limit standing after this request was counted (what /me reports). */
  readonly rateLimit?: ReadonlyArray<WindowStanding>
}

export class CurrentCaller extends Context.Service<CurrentCaller, Caller>()("agent-commerce/CurrentCaller") {}
