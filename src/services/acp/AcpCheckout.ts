// AcpCheckout: the Agentic Commerce Protocol's checkout session (docs/acp.md) over the one purchase.
// A session quotes catalogue tiers (`serviceId:tierId`), a line each, up to ACP_MAX_LINES; completing
// it pays with the calling agent's wallet through Commerce, a purchase per line, all in one unit of
// work (the buy's permission, the purchase domain's lifecycle: the owner's policy, an approval that
// waits, settled 85/15 or held in the order's escrow for an agent seller): every line is bought, or
// none is. Each line's purchase has its own key (purchaseKeyOf), so a session makes at most one
// purchase per line however often it is completed. What the order is now is read from those purchases.
import { Clock, Context, Effect, Layer, Option } from "effect"
import {
  ACP_MAX_LINES,
  ACP_SESSION_PREFIX,
  ACP_SESSION_TTL_MS,
  CARD_HANDLER_ID,
  type AcpLine,
  type AcpSessionRecord,
  lineIdOf,
  purchaseKeyOf,
  SessionClosed,
  SessionNotCancelable,
  WALLET_HANDLER_ID
} from "../../schema/acp/sessions.js"
import type { Approval } from "../../schema/commerce/approvals.js"
import { CURRENCY } from "../../schema/commerce/common.js"
import type { Transaction } from "../../schema/commerce/transactions.js"
import { EXTERNAL_PAYMENTS, type InsufficientFunds, walletAccount } from "../../schema/ledger/ledger.js"
import type { CardDeclined, ProcessorUnavailable } from "../../schema/payments/payments.js"
import { Forbidden, InvalidInput, NotFound, type StorageUnavailable } from "../../schema/platform/errors.js"
import { Catalog } from "../commerce/Catalog.js"
import { type BuyError, Commerce } from "../commerce/Commerce.js"
import type { Caller } from "../keys/Caller.js"
import { KeysStore } from "../keys/KeysStore.js"
import { Ledger } from "../ledger/Ledger.js"
import { DelegatedPayments } from "../payments/DelegatedPayments.js"
import { Ids, Transactor } from "../platform/Db.js"
import { PurchaseStore } from "../purchases/PurchaseStore.js"
import { Wallet } from "../wallet/Wallet.js"
import { toApproval, toTransaction } from "../purchases/views.js"
import { AcpSessionStore } from "./AcpSessionStore.js"
import { AcpOrderNoticeStore } from "./AcpOrderNoticeStore.js"
import { handlerOf, inputOf, type PaymentInput } from "./payment.js"
import { AppConfig } from "../platform/AppConfig.js"

/** A line with the purchase the completion made for it (or the approval that purchase waits for). */
export interface AcpLineView {
  readonly line: AcpLine
  readonly transaction: Transaction | null
  readonly approval: Approval | null
}

/** A session with each line's purchase (before its completion: none). */
export interface AcpSessionView {
  readonly session: AcpSessionRecord
  /** The session's lines, in order: with their purchases once it was completed. */
  readonly lines: ReadonlyArray<AcpLineView>
  /** The instant the view was read (an open session past its expiry reads as expired). */
  readonly now: number
}

/** The view of a session no completion has bought anything for yet. */
const unbought = (session: AcpSessionRecord, now: number): AcpSessionView => ({
  session,
  lines: session.lines.map((line) => ({ line, transaction: null, approval: null })),
  now
})

export interface CreateSession {
  /** The `id` of each of `line_items`, in order. */
  readonly itemIds: ReadonlyArray<string>
  readonly currency: string
  readonly buyer: unknown
  readonly fulfillmentDetails: unknown
  readonly metadata: unknown
}

export interface UpdateSession {
  readonly itemIds?: ReadonlyArray<string>
  readonly buyer?: unknown
  readonly fulfillmentDetails?: unknown
}

type Refusal = InvalidInput | NotFound | Forbidden | SessionClosed | StorageUnavailable

