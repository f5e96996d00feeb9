// Knowledge delivered: after payment the buyer reads what was bought with the access id and the
// checkout session id it was paid in — and nobody else does (404 for any other pair). On every
// storage: memory, embedded (PGlite in memory) and Postgres when TEST_DATABASE_URL is set.
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { postgresSkipReason } from "../fixtures/db.js"
import { startServer, type TestServer } from "../fixtures/server.js"

interface Content {
  accessId: string
  productId: number
  productName: string
  format: string
  language: string
  grantedAt: string
  sections: Array<{ heading: string; body: string }>
  disclaimer: string
}

const storages = [
  { name: "memory", storage: "memory" as const, skip: undefined },
  { name: "embedded", storage: "embedded" as const, skip: undefined },
  { name: "postgres", storage: "postgres" as const, skip: postgresSkipReason }
]

for (const { name, storage, skip } of storages) {
  describe.skipIf(skip !== undefined)(`knowledge access content (${name})`, () => {
    let server: TestServer
    beforeAll(async () => {
      server = await startServer({ storage })
    })
    afterAll(async () => {
      await server?.close()
    })

    const trpc = async (path: string, input: unknown, method: "GET" | "POST") => {
      const res =
        method === "POST"
          ? await fetch(`${server.baseUrl}/api/trpc/${path}`, {
              method,
              headers: { "content-type": "application/json" },
              body: JSON.stringify(input)
            })
          : await fetch(`${server.baseUrl}/api/trpc/${path}?input=${encodeURIComponent(JSON.stringify(input))}`)
      return {
        status: res.status,
        body: (await res.json()) as {
          result?: { data: unknown }
          error?: { data: { httpStatus: number; field?: string } }
        }
      }
    }

    /** purchaseAccess → Pay on the hosted page → the access id from purchaseStatus. */
    const buy = async (serviceId: number) => {
      const started = (
        await trpc(
          "publicApi.purchaseAccess",
          { serviceId, customerEmail: "buyer@example.com", customerName: "Buyer" },
          "POST"
        )
      ).body.result!.data as { sessionId: string }
      const before = (await trpc("publicApi.purchaseStatus", { sessionId: started.sessionId }, "GET")).body.result!
        .data as { accessId?: string }
      expect(before.accessId).toBeUndefined()
      const paid = await fetch(`${server.baseUrl}/checkout/fake/${started.sessionId}/pay`, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: "card=4242424242424242",
        redirect: "manual"
      })
      expect(paid.status).toBe(303)
      const status = (await trpc("publicApi.purchaseStatus", { sessionId: started.sessionId }, "GET")).body.result!
        .data as { status: string; accessId: string }
      expect(status.status).toBe("paid")
      return { sessionId: started.sessionId, accessId: status.accessId }
    }
    const read = (accessId: string, sessionId?: string) =>
      fetch(`${server.baseUrl}/api/payments/access/${accessId}`, {
        headers: sessionId === undefined ? {} : { "checkout-session-id": sessionId }
      })

    it("the buyer reads the guide they paid for (REST and tRPC give the same content)", async () => {
      const { sessionId, accessId } = await buy(3)
      expect(accessId).toMatch(/^acc_/)
      const res = await read(accessId, sessionId)
      expect(res.status).toBe(200)
      const content = (await res.json()) as Content
      expect(content).toMatchObject({ accessId, productId: 3, format: "guide", language: "pt-BR" })
      expect(content.productName).toBe("Guia Completo dos 4 Ciclos")
      expect(content.sections).toHaveLength(4)
      expect(content.sections[0]!.heading).toMatch(/^Lua Nova/)
      expect(content.sections[0]!.body).toContain("prostaglandinas")
      expect(content.sections[0]!.body).toContain("Como o parceiro pode apoiar")
      expect(content.disclaimer.length).toBeGreaterThan(20)
      const viaTrpc = await trpc("publicApi.accessContent", { accessId, sessionId }, "GET")
      expect(viaTrpc.status).toBe(200)
      expect(viaTrpc.body.result!.data).toEqual(content)
    })

    it("a live session delivers its access code use and the preparation guide, said plainly", async () => {
      const { sessionId, accessId } = await buy(4)
      const content = (await (await read(accessId, sessionId)).json()) as Content
      expect(content.format).toBe("live_session")
      expect(content.sections[0]!.body).toContain("Este serviço não marca horários")
      expect(content.sections.length).toBe(5)
    })

    it("nobody else: another buyer's session, an unpaid checkout, a made-up id are the same 404; a missing or malformed session id is 400", async () => {
      const mine = await buy(1)
      const theirs = await buy(2)
      // Each buyer reads only their own.
      expect((await read(mine.accessId, mine.sessionId)).status).toBe(200)
      for (const [accessId, sessionId] of [
        [mine.accessId, theirs.sessionId],
        [theirs.accessId, mine.sessionId],
        ["acc_madeUpButWellFormed123", mine.sessionId]
      ] as const) {
        const res = await read(accessId, sessionId)
        expect(res.status).toBe(404)
        const body = (await res.json()) as { type: string; message: string }
        expect(body.type).toBe("NotFound")
        expect(JSON.stringify(body)).not.toContain("Lua")
      }
      const unpaid = (
        await trpc(
          "publicApi.purchaseAccess",
          { serviceId: 3, customerEmail: "late@example.com", customerName: "Late" },
          "POST"
        )
      ).body.result!.data as { sessionId: string }
      expect((await read(mine.accessId, unpaid.sessionId)).status).toBe(404)

      const missing = await read(mine.accessId)
      expect(missing.status).toBe(400)
      expect(((await missing.json()) as { field?: string }).field).toContain("checkout-session-id")
      expect((await read("not-an-access-id", mine.sessionId)).status).toBe(400)
      const badTrpc = await trpc("publicApi.accessContent", { accessId: mine.accessId }, "GET")
      expect(badTrpc.status).toBe(400)
      expect(badTrpc.body.error!.data.field).toBe("sessionId")
      expect(
        (await trpc("publicApi.accessContent", { accessId: mine.accessId, sessionId: theirs.sessionId }, "GET")).status
      ).toBe(404)
    })
  })
}
