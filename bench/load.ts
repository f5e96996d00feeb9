// Load generator process for the benchmark: runs autocannon against one target and prints one JSON
// summary line. Runs in its own process (spawned by bench/run.ts) so it never shares the server's core.
// Usage: load.js '<LoadSpec as JSON>'
import { createRequire } from "node:module"

/** One request of a scenario; `{id}` in the path is replaced by the id captured from the previous step. */
export interface LoadStep {
  readonly method: "GET" | "POST"
  readonly path: string
  readonly headers?: Readonly<Record<string, string>>
  readonly body?: string
  /** Read this field of the JSON response and use it as `{id}` in the next step. */
  readonly capture?: string
  /** Per-connection headers: connection n sends headerPool[n mod length] (e.g. one API key per connection). */
  readonly headerPool?: ReadonlyArray<Readonly<Record<string, string>>>
}

export interface LoadSpec {
  readonly url: string
  readonly connections: number
  readonly durationSeconds: number
  readonly steps: ReadonlyArray<LoadStep>
  /**
   * A weighted mix instead of `steps` (the soak): every request picks one entry at random, with
   * probability weight ÷ total, so many agents and endpoints share the connections.
   */
  readonly mix?: ReadonlyArray<MixEntry>
}

export interface MixEntry {
  readonly weight: number
  readonly method: "GET" | "POST"
  readonly path: string
  readonly headers?: Readonly<Record<string, string>>
  readonly body?: string
}

export interface LoadResult {
  readonly requestsPerSecond: number
  readonly latencyP50Ms: number
  readonly latencyP99Ms: number
  readonly latencyMaxMs: number
  readonly total: number
  readonly non2xx: number
  readonly errors: number
  readonly timeouts: number
  readonly statusCodes: Readonly<Record<string, number>>
  /** CPU time the load generator itself used (user + system), ms. */
  readonly loadCpuMs: number
}

interface AutocannonRequest {
  method: string
  path: string
  headers?: Record<string, string>
  body?: string
  setupRequest?: (req: AutocannonRequest, context: Record<string, unknown>) => AutocannonRequest
  onResponse?: (status: number, body: string, context: Record<string, unknown>) => void
}
interface AutocannonOutput {
  requests: { average: number; total: number }
  latency: { p50: number; p99: number; max: number }
  non2xx: number
  errors: number
  timeouts: number
  statusCodeStats?: Record<string, { count: number }>
}
type Autocannon = (
  options: Record<string, unknown>,
  callback: (error: Error | null, result: AutocannonOutput) => void
) => unknown

const autocannon = createRequire(import.meta.url)("autocannon") as Autocannon

const spec = JSON.parse(process.argv[2] ?? "{}") as LoadSpec

/** Connection slots for header pools: each connection takes the next number on its first request. */
const slots = { next: 0 }

const requests: Array<AutocannonRequest> = spec.steps.map((step, i) => {
  const previous = i > 0 ? spec.steps[i - 1] : undefined
  const pool = step.headerPool
  const setup =
    previous?.capture || pool
      ? (req: AutocannonRequest, context: Record<string, unknown>): AutocannonRequest => {
          if (pool && context.slot === undefined) context.slot = slots.next++
          return {
            ...req,
            ...(previous?.capture ? { path: step.path.replace("{id}", String(context.id ?? "missing")) } : {}),
            ...(pool ? { headers: { ...req.headers, ...pool[Number(context.slot) % pool.length] } } : {})
          }
        }
      : undefined
  return {
    method: step.method,
    path: step.path,
    headers: { ...(step.body !== undefined ? { "content-type": "application/json" } : {}), ...step.headers },
    ...(step.body !== undefined ? { body: step.body } : {}),
    ...(setup ? { setupRequest: setup } : {}),
    ...(step.capture
      ? {
          onResponse: (_status: number, body: string, context: Record<string, unknown>) => {
            try {
              context.id = (JSON.parse(body) as Record<string, unknown>)[step.capture!]
            } catch {
              context.id = undefined
            }
          }
        }
      : {})
  }
})

/** The mix as one request whose setupRequest draws the next entry (autocannon calls it per request). */
const mixRequests = (mix: ReadonlyArray<MixEntry>): Array<AutocannonRequest> => {
  const cumulative: Array<number> = []
  let total = 0
  for (const m of mix) cumulative.push((total += m.weight))
  const built = mix.map((m) => ({
    method: m.method,
    path: m.path,
    headers: { ...(m.body !== undefined ? { "content-type": "application/json" } : {}), ...m.headers },
    ...(m.body !== undefined ? { body: m.body } : {})
  }))
  const pick = () => {
    const x = Math.random() * total
    let lo = 0
    let hi = cumulative.length - 1
    while (lo < hi) {
      const mid = (lo + hi) >> 1
      if (cumulative[mid]! > x) hi = mid
      else lo = mid + 1
    }
    return built[lo]!
  }
  return [{ method: "GET", path: "/", setupRequest: () => pick() }]
}

autocannon(
  {
    url: spec.url,
    connections: spec.connections,
    duration: spec.durationSeconds,
    requests: spec.mix ? mixRequests(spec.mix) : requests,
    timeout: 10
  },
  (error, out) => {
    if (error) {
      process.stderr.write(`${error.message}\n`)
      process.exit(1)
    }
    const statusCodes: Record<string, number> = {}
    for (const [code, stat] of Object.entries(out.statusCodeStats ?? {})) statusCodes[code] = stat.count
    const result: LoadResult = {
      requestsPerSecond: out.requests.average,
      latencyP50Ms: out.latency.p50,
      latencyP99Ms: out.latency.p99,
      latencyMaxMs: out.latency.max,
      total: out.requests.total,
      non2xx: out.non2xx,
      errors: out.errors,
      timeouts: out.timeouts,
      statusCodes,
      loadCpuMs: (() => {
        const u = process.cpuUsage()
        return Math.round((u.user + u.system) / 1000)
      })()
    }
    process.stdout.write(`${JSON.stringify(result)}\n`)
  }
)
