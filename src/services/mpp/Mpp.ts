// Mpp: pay-per-request over HTTP 402 with the internal credit method, following the MPP "Payment"
// HTTP authentication scheme: an HMAC-bound, stored, single-use challenge bound to the agent, key,
// service, tier and request body; a credential that echoes it; one ledger charge and a receipt.
import { traced } from "../platform/Tracing.js"
import { Clock, Context, Data, Effect, Layer, Option, Redacted } from "effect"
import type { HowToFund, InsufficientCredits } from "../../schema/commerce/wallets.js"
import type { Purchase } from "../../schema/commerce/approvals.js"
import type { NotFound } from "../../schema/platform/errors.js"
import { createHash, createHmac, randomBytes, timingSafeEqual } from "node:crypto"
import { AppConfig } from "../platform/AppConfig.js"
import { InvalidInput, type StorageUnavailable } from "../../schema/platform/errors.js"
import { PLATFORM_FEES, walletAccount } from "../../schema/ledger/ledger.js"
import {
  ApprovalRequired,
  ChargeBelowMinimum,
  type MppProblem,
  NotPayPerRequest,
  PaymentRequired,
  SellerFailed
} from "../../schema/mpp/problems.js"
import {
  type Challenge,
  type ChallengeRecord,
  type ChargeRequest,
  InvokeResult,
  type Receipt
} from "../../schema/mpp/challenge.js"
import {
  CHALLENGE_TTL_MS,
  API_KEY_HEADER,
  CHARGE_INTENT,
  CREDENTIAL_HEADER,
  CREDITS_METHOD,
  MPP_CURRENCY,
  MPP_MINIMUM_CHARGE_CENTS,
  MPP_REALM,
  MppDiscovery,
  MppHealth,
  paymentMethods,
  RECEIPT_HEADER
} from "../../schema/mpp/protocol.js"
import type { Caller } from "../keys/Caller.js"
import { simulateDelivery } from "../commerce/Catalog.js"
import { noReferences, Settlement } from "../commerce/Settlement.js"
import { atomically, Ids, type Transactor } from "../platform/Db.js"
import { Ledger } from "../ledger/Ledger.js"
import { deliveryModes, type Offer, Offers, simulatedOutput } from "../commerce/Offers.js"
import { KeysStore } from "../keys/Keys.js"
import { Wallet } from "../wallet/Wallet.js"

/** Storage port for MPP challenges. */
export class MppStore extends Context.Service<
  MppStore,
  {
    readonly insert: (record: ChallengeRecord) => Effect.Effect<void, StorageUnavailable>
    /** The row, locked for this unit of work. */
    readonly getForUpdate: (id: string) => Effect.Effect<ChallengeRecord | undefined, StorageUnavailable>
    readonly update: (record: ChallengeRecord) => Effect.Effect<void, StorageUnavailable>
    /**
     * Deletes the agent's open challenges that expired at or before `nowIso`, and all but the
     * newest `keep` of those still open, so one agent cannot grow the store without bound.
     */
    readonly pruneOpen: (agentId: string, nowIso: string, keep: number) => Effect.Effect<void, StorageUnavailable>
    /** The most recently paid challenges (for the health check's ledger sample). */
    readonly recentPaid: (limit: number) => Effect.Effect<ReadonlyArray<ChallengeRecord>, StorageUnavailable>
    /** A round trip to the storage (a trivial read). */
    readonly ping: Effect.Effect<void, StorageUnavailable>
  }
>()("MppStore") {}

/**
 * Open (unpaid, unexpired) challenges kept per agent. Issuing one more drops the oldest; a
 * credential for a dropped challenge is refused like an unknown one (402 invalid-challenge).
 */
export const MAX_OPEN_CHALLENGES_PER_AGENT = 100

/** base64url without padding. */
const b64url = (s: string) => Buffer.from(s, "utf8").toString("base64url")
/** JSON with sorted keys and no whitespace: RFC 8785 (JCS) for objects of strings. */
const canonical = (o: Record<string, string>) => JSON.stringify(Object.fromEntries(Object.keys(o).sort().map((k) => [k, o[k]])))
/** RFC 9530 Content-Digest value of a body: SHA-256 over its bytes, as a structured-field byte sequence. */
export const contentDigest = (body: string | Uint8Array) =>
  `sha-256=:${createHash("sha256").update(typeof body === "string" ? Buffer.from(body, "utf8") : body).digest("base64")}:`

