// Domain dedupe of the owner's agent and key creation, end to end on every storage. The promise: an
// owner whose keyed request created the agent (or the key) retries with the same key after the
// idempotency record is gone — here forgotten after its 24 h, as one lost in a failover would be —
// and gets the same agent, not a second one; a key's retry learns it was made (409: its secret was
// shown once); the same key with another body is 422.
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { signUp } from "../fixtures/agents.js"
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
    }
  )
}
