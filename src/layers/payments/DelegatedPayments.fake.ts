// The fake processor's delegated payments (PAYMENTS=fake): a token beginning `spt_test_` is charged,
// `spt_test_declined` and every other token is declined. Nothing is kept: the charge exists only
// as the funding entry its purchase writes in the ledger.
import { Effect, Layer } from "effect"
import { randomBytes } from "node:crypto"
import { CardDeclined } from "../../schema/payments/payments.js"
import { DelegatedPayments } from "../../services/payments/DelegatedPayments.js"

/** The test tokens the fake processor accepts (docs/acp.md). */
export const FAKE_TEST_TOKEN_PREFIX = "spt_test_"
export const FAKE_DECLINED_TOKEN = "spt_test_declined"

export const FakeDelegatedPaymentsLive = Layer.succeed(
  DelegatedPayments,
  DelegatedPayments.of({
    psp: "fake",
    charge: (request) =>
      !request.token.startsWith(FAKE_TEST_TOKEN_PREFIX) || request.token === FAKE_DECLINED_TOKEN
        ? Effect.fail(
            new CardDeclined({
              message: `the fake processor declined the token (its test tokens begin ${FAKE_TEST_TOKEN_PREFIX}; ${FAKE_DECLINED_TOKEN} is declined)`
            })
          )
        : Effect.succeed({ chargeId: `ch_fake_${randomBytes(12).toString("base64url")}` }),
    refund: () => Effect.void
  })
)
