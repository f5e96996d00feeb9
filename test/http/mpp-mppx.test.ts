// The stock mppx client (0.11) pays a per_call service over HTTP in both header placements: the
// key as Bearer with the credential in Payment-Authorization (the challenge's header parameter),
// and the key in X-API-Key with the credential in Authorization: Payment, as the draft writes it.
import { Effect, Option, Redacted } from "effect"
import { Challenge, Receipt } from "mppx"
import { Mppx } from "mppx/client"
import { afterAll, beforeAll, expect, it } from "vitest"
import { EXTERNAL_GRANTS, walletAccount } from "../../src/schema/ledger/ledger.js"
import { Ledger } from "../../src/services/ledger/Ledger.js"
import { createAgentKey } from "../fixtures/agents.js"
import { describeEachStorage } from "../fixtures/suite.js"
import { creditsClient } from "../fixtures/mppxCredits.js"
import { startRuntimeServer, type RuntimeServer } from "../fixtures/runtimeServer.js"

const COMMERCE = "/api/v1/agent/commerce"
const SERVICE = "svc_translate_pro" // per_call: standard 2 cents
const SECRET = "mpp-test-secret-0123456789"

describeEachStorage("the stock mppx client pays over HTTP", (storage) => {
  let server: RuntimeServer
  const fund = (agentId: string, amount: number) =>
    server.run(
      Effect.flatMap(Ledger, (l) =>
        l.transfer({
          kind: "grant",
          reference: `fund-${agentId}-${amount}`,
          from: EXTERNAL_GRANTS,
          to: walletAccount(agentId),
          amount
        })
      )
    )
  const balance = (account: string) => server.run(Effect.flatMap(Ledger, (l) => l.balance(account)))

  beforeAll(async () => {
    server = await startRuntimeServer({
      storage,
      config: {
        rateLimitPerMinute: 100_000,
        rateLimitPerDay: 1_000_000,
        mppChallengeSecret: Option.some(Redacted.make(SECRET))
      }
    })
  }, 60_000)
  afterAll(async () => {
    await server?.close()
  })

  for (const placement of [
    "Authorization: Bearer key + Payment-Authorization",
    "X-API-Key + Authorization: Payment"
  ] as const) {
    it(`${placement}: 402 → mppx pays → 200 with a receipt mppx accepts, charged once`, async () => {
      const k = await createAgentKey(server.baseUrl, ["commerce:buy"])
      await fund(k.agentId, 10)
      const keyHeaders: Record<string, string> = placement.startsWith("X-API-Key")
        ? { "x-api-key": k.secret }
        : { authorization: `Bearer ${k.secret}` }
      const sent: Array<Headers> = []
      const statuses: Array<number> = []
      const challenges: Array<Challenge.Challenge> = []
      // Only to watch the wire: every request mppx makes, and every status it gets.
      const watched: typeof fetch = async (input, init) => {
        sent.push(new Headers(init?.headers))
        const res = await fetch(input, init)
        statuses.push(res.status)
        if (res.status === 402) challenges.push(Challenge.fromResponse(res))
        return res
      }
      const mppx = Mppx.create({ methods: [creditsClient], polyfill: false, fetch: watched })
      const res = await mppx.fetch(`${server.baseUrl}${COMMERCE}/services/${SERVICE}/invoke?tier=standard`, {
        method: "POST",
        headers: { ...keyHeaders, "content-type": "application/json" },
        body: JSON.stringify({ input: { text: "stock client" } })
      })
      expect(statuses).toEqual([402, 200])
      // The id is the HMAC binding mppx's own server computes and verifies.
      expect(Challenge.verify(challenges[0], { secretKey: SECRET })).toBe(true)
      expect(Challenge.verify(challenges[0], { secretKey: "another secret" })).toBe(false)
      expect(res.status).toBe(200)
      const receipt = Receipt.fromResponse(res)
      expect(receipt).toMatchObject({
        status: "success",
        method: "credits",
        amount: "2",
        currency: "usd",
        serviceId: SERVICE
      })
      const body = await res.json()
      expect(body).toMatchObject({ chargedCents: 2, receipt: { reference: receipt.reference } })
      // Where mppx put the credential: the field the challenge named, or Authorization by default.
      const paidWith = sent[1]
      const payment = expect.stringMatching(/^Payment /)
      expect({
        authorization: paidWith.get("authorization"),
        paymentAuthorization: paidWith.get("payment-authorization")
      }).toEqual(
        placement.startsWith("X-API-Key")
          ? { authorization: payment, paymentAuthorization: null }
          : { authorization: `Bearer ${k.secret}`, paymentAuthorization: payment }
      )
      expect(await balance(walletAccount(k.agentId))).toBe(8)
    })
  }
})