export interface AcpCheckoutService {
  readonly create: (caller: Caller, input: CreateSession) => Effect.Effect<AcpSessionView, Refusal>
  readonly get: (caller: Caller, id: string) => Effect.Effect<AcpSessionView, Refusal>
  readonly update: (caller: Caller, id: string, input: UpdateSession) => Effect.Effect<AcpSessionView, Refusal>
  /** Pays with `payment` (one purchase per line, all or none; a second completion is SessionClosed). */
  readonly complete: (
    caller: Caller,
    id: string,
    payment: PaymentInput,
    buyer: unknown
  ) => Effect.Effect<AcpSessionView, Refusal | BuyError | CardDeclined | ProcessorUnavailable | InsufficientFunds>
  /** The delegated card handler's processor (ACP's `psp`). */
  readonly cardPsp: "fake" | "stripe"
  /**
   * Cancels an open session; one whose lines all wait for their owner's approval withdraws those
   * approvals (nothing spent). Completed, a line bought, canceled, or decided meanwhile:
   * SessionNotCancelable.
   */
  readonly cancel: (caller: Caller, id: string) => Effect.Effect<AcpSessionView, Refusal | SessionNotCancelable>
  /** A session as it stands, whoever's: for the order events' worker, never for a caller. */
  readonly view: (id: string) => Effect.Effect<AcpSessionView | undefined, StorageUnavailable>
}

/** The longest description a card charge carries (ten lines' names can run to ~1,900 characters). */
export const CHARGE_DESCRIPTION_MAX = 500

/** What the card statement's processor is told was bought: the lines' names, cut at CHARGE_DESCRIPTION_MAX. */
export const chargeDescription = (lines: ReadonlyArray<AcpLine>) => {
  const all = lines.map((l) => `${l.serviceName} — ${l.tierName}`).join("; ")
  return all.length <= CHARGE_DESCRIPTION_MAX ? all : `${all.slice(0, CHARGE_DESCRIPTION_MAX - 1)}…`
}

/** The caller as a buying agent: an agent key with commerce:buy. */
const buyerOf = (caller: Caller) =>
  caller.agentId !== undefined && caller.permissions.has("commerce:buy")
    ? Effect.succeed(caller.agentId)
    : Effect.fail(
        new Forbidden({ message: "ACP checkout needs an agent key with commerce:buy", permission: "commerce:buy" })
      )

const notFound = (id: string) =>
  new NotFound({ message: `checkout session ${id} not found`, resource: "checkout_session", id })

/** Whether an open session's quote has lapsed at `now`. */
export const isExpired = (s: AcpSessionRecord, now: number) =>
  s.status === "ready_for_payment" && Date.parse(s.expiresAt) <= now

