// Mpp: pay-per-request over HTTP 402 with the internal credit method, following the MPP "Payment"
// HTTP authentication scheme: a stored single-use challenge bound to the agent, key, service,
// tier and request body; a credential that echoes it; one ledger charge and a receipt.
import { traced } from "./Tracing.js"
import { Clock, Context, Effect, Layer } from "effect"
import { createHash } from "node:crypto"
import { InvalidInput, type StorageUnavailable } from "../schema/errors.js"
import { PLATFORM_FEES, walletAccount } from "../schema/ledger.js"
import {
  ApprovalRequired,
  type Challenge,
  CHALLENGE_TTL_MS,
  ChargeBelowMinimum,
  type ChallengeRecord,
  type ChargeRequest,
  CHARGE_INTENT,
  CREDENTIAL_HEADER,
  CREDITS_METHOD,
  InvokeResult,
  MPP_CURRENCY,
  MPP_MINIMUM_CHARGE_CENTS,
  MPP_REALM,
  MppDiscovery,
  MppHealth,
  type MppProblem,
  NotPayPerRequest,
  PaymentRequired,
  paymentMethods,
  PROBLEM_BASE,
  type Receipt,
  RECEIPT_HEADER,
  SellerFailed
} from "../schema/mpp.js"
import type { Caller } from "./Caller.js"
import { simulateDelivery } from "./Catalog.js"
import { noReferences, Settlement } from "./Settlement.js"
import { atomically, Ids } from "./Db.js"
import { Ledger } from "./Ledger.js"
import { deliveryModeOf, type Offer, Offers, simulatedOutput } from "./Offers.js"
import { Wallet } from "./Wallet.js"

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
/** RFC 9530 Content-Digest value of a body. */
export const contentDigest = (body: string) => `sha-256=:${createHash("sha256").update(body, "utf8").digest("base64")}:`

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

/** The WWW-Authenticate value of a challenge (RFC 9110 auth-params). */
export const wwwAuthenticate = (c: Challenge) =>
  `Payment id=${quote(c.id)}, realm=${quote(c.realm)}, method=${quote(c.method)}, intent=${quote(c.intent)}, header=${quote(c.header)}, ` +
  `expires=${quote(c.expires)}, digest=${quote(c.digest)}, request=${quote(c.request)}`

/** The Payment-Receipt header value. */
export const receiptHeader = (r: Receipt) => b64url(JSON.stringify(r))

