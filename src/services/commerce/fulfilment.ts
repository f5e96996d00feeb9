// Which fulfilment a seller may give its service, and the push signing secret that goes with it.
// The push url's address check (the webhooks' SSRF guard) is Publishing's, before this runs.
import { Effect } from "effect"
import { PLATFORM_SELLERS_ACCOUNT } from "../../schema/keys/keys.js"
import type { FulfilmentBody, StoredFulfilment } from "../../schema/commerce/services.js"
import { InvalidInput } from "../../schema/platform/errors.js"
import type { Caller } from "../keys/Caller.js"

/** Bytes of randomness in a push signing secret (`whsec_` + base64), as for webhook endpoints. */
export const FULFILMENT_SECRET_BYTES = 32

export const PULL: StoredFulfilment = { mode: "pull", url: null, secret: null }
export const SIMULATED: StoredFulfilment = { mode: "simulated", url: null, secret: null }

/** A new push signing secret in the Standard Webhooks form (`whsec_` + base64). */
export const newFulfilmentSecret = (random: (bytes: number) => Effect.Effect<string>) =>
  Effect.map(
    random(FULFILMENT_SECRET_BYTES),
    (b64url) => `whsec_${Buffer.from(b64url, "base64url").toString("base64")}`
  )

/**
 * The fulfilment stored for what the seller asked, and the secret to show it (only when one was just
 * made). `simulated` is the platform's own sellers' mode: from any other agent it would let the
 * platform invent deliveries in that seller's name, so it is refused. A push service keeps its secret
 * while its url stays the same; a new url gets a new secret.
 */
export const resolveFulfilment = (
  caller: Caller,
  asked: FulfilmentBody,
  current: StoredFulfilment | undefined,
  newSecret: Effect.Effect<string>
): Effect.Effect<{ readonly fulfilment: StoredFulfilment; readonly shownSecret: string | undefined }, InvalidInput> => {
  const url = asked.url?.trim()
  if (asked.mode === "simulated" && caller.accountId !== PLATFORM_SELLERS_ACCOUNT) {
    return Effect.fail(
      new InvalidInput({
        message: "simulated fulfilment is only for the platform's own sellers; use pull or push",
        field: "fulfilment.mode"
      })
    )
  }
  if (asked.mode !== "push") {
    return url === undefined
      ? Effect.succeed({ fulfilment: asked.mode === "pull" ? PULL : SIMULATED, shownSecret: undefined })
      : Effect.fail(new InvalidInput({ message: "only push fulfilment takes a url", field: "fulfilment.url" }))
  }
  if (url === undefined || url === "") {
    return Effect.fail(
      new InvalidInput({ message: "push fulfilment needs the https url orders are posted to", field: "fulfilment.url" })
    )
  }
  if (current?.mode === "push" && current.url === url && current.secret !== null) {
    return Effect.succeed({ fulfilment: current, shownSecret: undefined })
  }
  return Effect.map(newSecret, (secret) => ({
    fulfilment: { mode: "push" as const, url, secret },
    shownSecret: secret
  }))
}
