// MPP challenges: the payable offer, a fresh challenge issued and stored (its id the HMAC of its
// parameters), a credential read and bound, and the stored challenge it pays claimed.
import { Clock, Context, Effect, Layer } from "effect"
import { randomBytes } from "node:crypto"
import type { ChargeBelowMinimum, MppProblem, NotPayPerRequest } from "../../schema/mpp/problems.js"
import type { Challenge, ChallengeRecord } from "../../schema/mpp/challenge.js"
import { InvalidInput, type NotFound, type StorageUnavailable } from "../../schema/platform/errors.js"
import { CHALLENGE_TTL_MS, CHARGE_INTENT, CREDITS_METHOD, MPP_REALM } from "../../schema/mpp/protocol.js"
import { type Offer, Offers, type OffersService } from "../purchases/Offers.js"
import { AppConfig } from "../platform/AppConfig.js"
import { KeysStore } from "../keys/KeysStore.js"
import { PLATFORM_SELLERS_ACCOUNT } from "../../schema/keys/keys.js"
import { sameAccountRefusal } from "../purchases/Purchases.js"
import { Transactor } from "../platform/Db.js"
import { b64url, canonical, type EchoedChallenge, parseCredential, toChallenge } from "./encoding.js"
import { MppStore } from "./MppStore.js"
import { chargeRequest, MAX_OPEN_CHALLENGES_PER_AGENT, offerRefusal, type Refusal } from "./policy.js"
import { challengeKey, challengeSigner } from "./signing.js"

/** Who pays: the calling agent and the key it called with (a challenge is bound to both). */
export interface Payer {
  readonly agentId: string
  readonly keyId: string
}

export interface ChallengesService {
  /** The catalogue's offers the challenges price (the purchase domain's port). */
  readonly offers: OffersService
  /** The offer, checked for pay-per-request: per_call, at least the minimum charge, not the caller's own. */
  readonly payableOffer: (
    agentId: string,
    serviceId: string,
    tierId: string | undefined
  ) => Effect.Effect<Offer, NotPayPerRequest | ChargeBelowMinimum | InvalidInput | NotFound | StorageUnavailable>
  /**
   * Stores a fresh challenge for this agent, key, offer and body; its id is the HMAC of its
   * parameters (with a random nonce in `opaque`, so no two challenges share an id).
   */
  readonly issue: (
    caller: Payer,
    offer: Offer,
    digest: string,
    header: string | undefined
  ) => Effect.Effect<Challenge, StorageUnavailable>
  /**
   * The stored challenge a credential pays, locked for this unit of work, or why it cannot pay:
   * it must be this agent's and key's, open, not expired, as echoed, for this offer and body.
   */
  readonly claimable: (
    who: Payer,
    echoed: EchoedChallenge,
    offer: Offer,
    digest: string
  ) => Effect.Effect<ChallengeRecord | Refusal, StorageUnavailable>
  /** The credential parsed and bound (method, HMAC of its parameters), or why not. */
  readonly readCredential: (credential: string) => { readonly echoed: EchoedChallenge } | Refusal
}