/** The credential a client sends: `Payment <base64url(JSON)>` echoing the challenge. */
export const makeCredential = (c: Challenge, payload: Record<string, unknown> = {}) =>
  `Payment ${b64url(
    JSON.stringify({
      challenge: { id: c.id, realm: c.realm, method: c.method, intent: c.intent, request: c.request, expires: c.expires, digest: c.digest, header: c.header },
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
}

/** Parses `Payment <b64url>`; undefined when malformed. */
export const parseCredential = (header: string): { readonly challenge: EchoedChallenge; readonly payload: unknown } | undefined => {
  const m = /^Payment[ ]+([A-Za-z0-9_-]+)[ ]*$/.exec(header)
  if (!m) return undefined
  try {
    const json = JSON.parse(Buffer.from(m[1], "base64url").toString("utf8")) as unknown
    if (typeof json !== "object" || json === null) return undefined
    const { challenge, payload } = json as { challenge?: unknown; payload?: unknown }
    if (typeof challenge !== "object" || challenge === null || typeof (challenge as { id?: unknown }).id !== "string") return undefined
    if (payload !== undefined && (typeof payload !== "object" || payload === null)) return undefined
    return { challenge: challenge as EchoedChallenge, payload: payload ?? {} }
  } catch {
    return undefined
  }
}

const toChallenge = (r: ChallengeRecord, decoded: ChargeRequest): Challenge => ({
  id: r.id,
  realm: MPP_REALM,
  method: CREDITS_METHOD,
  intent: CHARGE_INTENT,
  request: r.request,
  requestDecoded: decoded,
  expires: r.expiresAt,
  digest: r.digest,
  header: CREDENTIAL_HEADER
})

type Refusal = { readonly refused: MppProblem; readonly message: string; readonly reuse?: ChallengeRecord; readonly missingCents?: number }

export class Mpp extends Context.Service<Mpp>()("Mpp", {
  make: Effect.gen(function* () {
    const store = yield* MppStore
    const ledger = yield* Ledger
    const offers = yield* Offers
    const ids = yield* Ids
    // The commerce core: wallet policies, and the one writer of purchases a paid call settles through.
    const wallet = yield* Wallet
    const settlement = yield* Settlement

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
          challenge: `WWW-Authenticate: Payment id, realm, method="${CREDITS_METHOD}", intent="${CHARGE_INTENT}", header="${CREDENTIAL_HEADER}", expires, digest, request`,
          credential: `${CREDENTIAL_HEADER}: Payment <base64url JSON {challenge, payload}> (Authorization keeps the Bearer key)`,
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

    const timed = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
      Effect.gen(function* () {
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
    const payableOffer = (agentId: string, serviceId: string, tierId: string | undefined) =>
      Effect.gen(function* () {
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

    const decodedRequest = (r: Pick<ChallengeRecord, "id" | "amountCents" | "sellerAgentId" | "serviceId" | "tierId">, offer: Offer): ChargeRequest => ({
      amount: String(r.amountCents),
      currency: MPP_CURRENCY,
      recipient: walletAccount(r.sellerAgentId),
      description: `${offer.service.name} (${offer.tier.name}): one call`,
      externalId: `${r.serviceId}/${r.tierId}`
    })

    /** Stores a fresh challenge for this agent, key, offer and body. */
    const issue = (caller: { readonly agentId: string; readonly keyId: string }, offer: Offer, digest: string) =>
      atomically(
        Effect.gen(function* () {
          const now = yield* Clock.currentTimeMillis
          const base = {
            id: yield* ids.make("pay"),
            agentId: caller.agentId,
            keyId: caller.keyId,
            serviceId: offer.service.id,
            tierId: offer.tier.id,
            sellerAgentId: offer.service.sellerAgentId,
            amountCents: offer.tier.priceCents
          }
          const decoded = decodedRequest(base, offer)
          const record: ChallengeRecord = {
            ...base,
            request: b64url(canonical({ ...decoded })),
            digest,
            status: "open",
            expiresAt: new Date(now + CHALLENGE_TTL_MS).toISOString(),
            createdAt: new Date(now).toISOString(),
            paidAt: null,
            entryId: null,
            transactionId: null
          }
          yield* store.pruneOpen(caller.agentId, record.createdAt, MAX_OPEN_CHALLENGES_PER_AGENT - 1)
          yield* store.insert(record)
          return toChallenge(record, decoded)
        })
      )

    const paymentRequired = (challenge: Challenge, problem: MppProblem, message: string, missingCents?: number) =>
      new PaymentRequired({
        message,
        problem: `${PROBLEM_BASE}${problem}`,
        challenge,
        methods: [...paymentMethods],
        minimumChargeCents: MPP_MINIMUM_CHARGE_CENTS,
        ...(missingCents !== undefined ? { missingCents } : {})
      })

    /**
     * One paid call. Without a credential: 402 with a fresh challenge. With one: verified against
     * the stored challenge (same agent and key, open, not expired, every echoed parameter equal,
     * the same service, tier and body), then in one unit of work the simulated seller answers,
     * the wallet is charged (85/15 split) and the challenge is marked paid — so it pays once.
     */
    const invoke = (
      caller: Pick<Caller, "agentId" | "keyId">,
      input: { readonly serviceId: string; readonly tierId: string | undefined; readonly input: unknown; readonly body: string; readonly credential: string | undefined }
    ) =>
      Effect.gen(function* () {
        const who = { agentId: caller.agentId!, keyId: caller.keyId ?? "" }
        const offer = yield* payableOffer(who.agentId, input.serviceId, input.tierId)
        const digest = contentDigest(input.body)
        if (input.credential === undefined || input.credential.trim() === "") {
          const challenge = yield* issue(who, offer, digest)
          return yield* Effect.fail(paymentRequired(challenge, "payment-required", `this call costs ${offer.tier.priceCents} cents: retry with a ${CREDENTIAL_HEADER} credential for the challenge`))
        }
        const parsed = parseCredential(input.credential)
        if (!parsed) {
          const challenge = yield* issue(who, offer, digest)
          return yield* Effect.fail(paymentRequired(challenge, "malformed-credential", `the ${CREDENTIAL_HEADER} value is not "Payment <base64url JSON>" with a challenge object`))
        }
        const outcome = yield* atomically(
          Effect.gen(function* () {
            const refuse = (refused: MppProblem, message: string, extra: Partial<Refusal> = {}): Refusal => ({ refused, message, ...extra })
            const now = yield* Clock.currentTimeMillis
            const row = yield* store.getForUpdate(parsed.challenge.id)
            if (!row || row.agentId !== who.agentId || row.keyId !== who.keyId) return refuse("invalid-challenge", "unknown challenge id (challenges are bound to the key they were issued to)")
            if (row.status === "paid") return refuse("invalid-challenge", `challenge ${row.id} was already used (paid at ${row.paidAt}); a credential cannot be replayed`)
            if (Date.parse(row.expiresAt) <= now) return refuse("payment-expired", `challenge ${row.id} expired at ${row.expiresAt}`)
            const echoed = parsed.challenge
            const same =
              echoed.realm === MPP_REALM &&
              echoed.method === CREDITS_METHOD &&
              echoed.intent === CHARGE_INTENT &&
              echoed.request === row.request &&
              echoed.expires === row.expiresAt &&
              echoed.digest === row.digest &&
              echoed.header === CREDENTIAL_HEADER
            if (!same) return refuse("verification-failed", "the credential's echoed challenge parameters do not match the challenge issued")
            if (row.serviceId !== offer.service.id || row.tierId !== offer.tier.id || row.digest !== digest) {
              return refuse("verification-failed", "the challenge was issued for another service, tier or request body")
            }
            const { mode } = deliveryModeOf(input.input)
            if (mode === "fail" || mode === "timeout") {
              return yield* Effect.fail(
                new SellerFailed({ message: `the seller could not serve the call (simulated ${mode}); nothing was charged and the challenge is still open`, serviceId: offer.service.id })
              )
            }
            // MPP: a valid payment that policy refuses is 403, not 402 (the challenge stays open).
            const policy = yield* wallet.lock(row.agentId)
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
              transactionId
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
                from: { _tag: "wallet" },
                memo: `pay-per-request ${row.serviceId}/${row.tierId}`
              })
            )
            if (charged._tag === "Failure") {
              if (charged.failure._tag === "InsufficientFunds") {
                return refuse("payment-insufficient", `the wallet lacks ${charged.failure.missingCents} cents for this call; fund it and retry the same credential`, {
                  reuse: row,
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
        const challenge = outcome.reuse ? toChallenge(outcome.reuse, decodedRequest(outcome.reuse, offer)) : yield* issue(who, offer, digest)
        return yield* Effect.fail(paymentRequired(challenge, outcome.refused, outcome.message, outcome.missingCents))
      }).pipe(traced("Mpp.invoke"))

    return { discovery, health, invoke } as const
  })
}) {
  /** Provides the domain services it uses; only ports (stores, processors, config) stay open. */
  static readonly layer = Layer.effect(Mpp, Mpp.make).pipe(Layer.provide([Ledger.layer, Wallet.layer, Settlement.layer]))
}