/** JSON with object keys sorted at every level (JCS-like): the same content always gives the same text. */
export const canonicalJson = (value: unknown): string => {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`
  if (typeof value === "object" && value !== null) {
    const o = value as Record<string, unknown>
    return `{${Object.keys(o)
      .filter((k) => o[k] !== undefined)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonicalJson(o[k])}`)
      .join(",")}}`
  }
  return JSON.stringify(value ?? null)
}

const quote = (v: string) => `"${v.replace(/\\/g, "\\\\").replace(/"/g, '\\"')}"`

/**
 * The WWW-Authenticate value of a challenge (RFC 9110 auth-params), in mppx's parameter order;
 * `header` only when it is not the default `Authorization`.
 */
export const wwwAuthenticate = (c: Challenge) =>
  `Payment id=${quote(c.id)}, realm=${quote(c.realm)}, method=${quote(c.method)}, intent=${quote(c.intent)}, request=${quote(c.request)}, ` +
  `digest=${quote(c.digest)}, expires=${quote(c.expires)}${c.header !== undefined ? `, header=${quote(c.header)}` : ""}, opaque=${quote(c.opaque)}`

/**
 * What the challenge id is an HMAC of (the binding mppx computes and verifies): the parameters in
 * fixed slots joined by "|", `header` only when it names a field other than Authorization.
 */
export const challengeBinding = (c: { readonly realm: string; readonly method: string; readonly intent: string; readonly request: string; readonly expires: string; readonly digest: string; readonly header?: string | undefined; readonly opaque: string }) =>
  [c.realm, c.method, c.intent, c.request, c.expires, c.digest, ...(c.header !== undefined && c.header.toLowerCase() !== "authorization" ? [c.header] : []), c.opaque].join("|")

/** The Payment-Receipt header value. */
export const receiptHeader = (r: Receipt) => b64url(JSON.stringify(r))

/** The credential a client sends: `Payment <base64url(JSON)>` echoing the challenge. */
export const makeCredential = (c: Challenge, payload: Record<string, unknown> = {}) =>
  `Payment ${b64url(
    JSON.stringify({
      challenge: {
        id: c.id,
        realm: c.realm,
        method: c.method,
        intent: c.intent,
        request: c.request,
        expires: c.expires,
        digest: c.digest,
        ...(c.header !== undefined ? { header: c.header } : {}),
        opaque: c.opaque
      },
      payload
    })
  )}`

interface EchoedChallenge {
  readonly id: string
  readonly realm?: unknown
  readonly method?: unknown
  readonly intent?: unknown
  readonly request?: unknown
  readonly expires?: unknown
  readonly digest?: unknown
  readonly header?: unknown
  readonly opaque?: unknown
}

/** `Payment <b64token>`; the scheme name is case-insensitive (RFC 9110 §11.1). */
const CREDENTIAL = /^payment[ ]+([A-Za-z0-9._~+/-]+=*)[ ]*$/i

/** True when a header value is a Payment credential (any case of the scheme name). */
export const isPaymentCredential = (header: string | undefined) => header !== undefined && /^payment[ ]/i.test(header.trimStart())

/** Parses `Payment <b64url JSON>`; undefined when malformed. */
export const parseCredential = (header: string): { readonly challenge: EchoedChallenge; readonly payload: unknown } | undefined => {
  const m = CREDENTIAL.exec(header.trim())
  if (!m) return undefined
  try {
    const json = JSON.parse(Buffer.from(m[1].replace(/=+$/, ""), "base64url").toString("utf8")) as unknown
    if (typeof json !== "object" || json === null) return undefined
    const { challenge, payload } = json as { challenge?: unknown; payload?: unknown }
    if (typeof challenge !== "object" || challenge === null || typeof (challenge as { id?: unknown }).id !== "string") return undefined
    if (payload !== undefined && (typeof payload !== "object" || payload === null)) return undefined
    return { challenge: challenge as EchoedChallenge, payload: payload ?? {} }
  } catch {
    return undefined
  }
}

