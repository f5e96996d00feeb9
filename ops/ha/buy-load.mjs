// Buys as fast as CONCURRENCY clients can against one service URL for SECONDS, each buy with a fresh
// Idempotency-Key, and prints buys/s and latency percentiles as JSON. Used by bench.sh.
// Usage: node ops/ha/buy-load.mjs http://127.0.0.1:3101 [seconds=10] [concurrency=8]
import { randomBytes } from "node:crypto"

const [baseUrl, seconds = "10", concurrency = "8"] = process.argv.slice(2)
if (!baseUrl) throw new Error("usage: buy-load.mjs BASE_URL [SECONDS] [CONCURRENCY]")
const post = async (path, body, headers = {}) => {
  const res = await fetch(`${baseUrl}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify(body)
  })
  const text = await res.text()
  if (res.status >= 300) throw new Error(`${path}: ${res.status} ${text}`)
  return { res, json: JSON.parse(text) }
}
const signup = await post("/api/dashboard/signup", {
  email: `bench-${randomBytes(5).toString("hex")}@example.com`,
  password: "correct horse battery",
  name: "Bench"
})
const cookie = (signup.res.headers.get("set-cookie") ?? "").split(";")[0]
const agent = (await post("/api/dashboard/agents", { name: "bench buyer", organization: "Bench" }, { cookie })).json
const key = (
  await post(
    `/api/dashboard/agents/${agent.id}/keys`,
    { name: "bench", permissions: ["catalog:read", "commerce:*"] },
    { cookie }
  )
).json
const auth = { authorization: `Bearer ${key.secret}` }
await post("/api/v1/agent/commerce/wallet/topup", { amountCents: 1_000_000 }, auth)
const listed = await (await fetch(`${baseUrl}/api/v1/agent/commerce/services`, { headers: auth })).json()
let tier
for (const s of listed.data ?? listed)
  for (const t of s.tiers ?? [])
    if (t.priceCents > 0 && (!tier || t.priceCents < tier.priceCents))
      tier = { serviceId: s.id, tierId: t.id, priceCents: t.priceCents }
const body = JSON.stringify({ serviceId: tier.serviceId, tierId: tier.tierId, input: { prompt: "bench" } })

let latencies = []
let failed = 0
let n = 0
const loop = async (until) => {
  while (Date.now() < until) {
    const started = performance.now()
    const res = await fetch(`${baseUrl}/api/v1/agent/commerce/buy`, {
      method: "POST",
      headers: {
        ...auth,
        "content-type": "application/json",
        "idempotency-key": `bench-${n++}-${randomBytes(4).toString("hex")}`
      },
      body
    })
    await res.arrayBuffer()
    if (res.status === 201) latencies.push(performance.now() - started)
    else failed++
  }
}
// Three seconds of warm-up (JIT, pool, plans), not counted; then the measured run.
const warmUntil = Date.now() + 3_000
await Promise.all(Array.from({ length: Number(concurrency) }, () => loop(warmUntil)))
latencies = []
failed = 0
const until = Date.now() + Number(seconds) * 1000
await Promise.all(Array.from({ length: Number(concurrency) }, () => loop(until)))
latencies.sort((a, b) => a - b)
const at = (p) => Math.round(latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * p))] * 10) / 10
console.log(
  JSON.stringify({
    buys: latencies.length,
    failed,
    buysPerSecond: Math.round(latencies.length / Number(seconds)),
    p50Ms: at(0.5),
    p99Ms: at(0.99)
  })
)
