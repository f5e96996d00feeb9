// An Agentic Commerce Protocol checkout session as this marketplace keeps it (docs/acp.md): the
// catalogue tiers it quotes (a line each), who opened it, where it stands, and the purchases its
// completion made (one per line).
// The wire form (the spec's CheckoutSession) is rendered from this record by src/http/acp/wire.ts.
import { Schema } from "effect"
import { Cents, Timestamp } from "../platform/common.js"

/** The ACP release these endpoints implement (the spec's `API-Version` and `protocol.version`). */
export const ACP_API_VERSION = "2026-04-17"

/** How long an open session quotes its price (its `expires_at`). */
export const ACP_SESSION_TTL_MS = 30 * 60_000

/** The id of the one fulfilment option a digital service has. */
export const DIGITAL_OPTION_ID = "digital"

/** The wallet payment handler's id, and its credential type. */
export const WALLET_HANDLER_ID = "wallet"
export const WALLET_CREDENTIAL_TYPE = "agent_wallet"

/** The delegated card handler's id (the spec's examples name it so), and its credential type. */
export const CARD_HANDLER_ID = "card_tokenized"
export const CARD_CREDENTIAL_TYPE = "spt"

/**
 * The session's own states (the spec's names). `completed` means a purchase was made: its outcome
 * (delivered, held for an agent seller, failed, refunded) is the order's, read from the purchase.
 */
export const AcpSessionStatus = Schema.Literals(["ready_for_payment", "pending_approval", "completed", "canceled"])
export type AcpSessionStatus = typeof AcpSessionStatus.Type

/** One line: a catalogue tier, quoted when the session was opened or last updated. */
export const AcpLine = Schema.Struct({
  /** The line's id in the session (`line_item_1`). */
  id: Schema.String,
  /** `serviceId:tierId`, as the agent sent it. */
  itemId: Schema.String,
  serviceId: Schema.String,
  tierId: Schema.String,
  serviceName: Schema.String,
  tierName: Schema.String,
  description: Schema.String,
  category: Schema.String,
  unit: Schema.String,
  sellerAgentId: Schema.String,
  sellerName: Schema.String,
  quantity: Schema.Int,
  unitAmountCents: Cents
})
export type AcpLine = typeof AcpLine.Type

export const AcpSessionRecord = Schema.Struct({
  id: Schema.String,
  agentId: Schema.String,
  accountId: Schema.String,
  status: AcpSessionStatus,
  currency: Schema.String,
  lines: Schema.Array(AcpLine),
  /** The spec's Buyer and FulfillmentDetails, as the agent sent them (echoed, not used to deliver). */
  buyer: Schema.NullOr(Schema.Unknown),
  fulfillmentDetails: Schema.NullOr(Schema.Unknown),
  /** The create request's `metadata`, echoed; its `input` is the service's input (docs/acp.md). */
  metadata: Schema.NullOr(Schema.Unknown),
  /** The handler the completion paid with. */
  paidWith: Schema.NullOr(Schema.String),
  /**
   * The first line's purchase the completion made, or the approval it waits for (each line's own are
   * found by its purchase key, purchaseKeyOf).
   */
  transactionId: Schema.NullOr(Schema.String),
  approvalId: Schema.NullOr(Schema.String),
  createdAt: Timestamp,
  updatedAt: Timestamp,
  expiresAt: Timestamp
})
export type AcpSessionRecord = typeof AcpSessionRecord.Type

/** 405 — cancel of a session already completed or canceled (the spec's "Not cancelable"). */
export class SessionNotCancelable extends Schema.TaggedError<SessionNotCancelable>()(
  "SessionNotCancelable",
  { message: Schema.String, status: AcpSessionStatus },
  { httpApiStatus: 405 }
) {}

/**
 * 400 — an update or completion of a session that is no longer open (completed, canceled or
 * expired). Not 409: the spec gives 409 one meaning, an Idempotency-Key still in flight (retry).
 */
export class SessionClosed extends Schema.TaggedError<SessionClosed>()(
  "SessionClosed",
  { message: Schema.String, status: Schema.String },
  { httpApiStatus: 400 }
) {}

/** A session's id path prefix: `cs_` + random. */
export const ACP_SESSION_PREFIX = "cs"

const PURCHASE_KEY_PREFIX = "acp "

/** How many items one session holds: each is a purchase of its own, made together when it completes. */
export const ACP_MAX_LINES = 10

/**
 * A line's purchase's Idempotency-Key inside the purchase domain: one purchase per line, however often
 * the session is completed — `acp <session id>` for the first line (the key a session of one item has
 * always had), `acp <session id> <line id>` for the others. It holds a space, which no Idempotency-Key
 * a client sends can (1–255 visible ASCII, over REST, MCP and A2A alike), so no purchase made
 * elsewhere can be taken for the session's: with the `acp:` form it had until migration 0047, a REST
 * buy of another service under `Idempotency-Key: acp:<session id>` was read as the session's purchase,
 * and completing the session answered "completed" for an item never bought.
 */
export const purchaseKeyOf = (sessionId: string, lineIndex = 0) =>
  lineIndex === 0 ? `${PURCHASE_KEY_PREFIX}${sessionId}` : `${PURCHASE_KEY_PREFIX}${sessionId} ${lineIdOf(lineIndex)}`

/** The id of a session's line (`line_item_1` …), from its place in the session. */
export const lineIdOf = (lineIndex: number) => `line_item_${lineIndex + 1}`

/** The session a purchase was made for, from its Idempotency-Key (purchaseKeyOf); null for any other purchase. */
export const sessionOfPurchaseKey = (key: string | null) =>
  key !== null && key.startsWith(PURCHASE_KEY_PREFIX) ? key.slice(PURCHASE_KEY_PREFIX.length).split(" ")[0] : null

/**
 * An ACP order event notice (docs/acp.md "Order events"): one per completed session while
 * ACP_ORDER_WEBHOOK_URL is set — which order status the agent platform last acknowledged, and when
 * the worker looks at the order next.
 */
export const AcpOrderNotice = Schema.Struct({
  sessionId: Schema.String,
  agentId: Schema.String,
  createdAt: Schema.String,
  /** The order status the receiver acknowledged (2xx) last; null before the first (order_create). */
  notifiedStatus: Schema.NullOr(Schema.String),
  /** Whether the order the receiver acknowledged last carried its refund (absent in notices kept before refunds were told: false). */
  notifiedRefund: Schema.optionalKey(Schema.Boolean),
  /**
   * The order's state the receiver acknowledged last, as its event key (AcpOrderEvents' `stateKey`:
   * the status, lines delivered while others are not, refunds); absent in notices kept before sessions
   * held several items, which compare notifiedStatus and notifiedRefund instead.
   */
  notifiedState: Schema.optionalKey(Schema.String),
  /** Events sent for the current status without a 2xx. */
  attempts: Schema.Number,
  lastError: Schema.NullOr(Schema.String),
  /** When the worker looks next; null once done (the order final and acknowledged, or given up). */
  nextAttemptAt: Schema.NullOr(Schema.String),
  doneAt: Schema.NullOr(Schema.String)
})
export type AcpOrderNotice = typeof AcpOrderNotice.Type