const make = Effect.gen(function* () {
  const store = yield* AcpSessionStore
  const purchases = yield* PurchaseStore
  const commerce = yield* Commerce
  const catalog = yield* Catalog
  const keys = yield* KeysStore
  const ids = yield* Ids
  const ledger = yield* Ledger
  const delegated = yield* DelegatedPayments
  const wallet = yield* Wallet
  const notices = yield* AcpOrderNoticeStore
  const config = yield* AppConfig
  const { atomically } = yield* Transactor

  /** One `serviceId:tierId` quoted as a line (`at`: the JSONPath of its id in the request). */
  const quote = Effect.fnUntraced(function* (agentId: string, itemId: string, index: number) {
    const at = `$.line_items[${index}].id`
    const [serviceId, tierId, ...rest] = itemId.split(":")
    if (!serviceId || !tierId || rest.length > 0) {
      return yield* new InvalidInput({
        message: `item id ${JSON.stringify(itemId)} is not a catalogue tier: send "serviceId:tierId"`,
        field: at
      })
    }
    const unknownItem = new InvalidInput({ message: `item ${itemId} is not for sale`, field: at })
    const service = yield* catalog
      .getRecord(serviceId)
      .pipe(Effect.catchTag("NotFound", () => Effect.fail(unknownItem)))
    const tier = service.tiers.find((t) => t.id === tierId)
    if (service.status !== "active" || tier === undefined) return yield* unknownItem
    if (service.sellerAgentId === agentId) {
      return yield* new InvalidInput({ message: "an agent cannot buy its own service", field: at })
    }
    const [seller] = yield* keys.getAgents([service.sellerAgentId])
    const line: AcpLine = {
      id: lineIdOf(index),
      itemId,
      serviceId,
      tierId,
      serviceName: service.name,
      tierName: tier.name,
      description: service.description,
      category: service.category,
      unit: tier.unit,
      sellerAgentId: service.sellerAgentId,
      sellerName: seller?.name ?? service.sellerAgentId,
      quantity: 1,
      unitAmountCents: tier.priceCents
    }
    return line
  })

  const quoteAll = Effect.fnUntraced(function* (agentId: string, itemIds: ReadonlyArray<string>) {
    if (itemIds.length === 0) return yield* new InvalidInput({ message: "line_items is empty", field: "$.line_items" })
    if (itemIds.length > ACP_MAX_LINES) {
      return yield* new InvalidInput({
        message: `a checkout session holds at most ${ACP_MAX_LINES} items (a purchase each): open another session for the rest`,
        field: `$.line_items[${ACP_MAX_LINES}]`
      })
    }
    return yield* Effect.forEach(itemIds, (id, i) => quote(agentId, id, i))
  })

  /** A line's purchase as it stands now: the transaction, or the approval it waits for. */
  const lineViewOf = Effect.fnUntraced(function* (
    session: AcpSessionRecord,
    line: AcpLine,
    index: number,
    now: number
  ) {
    const key = purchaseKeyOf(session.id, index)
    const row = yield* purchases.findByIdempotencyKey(session.agentId, key)
    if (row) return { line, transaction: toTransaction(row, session.agentId), approval: null }
    const approval = yield* purchases.findApprovalByKey(session.agentId, key)
    return { line, transaction: null, approval: approval ? toApproval(approval, now) : null }
  })

  /** The session's purchases as they stand now (a read per line: at most ACP_MAX_LINES). */
  const viewOf = Effect.fnUntraced(function* (session: AcpSessionRecord) {
    const now = yield* Clock.currentTimeMillis
    // Completed (or waiting, or canceled while waiting) sessions have paid with a handler; others bought nothing.
    if (session.paidWith === null) return unbought(session, now)
    const lines = yield* Effect.forEach(session.lines, (line, i) => lineViewOf(session, line, i, now))
    return { session, lines, now }
  })

  const owned = Effect.fnUntraced(function* (caller: Caller, id: string, lock: boolean) {
    const agentId = yield* buyerOf(caller)
    const found = yield* lock ? store.getForUpdate(id) : store.get(id)
    if (found === undefined || found.agentId !== agentId) return yield* notFound(id)
    return found
  })

  /** An open session, for an update or a completion. */
  const open = Effect.fnUntraced(function* (session: AcpSessionRecord) {
    const now = yield* Clock.currentTimeMillis
    if (session.status !== "ready_for_payment" || isExpired(session, now)) {
      const status = isExpired(session, now) ? "expired" : session.status
      return yield* new SessionClosed({
        message: `checkout session ${session.id} is ${status}: open a new one`,
        status
      })
    }
    return now
  })

  const create = Effect.fnUntraced(function* (caller: Caller, input: CreateSession) {
    const agentId = yield* buyerOf(caller)
    if (input.currency.toLowerCase() !== CURRENCY) {
      return yield* new InvalidInput({ message: `prices are in ${CURRENCY}`, field: "$.currency" })
    }
    const lines = yield* quoteAll(agentId, input.itemIds)
    const now = yield* Clock.currentTimeMillis
    const at = new Date(now).toISOString()
    const session: AcpSessionRecord = {
      id: yield* ids.make(ACP_SESSION_PREFIX),
      agentId,
      accountId: caller.accountId,
      status: "ready_for_payment",
      currency: CURRENCY,
      lines,
      buyer: input.buyer ?? null,
      fulfillmentDetails: input.fulfillmentDetails ?? null,
      metadata: input.metadata ?? null,
      paidWith: null,
      transactionId: null,
      approvalId: null,
      createdAt: at,
      updatedAt: at,
      expiresAt: new Date(now + ACP_SESSION_TTL_MS).toISOString()
    }
    yield* store.insert(session)
    return unbought(session, now)
  })

  const get = (caller: Caller, id: string) => Effect.flatMap(owned(caller, id, false), viewOf)

  const updateInUnit = Effect.fnUntraced(function* (caller: Caller, id: string, input: UpdateSession) {
    const session = yield* owned(caller, id, true)
    const now = yield* open(session)
    // An update quotes again: the lines (new ones, or the same) at today's prices, the quote's time restarted.
    const lines = yield* quoteAll(session.agentId, input.itemIds ?? session.lines.map((l) => l.itemId))
    const next: AcpSessionRecord = {
      ...session,
      lines,
      buyer: input.buyer ?? session.buyer,
      fulfillmentDetails: input.fulfillmentDetails ?? session.fulfillmentDetails,
      updatedAt: new Date(now).toISOString(),
      expiresAt: new Date(now + ACP_SESSION_TTL_MS).toISOString()
    }
    yield* store.update(next)
    return unbought(next, now)
  })
  const update = (caller: Caller, id: string, input: UpdateSession) => atomically(updateInUnit(caller, id, input))

  /**
   * An open session's lines at the prices it shows, and their total: each line is quoted again first
   * (still for sale, at the same price: a price that moved is 400 naming its line).
   */
  const payable = Effect.fnUntraced(function* (session: AcpSessionRecord) {
    const now = yield* open(session)
    const current = yield* quoteAll(
      session.agentId,
      session.lines.map((l) => l.itemId)
    )
    for (const [i, line] of session.lines.entries()) {
      if (current[i].unitAmountCents !== line.unitAmountCents) {
        return yield* new InvalidInput({
          message: `the price of ${line.itemId} changed from ${line.unitAmountCents} to ${current[i].unitAmountCents} cents: update the session to quote it again`,
          field: `$.line_items[${i}]`
        })
      }
    }
    const totalCents = session.lines.reduce((sum, l) => sum + l.unitAmountCents * l.quantity, 0)
    return { now, lines: session.lines, totalCents }
  })

  /**
   * The completion's unit of work: the session locked and still payable, the card's charge (if any)
   * funded into the buyer's wallet, the purchase (Commerce), the session completed.
   */
  const completeInUnit = Effect.fnUntraced(function* (
    caller: Caller,
    id: string,
    buyer: unknown,
    paidWith: string,
    charge: { readonly chargeId: string; readonly amountCents: number } | null
  ) {
    const session = yield* owned(caller, id, true)
    const { now, lines, totalCents } = yield* payable(session)
    if (charge !== null) {
      if (charge.amountCents !== totalCents) {
        return yield* new InvalidInput({
          message: "the price changed while the card was charged",
          field: "$.line_items"
        })
      }
      yield* ledger.transfer({
        kind: "funding",
        reference: charge.chargeId,
        memo: `ACP checkout ${id}: delegated card payment`,
        from: EXTERNAL_PAYMENTS,
        to: walletAccount(session.agentId),
        amount: charge.amountCents
      })
    }
    // A purchase per line, in this unit of work: one the policy refuses (a limit the lines reach
    // together included) or the wallet cannot pay rolls every line back.
    const bought = yield* Effect.forEach(lines, (line, i) =>
      commerce.buyInUnit({
        caller,
        serviceId: line.serviceId,
        tierId: line.tierId,
        input: inputOf(session.metadata, i),
        idempotencyReference: purchaseKeyOf(session.id, i)
      })
    )
    const made = bought.map((b) => ("purchase" in b ? b.purchase : null))
    const waits = made.some((p) => p?.status === "pending_approval")
    const [first] = made
    yield* store.update({
      ...session,
      status: waits ? "pending_approval" : "completed",
      buyer: buyer ?? session.buyer,
      paidWith,
      transactionId: first?.transaction?.id ?? null,
      approvalId: first?.status === "pending_approval" ? (first.approval?.id ?? null) : null,
      updatedAt: new Date(now).toISOString()
    })
    // The order exists now: the agent platform is told (order_create, then order_update as it moves),
    // when a receiver is configured (docs/acp.md "Order events").
    if (Option.isSome(config.acpOrderWebhookUrl)) {
      const at = new Date(now).toISOString()
      yield* notices.insert({
        sessionId: session.id,
        agentId: session.agentId,
        createdAt: at,
        notifiedStatus: null,
        attempts: 0,
        lastError: null,
        nextAttemptAt: at,
        doneAt: null
      })
    }
    return bought
  })

  const complete = Effect.fnUntraced(function* (caller: Caller, id: string, payment: PaymentInput, buyer: unknown) {
    const agentId = yield* buyerOf(caller)
    const handler = yield* handlerOf(agentId, payment)
    let bought
    if (handler._tag === "card") {
      // Checked before the card is charged (the session still payable at its quoted prices, and the
      // owner's policy allowing each line's purchase: a card is not charged for what the policy
      // refuses); checked again, locked, in the unit of work (with the lines' sum against the limits).
      const { lines, totalCents: amountCents } = yield* payable(yield* owned(caller, id, false))
      const policy = yield* wallet.policyOf(agentId)
      for (const line of lines) {
        yield* wallet.authorize(
          agentId,
          policy,
          { priceCents: line.unitAmountCents, category: line.category, sellerAgentId: line.sellerAgentId },
          { approved: false }
        )
      }
      const { chargeId } = yield* delegated.charge({
        token: handler.token,
        amountCents,
        currency: CURRENCY,
        description: chargeDescription(lines),
        metadata: { acp_checkout_session_id: id, agent_id: agentId },
        idempotencyKey: yield* ids.make("acpcharge")
      })
      // A purchase that is not made gives the charge back.
      bought = yield* atomically(completeInUnit(caller, id, buyer, CARD_HANDLER_ID, { chargeId, amountCents })).pipe(
        Effect.tapError(() => Effect.ignore(delegated.refund(chargeId, `refund_${chargeId}`)))
      )
    } else {
      bought = yield* atomically(completeInUnit(caller, id, buyer, WALLET_HANDLER_ID, null))
    }
    // Committed: each agent seller's order is announced, a push seller's answer awaited (ORDER_WAIT_MS).
    yield* Effect.forEach(bought, (b) => commerce.afterBuy(b), { concurrency: "unbounded", discard: true })
    return yield* get(caller, id)
  })

  const cancelInUnit = Effect.fnUntraced(function* (caller: Caller, id: string) {
    const session = yield* owned(caller, id, true)
    if (session.status === "pending_approval") {
      // Waiting on the owner: the agent takes its requests back (Approvals.withdraw, in this unit of
      // work): nothing was spent, the owner can no longer approve them. A line bought already (its
      // purchase made without approval, or approved since), or an approval decided first: not cancelable.
      const view = yield* viewOf(session)
      const bought = view.lines.find((l) => l.transaction !== null)
      if (bought !== undefined) {
        return yield* new SessionNotCancelable({
          message: `checkout session ${id} cannot be canceled: ${bought.line.id} was bought (${bought.transaction?.id})`,
          status: "completed"
        })
      }
      const decided = view.lines.find((l) => l.approval !== null && l.approval.status !== "pending")
      if (view.lines.every((l) => l.approval === null || l.approval.status !== "pending")) {
        return yield* new SessionNotCancelable({
          message: `checkout session ${id} cannot be canceled: its owner's approval is ${decided?.approval?.status ?? "decided"}`,
          status: "canceled"
        })
      }
      const approvals = yield* Effect.forEach(view.lines, ({ approval }) =>
        approval === null || approval.status !== "pending"
          ? Effect.succeed(approval)
          : commerce.withdrawApproval(caller, approval.id).pipe(
              Effect.catchTags({
                Conflict: (e) =>
                  Effect.fail(
                    new SessionNotCancelable({
                      message: `checkout session ${id} cannot be canceled: its owner's approval is ${e.state ?? "decided"}`,
                      status: e.state === "approved" ? "completed" : "canceled"
                    })
                  ),
                NotFound: () => Effect.fail(notFound(id))
              })
            )
      )
      const now = yield* Clock.currentTimeMillis
      const next: AcpSessionRecord = { ...session, status: "canceled", updatedAt: new Date(now).toISOString() }
      yield* store.update(next)
      return { session: next, lines: view.lines.map((l, i) => ({ ...l, approval: approvals[i] })), now }
    }
    if (session.status === "completed" || session.status === "canceled") {
      return yield* new SessionNotCancelable({
        message: `checkout session ${id} is ${session.status} and cannot be canceled`,
        status: session.status
      })
    }
    const now = yield* Clock.currentTimeMillis
    const next: AcpSessionRecord = { ...session, status: "canceled", updatedAt: new Date(now).toISOString() }
    yield* store.update(next)
    return unbought(next, now)
  })
  const cancel = (caller: Caller, id: string) => atomically(cancelInUnit(caller, id))

  /** A session as it stands, whoever's (the order events' worker reads the order of each it notices). */
  const view = (id: string) =>
    Effect.flatMap(store.get(id), (s) => (s === undefined ? Effect.succeed(undefined) : viewOf(s)))

  return AcpCheckout.of({ create, get, update, complete, cancel, view, cardPsp: delegated.psp })
})

export class AcpCheckout extends Context.Service<AcpCheckout, AcpCheckoutService>()("agent-commerce/AcpCheckout") {
  static readonly layer = Layer.effect(AcpCheckout, make).pipe(
    Layer.provide([Commerce.layer, Catalog.layer, Ledger.layer, Wallet.layer])
  )
}
