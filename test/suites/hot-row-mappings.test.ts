// The two Postgres statements on every authenticated request keep hand-written row mappings (they
// were measured hot, docs/performance.md): these pin what each maps a row to.
import { describe, expect, it } from "vitest"
import { keyWithAgentOf } from "../../src/layers/keys/KeysStore.postgres.js"
import { countsOf } from "../../src/layers/keys/RateLimitStore.postgres.js"

const keyColumns = {
  id: "key_1",
  accountId: "acct_1",
  agentId: "agt_1",
  name: "ci",
  prefix: "ak_live_AbCdEf",
  secretHash: "ab12",
  permissions: ["catalog:read", "commerce:buy"],
  createdAt: new Date("2026-01-02T03:04:05.678Z"),
  expiresAt: null,
  revokedAt: new Date("2026-02-01T00:00:00Z"),
  lastUsedAt: null
}

describe("bearer-key lookup row", () => {
  it("maps the key's columns to the record (timestamps as ISO strings) and the joined columns to its agent", () => {
    const row = {
      ...keyColumns,
      agentName: "buyer",
      agentOrganization: null,
      agentCreatedAt: new Date("2026-01-01T00:00:00Z"),
      agentAccountId: "acct_1"
    }
    const { key, agent } = keyWithAgentOf(row)
    expect(key).toEqual({
      id: "key_1",
      accountId: "acct_1",
      agentId: "agt_1",
      name: "ci",
      prefix: "ak_live_AbCdEf",
      secretHash: "ab12",
      permissions: ["catalog:read", "commerce:buy"],
      createdAt: "2026-01-02T03:04:05.678Z",
      expiresAt: null,
      revokedAt: "2026-02-01T00:00:00.000Z",
      lastUsedAt: null
    })
    expect({ ...agent }).toEqual({
      id: "agt_1",
      accountId: "acct_1",
      name: "buyer",
      organization: null,
      createdAt: "2026-01-01T00:00:00.000Z"
    })
  })

  it("has no agent when the join found none", () => {
    const row = { ...keyColumns, agentName: null, agentOrganization: null, agentCreatedAt: null, agentAccountId: null }
    expect(keyWithAgentOf(row).agent).toBeUndefined()
  })
})

describe("rate-limit upsert rows", () => {
  it("gives each window its count from the RETURNING rows, in the windows' order (0 when missing)", () => {
    const windows = [{ name: "minute" }, { name: "day" }, { name: "hour" }]
    const rows = [
      { windowName: "day", count: 7 },
      { windowName: "minute", count: 3 }
    ]
    expect(countsOf(windows, rows)).toEqual([3, 7, 0])
  })
})