const make = Effect.gen(function* () {
  const store = yield* MppStore
  const offers = yield* Offers
  const { atomically } = yield* Transactor
  const config = yield* AppConfig
  const keys = yield* KeysStore
  const { challengeId, bound } = challengeSigner(challengeKey(config.mppChallengeSecret))

  /** The offer, checked for pay-per-request: per_call, at least the minimum charge, not the caller's own. */
  const payableOffer = Effect.fnUntraced(function* (agentId: string, serviceId: string, tierId: string | undefined) {
    const offer = yield* offers.get(serviceId, tierId)
    const refused = offerRefusal(offer, serviceId, agentId)
    if (refused) return yield* Effect.fail(refused)
    // No challenge is issued for a call its purchase would refuse: the agents of one account do not trade.
    const [buyer, seller] = yield* keys
      .getAgents([agentId, offer.service.sellerAgentId])
      .pipe(Effect.map((agents) => [agentId, offer.service.sellerAgentId].map((id) => agents.find((a) => a.id === id))))
    if (buyer !== undefined && buyer.accountId === seller?.accountId && buyer.accountId !== PLATFORM_SELLERS_ACCOUNT) {
      return yield* new InvalidInput({ message: sameAccountRefusal, field: "id" })
    }
    return offer
  })

  /**
   * Stores a fresh challenge for this agent, key, offer and body; its id is the HMAC of its
   * parameters (with a random nonce in `opaque`, so no two challenges share an id).
   */
  const issue = Effect.fnUntraced(function* (caller: Payer, offer: Offer, digest: string, header: string | undefined) {
    const now = yield* Clock.currentTimeMillis
    const base = {
      agentId: caller.agentId,
      keyId: caller.keyId,
      serviceId: offer.service.id,
      tierId: offer.tier.id,
      sellerAgentId: offer.service.sellerAgentId,
      amountCents: offer.tier.priceCents
    }
    const decoded = chargeRequest(base, offer)
    const request = b64url(canonical({ ...decoded }))
    const expiresAt = new Date(now + CHALLENGE_TTL_MS).toISOString()
    const opaque = b64url(canonical({ nonce: randomBytes(16).toString("base64url") }))
    const id = challengeId({
      realm: MPP_REALM,
      method: CREDITS_METHOD,
      intent: CHARGE_INTENT,
      request,
      expires: expiresAt,
      digest,
      header,
      opaque
    })
    const record: ChallengeRecord = {
      ...base,
      id,
      request,
      digest,
      status: "open",
      expiresAt,
      createdAt: new Date(now).toISOString(),
      paidAt: null,
      entryId: null,
      transactionId: null
    }
    yield* store.pruneOpen(caller.agentId, record.createdAt, MAX_OPEN_CHALLENGES_PER_AGENT - 1)
    yield* store.insert(record)
    return toChallenge(record, decoded, { header, opaque })
  }, atomically)

  /**
   * The stored challenge a credential pays, locked for this unit of work, or why it cannot pay:
   * it must be this agent's and key's, open, not expired, as echoed, for this offer and body.
   */
  const claimable = Effect.fnUntraced(function* (who: Payer, echoed: EchoedChallenge, offer: Offer, digest: string) {
    const refuse = (refused: MppProblem, message: string): Refusal => ({ refused, message })
    const now = yield* Clock.currentTimeMillis
    const row = yield* store.getForUpdate(echoed.id)
    if (!row || row.agentId !== who.agentId || row.keyId !== who.keyId) {
      return refuse("invalid-challenge", "unknown challenge id (challenges are bound to the key they were issued to)")
    }
    if (row.status === "paid") {
      const message = `challenge ${row.id} was already used (paid at ${row.paidAt}); a credential cannot be replayed`
      return refuse("invalid-challenge", message)
    }
    if (Date.parse(row.expiresAt) <= now) {
      return refuse("payment-expired", `challenge ${row.id} expired at ${row.expiresAt}`)
    }
    // The id binds the echoed parameters; the stored row must be what they say.
    const same =
      echoed.realm === MPP_REALM &&
      echoed.request === row.request &&
      echoed.expires === row.expiresAt &&
      echoed.digest === row.digest
    if (!same) {
      const message = "the credential's echoed challenge parameters do not match the challenge issued"
      return refuse("verification-failed", message)
    }
    if (row.serviceId !== offer.service.id || row.tierId !== offer.tier.id || row.digest !== digest) {
      return refuse("verification-failed", "the challenge was issued for another service, tier or request body")
    }
    return row
  })

  /** The credential parsed and bound (method, HMAC of its parameters), or why not. */
  const readCredential = (credential: string): { readonly echoed: EchoedChallenge } | Refusal => {
    const parsed = parseCredential(credential)
    if (!parsed) {
      const message = `the credential is not "Payment <base64url JSON>" with a challenge object`
      return { refused: "malformed-credential", message }
    }
    const echoed = parsed.challenge
    if (echoed.method !== CREDITS_METHOD || echoed.intent !== CHARGE_INTENT) {
      const message =
        `${String(echoed.method)}/${String(echoed.intent)} is not accepted here; ` +
        `pay with ${CREDITS_METHOD}/${CHARGE_INTENT}`
      return { refused: "method-unsupported", message }
    }
    if (!bound(echoed)) {
      const message = "the challenge id is not the binding of its parameters: it was not issued here, or was altered"
      return { refused: "invalid-challenge", message }
    }
    return { echoed }
  }

  return Challenges.of({ offers, payableOffer, issue, claimable, readCredential })
})

export class Challenges extends Context.Service<Challenges, ChallengesService>()("agent-commerce/MppChallenges") {
  /** Its ports (the challenge store, Offers, the Transactor, the config) stay open. */
  static readonly layer = Layer.effect(Challenges, make)
}
