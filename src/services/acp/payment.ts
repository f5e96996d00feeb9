// The ACP completion's inputs, read (docs/acp.md "Payment handlers"): the payment handler the
// agent names, checked against what is offered, and each line's service input from the session's
// metadata. Pure: no storage, no processor.
import {
  CARD_CREDENTIAL_TYPE,
  CARD_HANDLER_ID,
  WALLET_CREDENTIAL_TYPE,
  WALLET_HANDLER_ID
} from "../../schema/acp/sessions.js"
import { Effect } from "effect"
import { InvalidInput } from "../../schema/platform/errors.js"

/** The spec's PaymentData, as far as a handler reads it. */
export interface PaymentInput {
  readonly handlerId: string | undefined
  readonly instrumentType: string | undefined
  readonly credentialType: string | undefined
  readonly token: string | undefined
}

/**
 * The handler `payment` names, checked: the wallet with the caller's own agent as its credential,
 * or a delegated card token (a Shared Payment Token).
 */
export const handlerOf = (agentId: string, payment: PaymentInput) => {
  if (payment.handlerId === CARD_HANDLER_ID) {
    if (payment.credentialType !== CARD_CREDENTIAL_TYPE || !payment.token) {
      return Effect.fail(
        new InvalidInput({
          message: `the card handler's credential is {"type": "${CARD_CREDENTIAL_TYPE}", "token": "<a Shared Payment Token>"}`,
          field: "$.payment_data.instrument.credential"
        })
      )
    }
    return Effect.succeed({ _tag: "card" as const, token: payment.token })
  }
  if (payment.handlerId !== WALLET_HANDLER_ID) {
    return Effect.fail(
      new InvalidInput({
        message: `payment handler ${JSON.stringify(payment.handlerId ?? null)} is not offered: use "${WALLET_HANDLER_ID}" or "${CARD_HANDLER_ID}"`,
        field: "$.payment_data.handler_id"
      })
    )
  }
  if (payment.credentialType !== WALLET_CREDENTIAL_TYPE || payment.token !== agentId) {
    return Effect.fail(
      new InvalidInput({
        message: `the wallet handler's credential is {"type": "${WALLET_CREDENTIAL_TYPE}", "token": "<your agent id>"}: an agent pays from its own wallet`,
        field: "$.payment_data.instrument.credential"
      })
    )
  }
  return Effect.succeed({ _tag: "wallet" as const })
}

/** A line's service input: `metadata.inputs[i]` when the agent sent one per line, else `metadata.input`. */
export const inputOf = (metadata: unknown, index: number): unknown => {
  if (typeof metadata !== "object" || metadata === null) return null
  const m = metadata as { readonly input?: unknown; readonly inputs?: unknown }
  if (Array.isArray(m.inputs) && index < m.inputs.length) return m.inputs[index]
  return "input" in m ? m.input : null
}
