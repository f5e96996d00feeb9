// The typed client derived from the HttpApi: typed success values and decoded tagged errors.
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { runClient } from "../../src/client.js"
import { createAgentKey } from "../fixtures/agents.js"
import { startServer, type TestServer } from "../fixtures/server.js"

let server: TestServer
beforeAll(async () => {
  server = await startServer()
})
afterAll(async () => {
  await server?.close()
})

describe("typed client", () => {
  it("reads /me with a key and decodes a 401 as the Unauthorized tagged error", async () => {
    const key = await createAgentKey(server.baseUrl, ["catalog:read"])
    const me = await runClient({ baseUrl: server.baseUrl, apiKey: key.secret }, (c) => c.agent.me())
    expect(me.key.id).toBe(key.keyId)
    expect(me.key.permissions).toEqual(["catalog:read"])
    const error = await runClient({ baseUrl: server.baseUrl, apiKey: "ak_live_wrong" }, (c) =>
      Effect.flip(c.agent.me())
    )
    expect(error._tag).toBe("Unauthorized")
  })
})