const toChallenge = (r: ChallengeRecord, decoded: ChargeRequest, extra: { readonly header: string | undefined; readonly opaque: string }): Challenge => ({
  id: r.id,
  realm: MPP_REALM,
  method: CREDITS_METHOD,
  intent: CHARGE_INTENT,
  request: r.request,
  requestDecoded: decoded,
  expires: r.expiresAt,
  digest: r.digest,
  ...(extra.header !== undefined ? { header: extra.header } : {}),
  opaque: extra.opaque
})

type Refusal = { readonly refused: MppProblem; readonly message: string; readonly missingCents?: number }

/** What the next step is, per refusal (the problem's `hint`). */
const hints: Record<MppProblem, string> = {
  "payment-required": "echo this challenge in a credential (Payment <base64url JSON {challenge, payload}>) and send the same request again",
  "malformed-credential": "send Payment <base64url JSON {challenge, payload}> echoing this fresh challenge",
  "invalid-challenge": "challenges are single use and bound to the key they were issued to: pay this fresh one",
  "payment-expired": "challenges live 5 minutes: pay this fresh one",
  "verification-failed": "a challenge pays for one request (service, tier, body bytes): pay this fresh one with the same request",
  "method-unsupported": "only method credits, intent charge is active: pay this fresh challenge with it",
  "wallet-insufficient-funds": "fund the wallet (howToFund), then pay this fresh challenge; waiting alone does not help"
}

/** Internal: a purchase charged another amount than the challenge it was paid with (undone). */
class PaymentMismatch extends Data.TaggedError("PaymentMismatch")<{ readonly row: ChallengeRecord; readonly priceCents: number }> {}

const isTagged = (u: unknown, tag: string) => typeof u === "object" && u !== null && (u as { _tag?: unknown })._tag === tag

/** The HMAC key of challenge ids: MPP_CHALLENGE_SECRET, or else random per process (open challenges then die with it). */
const challengeKey = (secret: Option.Option<Redacted.Redacted>) =>
  Option.match(secret, { onNone: () => randomBytes(32), onSome: (s) => Buffer.from(Redacted.value(s), "utf8") })

