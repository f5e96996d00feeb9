// Domain dedupe of the owner's agent and key creation, end to end on every storage. The promise: an
// owner whose keyed request created the agent (or the key) retries with the same key after the
// idempotency record is gone — here forgotten after its 24 h, as one lost in a failover would be —
// and gets the same agent, not a second one; a key's retry learns it was made (409: its secret was
// shown once); the same key with another body is 422.
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Effect } from "effect"
import { EXTERNAL_GRANTS, walletAccount } from "../../src/schema/ledger/ledger.js"
import { Ledger } from "../../src/services/ledger/Ledger.js"
import { createAgentKey, signUp, UNLIMITED_WALLET } from "../fixtures/agents.js"
import { setClock } from "../fixtures/clock.js"
import { storageCases } from "../fixtures/db.js"
import { startRuntimeServer, type RuntimeServer } from "../fixtures/runtimeServer.js"

const NOON = Date.parse("2031-03-14T12:00:00.000Z")
const DAY = 86_400_000

for (const c of storageCases) {
  describe.skipIf(c.skip !== undefined)(
    `domain dedupe of the owner's writes [${c.name}]${c.skip ? ` — ${c.skip}` : ""}`,
    () => {
      const time = setClock(NOON)
      let server: RuntimeServer
      beforeAll(async () => {
        server = await startRuntimeServer({ storage: c.name, clock: time.clock })
      }, 60_000)
      afterAll(async () => {
        await server?.close()
      })

      const post = (cookie: string, path: string, key: string, body: unknown) =>
        fetch(`${server.baseUrl}/api/dashboard${path}`, {
          method: "POST",
          headers: { "content-type": "application/json", cookie, "idempotency-key": key },
          body: JSON.stringify(body)
        })
      const agents = async (cookie: string) =>
        (await (await fetch(`${server.baseUrl}/api/dashboard/agents`, { headers: { cookie } })).json()) as Array<{
          id: string
        }>
      const keys = async (cookie: string) =>
        (await (await fetch(`${server.baseUrl}/api/dashboard/keys`, { headers: { cookie } })).json()) as Array<{
          id: string
        }>

      it("an agent created with a key, retried after its record is gone: the same agent, one agent", async () => {
        time.set(NOON)
        const owner = await signUp(server.baseUrl)
        const body = { name: "retry-safe", organization: "Test Org" }
        const first = await post(owner.cookie, "/agents", "agent-1", body)
        expect(first.status).toBe(201)
        const agent = (await first.json()) as { id: string }
        time.advance(DAY) // the idempotency record is forgotten; the session (7 days) is not
        const retry = await post(owner.cookie, "/agents", "agent-1", body)
        expect(retry.status, "answered as the first").toBe(201)
        expect(retry.headers.get("idempotent-replayed"), "not the middleware's replay").toBeNull()
        expect(((await retry.json()) as { id: string }).id).toBe(agent.id)
        expect((await agents(owner.cookie)).map((a) => a.id)).toEqual([agent.id])
        const other = await post(owner.cookie, "/agents", "agent-1", { ...body, name: "another" })
        expect(other.status, "the same key, another body").toBe(422)
        expect(await agents(owner.cookie)).toHaveLength(1)
      })

      it("a key created with an Idempotency-Key, retried after its record is gone: 409 naming the key, one key", async () => {
        time.set(NOON)
        const owner = await signUp(server.baseUrl)
        const agent = (await (await post(owner.cookie, "/agents", "a", { name: "keyed" })).json()) as { id: string }
        const body = { name: "ci", permissions: ["catalog:read"] }
        const first = await post(owner.cookie, `/agents/${agent.id}/keys`, "key-1", body)
        expect(first.status).toBe(201)
        const created = (await first.json()) as { key: { id: string } }
        time.advance(DAY)
        const retry = await post(owner.cookie, `/agents/${agent.id}/keys`, "key-1", body)
        expect(retry.status).toBe(409)
        expect(((await retry.json()) as { message: string }).message).toContain(created.key.id)
        expect((await keys(owner.cookie)).map((k) => k.id)).toEqual([created.key.id])
        const other = await post(owner.cookie, `/agents/${agent.id}/keys`, "key-1", { ...body, name: "other" })
        expect(other.status).toBe(422)
      })

      it("a wallet PATCH and an approval retried after their records are gone: the change in between kept, the same decision", async () => {
        time.set(NOON)
        const wallet = { ...UNLIMITED_WALLET, autonomyLevel: "manual" }
        const k = await createAgentKey(server.baseUrl, ["commerce:buy", "commerce:read"], { wallet })
        await server.run(
          Effect.flatMap(Ledger, (l) =>
            l.transfer({
              kind: "grant",
              reference: `fund-${k.agentId}`,
              from: EXTERNAL_GRANTS,
              to: walletAccount(k.agentId),
              amount: 1_000
            })
          )
        )
        const patch = (key: string, body: unknown) =>
          fetch(`${server.baseUrl}/api/dashboard/commerce/wallets/${k.agentId}`, {
            method: "PATCH",
            headers: { "content-type": "application/json", cookie: k.cookie, "idempotency-key": key },
            body: JSON.stringify(body)
          })
        expect((await patch("policy-1", { dailyLimitCents: 500 })).status).toBe(200)
        time.advance(DAY)
        expect((await patch("policy-2", { dailyLimitCents: 800 })).status, "a change in between").toBe(200)
        const retried = await patch("policy-1", { dailyLimitCents: 500 })
        expect(retried.status).toBe(200)
        expect(retried.headers.get("idempotent-replayed"), "not the middleware's replay").toBeNull()
        expect(((await retried.json()) as { policies: { dailyLimitCents: number } }).policies.dailyLimitCents).toBe(800)
        expect((await patch("policy-1", { dailyLimitCents: 600 })).status, "the same key, another body").toBe(422)

        const bought = await fetch(`${server.baseUrl}/api/v1/agent/commerce/buy`, {
          method: "POST",
          headers: { ...k.auth, "content-type": "application/json", "idempotency-key": "buy-1" },
          body: JSON.stringify({ serviceId: "svc_translate_pro", tierId: "standard", input: { text: "hi", to: "en" } })
        })
        const waiting = (await bought.json()) as { status: string; approval: { id: string } }
        expect(waiting.status).toBe("pending_approval")
        const approve = `/commerce/approvals/${waiting.approval.id}/approve`
        const first = await post(k.cookie, approve, "approve-1", {})
        expect(first.status).toBe(200)
        const decided = (await first.json()) as { transaction: { id: string } }
        time.advance(DAY)
        const retry = await post(k.cookie, approve, "approve-1", {})
        expect(retry.status, "the first decision, not 409").toBe(200)
        expect(retry.headers.get("idempotent-replayed")).toBeNull()
        expect(((await retry.json()) as { transaction: { id: string } }).transaction.id).toBe(decided.transaction.id)
        const decline = `/commerce/approvals/${waiting.approval.id}/decline`
        expect((await post(k.cookie, decline, "approve-1", {})).status, "the same key, another request").toBe(422)
      })
    }
  )
}