export class Mpp extends Context.Service<Mpp>()("Mpp", {
  make: Effect.gen(function* () {
    const store = yield* MppStore
    const ledger = yield* Ledger
    const offers = yield* Offers
    const ids = yield* Ids
    // The commerce core: wallet policies, and the one writer of purchases a paid call settles through.
    const wallet = yield* Wallet
    const settlement = yield* Settlement
    const modeOf = deliveryModes(yield* KeysStore)
    const config = yield* AppConfig
    const hmacKey = challengeKey(config.mppChallengeSecret)
    const challengeId = (c: Parameters<typeof challengeBinding>[0]) => createHmac("sha256", hmacKey).update(challengeBinding(c), "utf8").digest("base64url")
    /** Constant-time: does the echoed id equal the HMAC of the echoed parameters? */
    const bound = (echoed: EchoedChallenge) => {
      const str = (u: unknown) => (typeof u === "string" ? u : undefined)
      const [realm, method, intent, request, expires, digest, opaque] = [echoed.realm, echoed.method, echoed.intent, echoed.request, echoed.expires, echoed.digest, echoed.opaque].map(str)
      const header = str(echoed.header)
      if ([realm, method, intent, request, expires, digest, opaque].some((v) => v === undefined)) return false
      const expected = Buffer.from(challengeId({ realm: realm!, method: method!, intent: intent!, request: request!, expires: expires!, digest: digest!, header, opaque: opaque! }))
      const given = Buffer.from(echoed.id)
      return expected.length === given.length && timingSafeEqual(expected, given)
    }

    const discovery = (baseUrl: string) =>
      MppDiscovery.make({
        protocol: "MPP",
        status: "pending_early_access",
        description:
          "Pay per request over HTTP 402: call a per_call service without buying it first, receive a Payment challenge, retry with a credential, get the result and a receipt. Internal credits are the active method; crypto and card are not yet available.",
        pricing: { model: "per_request", transport: "HTTP 402 Payment Required", currency: MPP_CURRENCY, minimumChargeCents: MPP_MINIMUM_CHARGE_CENTS, minimumCharge: "0.01 USD" },
        methods: [...paymentMethods],
        fallback: { method: "credits.charge", status: "active", description: "The internal credit system (the agent's wallet) pays while external methods are pending early access." },
        headers: {
          challenge: `WWW-Authenticate: Payment id (HMAC of the parameters), realm, method="${CREDITS_METHOD}", intent="${CHARGE_INTENT}", request, digest, expires, [header="${CREDENTIAL_HEADER}"], opaque`,
          credential: `Authorization: Payment <base64url JSON {challenge, payload}> with the key in ${API_KEY_HEADER}; or ${CREDENTIAL_HEADER}: Payment … with Authorization: Bearer <key> (the challenge's header parameter says which)`,
          receipt: `${RECEIPT_HEADER}: <base64url JSON receipt>`
        },
        invoke: {
          method: "POST",
          path: `${baseUrl}/api/v1/agent/commerce/services/{serviceId}/invoke?tier={tierId}`,
          appliesTo: "services with pricingModel per_call"
        },
        realm: MPP_REALM,
        challengeTtlSeconds: CHALLENGE_TTL_MS / 1000,
        docs: `${baseUrl}/docs`
      })

    const timed = Effect.fnUntraced(function* <A, E, R>(effect: Effect.Effect<A, E, R>) {
      const t0 = performance.now()
      const a = yield* effect
      return [a, Math.round((performance.now() - t0) * 100) / 100] as const
    })

    /**
     * Real health: a storage round trip, the ledger entries of the most recent paid challenges
     * reconciled (one purchase each, balanced, the amount charged), the platform fee account read.
     */
    const health = Effect.gen(function* () {
      const [, storageMs] = yield* timed(store.ping)
      const [sample, ledgerMs] = yield* timed(
        Effect.gen(function* () {
          const paid = yield* store.recentPaid(20)
          const bad: Array<string> = []
          for (const c of paid) {
            // Settled by its transaction (the settlement writer); calls paid before it were referenced by the challenge.
            const byTransaction = c.transactionId ? yield* ledger.entriesByReference(c.transactionId) : []
            const entries = byTransaction.length > 0 ? byTransaction : yield* ledger.entriesByReference(c.id)
            const purchases = entries.filter((e) => e.kind === "purchase")
            const balanced = purchases.every((e) => e.postings.reduce((s, p) => s + p.amount, 0) === 0)
            const charged = purchases[0]?.postings.find((p) => p.account === walletAccount(c.agentId))?.amount
            if (purchases.length !== 1 || !balanced || charged !== -c.amountCents) bad.push(c.id)
          }
          return { checked: paid.length, bad }
        })
      )
      const [fees, creditsMs] = yield* timed(ledger.balance(PLATFORM_FEES))
      const ok = sample.bad.length === 0 && fees >= 0
      return MppHealth.make({
        status: ok ? "ok" : "degraded",
        protocolStatus: "pending_early_access",
        checkedAt: new Date(yield* Clock.currentTimeMillis).toISOString(),
        checks: {
          storage: { ok: true, latencyMs: storageMs, detail: "storage round trip" },
          ledger: {
            ok: sample.bad.length === 0,
            latencyMs: ledgerMs,
            detail:
              sample.bad.length === 0
                ? `${sample.checked} most recent paid requests reconcile with the ledger (one balanced purchase entry each)`
                : `ledger mismatch for ${sample.bad.join(", ")}`
          },
          credits: { ok: fees >= 0, latencyMs: creditsMs, detail: "the credit method can post to the ledger (platform fee account readable)" }
        },
        methods: paymentMethods.map((m) => ({ id: m.id, status: m.status }))
      })
    }).pipe(traced("Mpp.health"))

    /** The offer, checked for pay-per-request: per_call, at least the minimum charge, not the caller's own. */
    const payableOffer = Effect.fnUntraced(function* (agentId: string, serviceId: string, tierId: string | undefined) {
      const offer = yield* offers.get(serviceId, tierId)
      if (offer.service.pricingModel !== "per_call") {
        return yield* Effect.fail(
          new NotPayPerRequest({
            message: `${serviceId} is priced ${offer.service.pricingModel}; only per_call services are paid per request (use /buy or /saga)`,
            pricingModel: offer.service.pricingModel
          })
        )
      }
      if (offer.tier.priceCents < MPP_MINIMUM_CHARGE_CENTS) {
        return yield* Effect.fail(
          new ChargeBelowMinimum({
            message: `${offer.tier.priceCents} cents is below the minimum micropayment charge of 0.01 USD`,
            amountCents: offer.tier.priceCents,
            minimumCents: MPP_MINIMUM_CHARGE_CENTS
          })
        )
      }
      if (offer.service.sellerAgentId === agentId) {
        return yield* Effect.fail(new InvalidInput({ message: "you sell this service; an agent cannot pay itself", field: "id" }))
      }
      return offer
    })

    const decodedRequest = (r: Pick<ChallengeRecord, "amountCents" | "sellerAgentId" | "serviceId" | "tierId">, offer: Offer): ChargeRequest => ({
      amount: String(r.amountCents),
      currency: MPP_CURRENCY,
      recipient: walletAccount(r.sellerAgentId),
      description: `${offer.service.name} (${offer.tier.name}): one call`,
      externalId: `${r.serviceId}/${r.tierId}`
    })

    /**
     * Stores a fresh challenge for this agent, key, offer and body; its id is the HMAC of its
     * parameters (with a random nonce in `opaque`, so no two challenges share an id).
     */
    const issue = Effect.fnUntraced(function* (caller: { readonly agentId: string; readonly keyId: string }, offer: Offer, digest: string, header: string | undefined) {
        const now = yield* Clock.currentTimeMillis
        const base = {
          agentId: caller.agentId,
          keyId: caller.keyId,
          serviceId: offer.service.id,
          tierId: offer.tier.id,
          sellerAgentId: offer.service.sellerAgentId,
          amountCents: offer.tier.priceCents
        }
        const decoded = decodedRequest(base, offer)
        const request = b64url(canonical({ ...decoded }))
        const expiresAt = new Date(now + CHALLENGE_TTL_MS).toISOString()
        const opaque = b64url(canonical({ nonce: randomBytes(16).toString("base64url") }))
        const id = challengeId({ realm: MPP_REALM, method: CREDITS_METHOD, intent: CHARGE_INTENT, request, expires: expiresAt, digest, header, opaque })
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

    const paymentRequired = (challenge: Challenge, problem: MppProblem, message: string, missingCents?: number, extra: { readonly howToFund?: typeof HowToFund.Type; readonly requiredCents?: number; readonly balanceCents?: number } = {}) =>
      new PaymentRequired({
        message,
        problem,
        challenge,
        methods: [...paymentMethods],
        minimumChargeCents: MPP_MINIMUM_CHARGE_CENTS,
        ...(missingCents !== undefined ? { missingCents } : {}),
        // A fresh challenge can be paid at once; a short wallet needs funding first, not time.
        ...(problem === "wallet-insufficient-funds" ? {} : { retryAfter: 0 }),
        hint: hints[problem],
        ...extra
      })

    /**
     * The stored challenge a credential pays, locked for this unit of work, or why it cannot pay:
     * it must be this agent's and key's, open, not expired, as echoed, for this offer and body.
     */
    const claimable = Effect.fnUntraced(function* (who: { readonly agentId: string; readonly keyId: string }, echoed: EchoedChallenge, offer: Offer, digest: string) {
      const refuse = (refused: MppProblem, message: string): Refusal => ({ refused, message })
      const now = yield* Clock.currentTimeMillis
      const row = yield* store.getForUpdate(echoed.id)
      if (!row || row.agentId !== who.agentId || row.keyId !== who.keyId) return refuse("invalid-challenge", "unknown challenge id (challenges are bound to the key they were issued to)")
      if (row.status === "paid") return refuse("invalid-challenge", `challenge ${row.id} was already used (paid at ${row.paidAt}); a credential cannot be replayed`)
      if (Date.parse(row.expiresAt) <= now) return refuse("payment-expired", `challenge ${row.id} expired at ${row.expiresAt}`)
      // The id binds the echoed parameters; the stored row must be what they say.
      const same = echoed.realm === MPP_REALM && echoed.request === row.request && echoed.expires === row.expiresAt && echoed.digest === row.digest
      if (!same) return refuse("verification-failed", "the credential's echoed challenge parameters do not match the challenge issued")
      if (row.serviceId !== offer.service.id || row.tierId !== offer.tier.id || row.digest !== digest) {
        return refuse("verification-failed", "the challenge was issued for another service, tier or request body")
      }
      return row
    })

    /** The credential parsed and bound (method, HMAC of its parameters), or why not. */
    const readCredential = (credential: string): { readonly echoed: EchoedChallenge } | Refusal => {
      const parsed = parseCredential(credential)
      if (!parsed) return { refused: "malformed-credential", message: `the credential is not "Payment <base64url JSON>" with a challenge object` }
      const echoed = parsed.challenge
      if (echoed.method !== CREDITS_METHOD || echoed.intent !== CHARGE_INTENT) {
        return { refused: "method-unsupported", message: `${String(echoed.method)}/${String(echoed.intent)} is not accepted here; pay with ${CREDITS_METHOD}/${CHARGE_INTENT}` }
      }
      if (!bound(echoed)) return { refused: "invalid-challenge", message: "the challenge id is not the binding of its parameters: it was not issued here, or was altered" }
      return { echoed }
    }

    /**
     * One paid call. Without a credential: 402 with a fresh challenge. With one: its method must be
     * credits/charge (else 400 method-unsupported), its id the HMAC of its echoed parameters, the
     * stored challenge the same agent's and key's, open, not expired, for the same service, tier
     * and body bytes; then in one unit of work the simulated seller answers, the wallet is charged
     * (85/15 split) and the challenge is marked paid — so it pays once. Every refusal carries a
     * fresh challenge. `credentialHeader`: the field the caller's challenges name (undefined:
     * Authorization, when the key travels in X-API-Key).
     */
    const invoke = Effect.fnUntraced(function* (caller: Pick<Caller, "agentId" | "keyId">, input: {
      readonly serviceId: string
      readonly tierId: string | undefined
      readonly input: unknown
      /** The request body bytes, as sent: the challenge's digest covers exactly these. */
      readonly body: string | Uint8Array
      readonly credential: string | undefined
      readonly credentialHeader: string | undefined
    }) {
      const who = { agentId: caller.agentId!, keyId: caller.keyId ?? "" }
      const offer = yield* payableOffer(who.agentId, input.serviceId, input.tierId)
      const digest = contentDigest(input.body)
      const refuseWith = (problem: MppProblem, message: string, missingCents?: number) =>
        Effect.flatMap(issue(who, offer, digest, input.credentialHeader), (challenge) => Effect.fail(paymentRequired(challenge, problem, message, missingCents)))
      const field = input.credentialHeader ?? "Authorization"
      if (input.credential === undefined || input.credential.trim() === "") {
        return yield* refuseWith("payment-required", `this call costs ${offer.tier.priceCents} cents: retry with a Payment credential for the challenge in ${field}`)
      }
      const read = readCredential(input.credential)
      if ("refused" in read) return yield* refuseWith(read.refused, read.message)
      const echoed = read.echoed
      const outcome = yield* atomically(
        Effect.gen(function* () {
          const refuse = (refused: MppProblem, message: string, extra: Partial<Refusal> = {}): Refusal => ({ refused, message, ...extra })
          const now = yield* Clock.currentTimeMillis
          const checked = yield* claimable(who, echoed, offer, digest)
          if ("refused" in checked) return checked
          const row = checked
          const asked = yield* modeOf(input.input, offer.service.sellerAgentId)
          const { mode } = asked
          if (mode === "fail" || mode === "timeout") {
            return yield* Effect.fail(
              new SellerFailed({ message: `the seller could not serve the call (simulated ${mode}); nothing was charged and the challenge is still open`, serviceId: offer.service.id })
            )
          }
          // MPP: a valid payment that policy refuses is 403, not 402 (the challenge stays open).
          const { policy, balanceCents } = yield* wallet.lockForPurchase(row.agentId)
          {
            const verdict = yield* wallet.authorize(row.agentId, policy, { priceCents: row.amountCents, category: offer.service.category, sellerAgentId: row.sellerAgentId }, { approved: false })
            if (verdict !== null) {
              return yield* Effect.fail(
                new ApprovalRequired({
                  message: verdict === "manual" ? "the wallet's autonomy level is manual: every purchase needs the owner's approval" : `${row.amountCents} cents is above the wallet's approval threshold`,
                  reason: verdict
                })
              )
            }
          }
          const paidAt = new Date(now).toISOString()
          // The paid call joins the commerce history (GET /transactions, reviews, disputes, limits).
          const transactionId = yield* ids.make("tx")
          const output = simulatedOutput(offer, input.input, transactionId)
          const latencyMs = simulateDelivery(
            offer.service as unknown as Parameters<typeof simulateDelivery>[0],
            offer.tier as unknown as Parameters<typeof simulateDelivery>[1],
            input.input,
            transactionId,
            asked
          ).latencyMs
          const charged = yield* Effect.result(
            settlement.settle({
              transactionId,
              source: "paid_call",
              buyerAgentId: row.agentId,
              offer: {
                serviceId: row.serviceId,
                serviceName: offer.service.name,
                category: offer.service.category,
                pricingModel: offer.service.pricingModel,
                sellerAgentId: row.sellerAgentId,
                tierId: row.tierId,
                listPriceCents: offer.tier.priceCents
              },
              priceCents: row.amountCents,
              delivery: { latencyMs, output },
              references: { ...noReferences, challengeId: row.id },
              at: paidAt,
              from: { _tag: "wallet", lockedBalanceCents: balanceCents },
              memo: `pay-per-request ${row.serviceId}/${row.tierId}`
            })
          )
          if (charged._tag === "Failure") {
            if (charged.failure._tag === "InsufficientFunds") {
              return refuse("wallet-insufficient-funds", `the wallet lacks ${charged.failure.missingCents} cents for this call; fund it and pay the fresh challenge`, {
                missingCents: charged.failure.missingCents
              })
            }
            return yield* Effect.fail(charged.failure)
          }
          const entryId = charged.success.tx.ledgerEntryId!
          const after = yield* ledger.balance(walletAccount(row.agentId))
          yield* wallet.afterDebit(row.agentId, policy, after + row.amountCents, after)
          yield* store.update({ ...row, status: "paid", paidAt, entryId, transactionId })
          const receipt: Receipt = {
            status: "success",
            method: CREDITS_METHOD,
            intent: CHARGE_INTENT,
            timestamp: paidAt,
            reference: entryId,
            challengeId: row.id,
            transactionId,
            amount: String(row.amountCents),
            currency: MPP_CURRENCY,
            serviceId: row.serviceId,
            tierId: row.tierId
          }
          return InvokeResult.make({
            serviceId: row.serviceId,
            tierId: row.tierId,
            transactionId,
            chargedCents: row.amountCents as InvokeResult["chargedCents"],
            output,
            receipt
          })
        })
      )
      if (outcome instanceof InvokeResult) return outcome
      return yield* refuseWith(outcome.refused, outcome.message, outcome.missingCents)
    }, traced("Mpp.invoke"))

    /**
     * A fresh challenge that pays a purchase (POST /buy) of `amountCents` for this service, tier
     * and body, and the 402 of a short wallet that carries it (with how to fund).
     */
    const walletShort = Effect.fnUntraced(function* (caller: Pick<Caller, "agentId" | "keyId">, input: { readonly serviceId: string; readonly tierId: string; readonly body: string | Uint8Array; readonly credentialHeader: string | undefined }, short: InsufficientCredits) {
      const who = { agentId: caller.agentId!, keyId: caller.keyId ?? "" }
      const offer = yield* offers.get(input.serviceId, input.tierId)
      const challenge = yield* issue(who, { service: offer.service, tier: { ...offer.tier, priceCents: short.requiredCents } }, contentDigest(input.body), input.credentialHeader)
      return paymentRequired(challenge, "wallet-insufficient-funds", short.message, short.missingCents, {
        howToFund: short.howToFund,
        requiredCents: short.requiredCents,
        balanceCents: short.balanceCents
      })
    })

    /**
     * A purchase paid with a credential: the challenge is verified and claimed in the purchase's
     * own unit of work (`purchase` joins it), so a credential pays one purchase, and a purchase that
     * fails leaves the challenge open. The purchase must charge exactly the challenge's amount.
     * Refusals carry a fresh challenge; a short wallet too (with how to fund).
     */
    const payPurchase = Effect.fnUntraced(function* <E, R>(caller: Pick<Caller, "agentId" | "keyId">, input: { readonly serviceId: string; readonly tierId: string; readonly body: string | Uint8Array; readonly credential: string; readonly credentialHeader: string | undefined }, purchase: Effect.Effect<Purchase, E, R>) {
      const who = { agentId: caller.agentId!, keyId: caller.keyId ?? "" }
      const offer = yield* offers.get(input.serviceId, input.tierId)
      const digest = contentDigest(input.body)
      const refuseWith = (problem: MppProblem, message: string, amountCents = offer.tier.priceCents) =>
        Effect.flatMap(issue(who, { service: offer.service, tier: { ...offer.tier, priceCents: amountCents } }, digest, input.credentialHeader), (challenge) =>
          Effect.fail(paymentRequired(challenge, problem, message))
        )
      const read = readCredential(input.credential)
      if ("refused" in read) return yield* refuseWith(read.refused, read.message)
      const outcome = yield* atomically(
        Effect.gen(function* () {
          const checked = yield* claimable(who, read.echoed, offer, digest)
          if ("refused" in checked) return { _tag: "Refused" as const, refusal: checked }
          const row = checked
          const bought = yield* purchase
          if (bought.status !== "completed" || bought.transaction === null) return { _tag: "Bought" as const, purchase: bought, receipt: undefined }
          if (bought.transaction.priceCents !== row.amountCents) {
            // Undoes the purchase: the unit of work fails.
            return yield* Effect.fail(new PaymentMismatch({ row, priceCents: bought.transaction.priceCents }))
          }
          const paidAt = bought.transaction.createdAt
          yield* store.update({ ...row, status: "paid", paidAt, entryId: bought.transaction.ledgerEntryId, transactionId: bought.transaction.id })
          const receipt: Receipt = {
            status: "success",
            method: CREDITS_METHOD,
            intent: CHARGE_INTENT,
            timestamp: paidAt,
            reference: bought.transaction.ledgerEntryId ?? bought.transaction.id,
            challengeId: row.id,
            transactionId: bought.transaction.id,
            amount: String(row.amountCents),
            currency: MPP_CURRENCY,
            serviceId: row.serviceId,
            tierId: row.tierId
          }
          return { _tag: "Bought" as const, purchase: bought, receipt: receipt as Receipt | undefined }
        })
      ).pipe(
        Effect.catch((e): Effect.Effect<never, E | StorageUnavailable | PaymentRequired | NotFound, Transactor> =>
          isTagged(e, "InsufficientCredits")
            ? Effect.flatMap(walletShort(caller, input, e as InsufficientCredits), Effect.fail)
            : isTagged(e, "PaymentMismatch")
              ? refuseWith("verification-failed", `the challenge pays ${(e as PaymentMismatch).row.amountCents} cents; this purchase costs ${(e as PaymentMismatch).priceCents}`, (e as PaymentMismatch).priceCents)
              : Effect.fail(e as E | StorageUnavailable)
        )
      )
      if (outcome._tag === "Refused") return yield* refuseWith(outcome.refusal.refused, outcome.refusal.message)
      return { purchase: outcome.purchase, receipt: outcome.receipt }
    }, traced("Mpp.payPurchase"))

    return { discovery, health, invoke, walletShort, payPurchase } as const
  })
}) {
  /** Provides the domain services it uses; only ports (stores, processors, config) stay open. */
  static readonly layer = Layer.effect(Mpp, Mpp.make).pipe(Layer.provide([Ledger.layer, Wallet.layer, Settlement.layer]))
}

