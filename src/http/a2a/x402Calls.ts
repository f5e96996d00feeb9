// The x402 side of the A2A endpoint (docs/a2a.md "Paying with x402"): who a keyless payer is,
// whether a request activated the a2a-x402 extension, and the caller's x402 tasks and payments.
import { Effect, Option } from "effect"
import {
  A2A_X402_EXTENSION,
  A2A_X402_EXTENSION_ALIASES,
  X402_TASK_TTL_MS,
  type X402TaskRecord
} from "../../schema/a2a/x402Task.js"
import { X402TaskStore } from "../../services/a2a/X402TaskStore.js"
import type { Caller } from "../../services/keys/Caller.js"
import { AppConfig } from "../../services/platform/AppConfig.js"
import { Ids } from "../../services/platform/Db.js"
import { X402 } from "../../services/x402/X402.js"
import type { A2aX402, X402TaskPayment } from "./calls.js"
import type { Json } from "./rpc.js"
import { paidCallOf, X402_TASK_PREFIX } from "./x402Tasks.js"

/** A caller without a key: a payer whose x402 payment names it. */
export const KEYLESS: Caller = {
  accountId: "",
  agentId: undefined,
  keyId: undefined,
  permissions: new Set(),
  via: "x402"
}

const X402_URIS = new Set([A2A_X402_EXTENSION, ...A2A_X402_EXTENSION_ALIASES])

/** Whether `A2A-Extensions` (or the older `X-A2A-Extensions`) activates the a2a-x402 extension. */
export const x402Activated = (headers: Readonly<Record<string, string | undefined>>) =>
  [headers["a2a-extensions"], headers["x-a2a-extensions"]].some(
    (value) => value !== undefined && value.split(",").some((uri) => X402_URIS.has(uri.trim()))
  )

/** The x402 side of the calls: the caller's x402 tasks (X402TaskStore) and their payments (X402). */
export const x402CallsFor = Effect.fnUntraced(function* (
  caller: Caller,
  headers: Readonly<Record<string, string | undefined>>
) {
  const store = yield* X402TaskStore
  const x402 = yield* X402
  const ids = yield* Ids
  const { baseUrl } = yield* AppConfig
  const run = Effect.runPromiseWith(yield* Effect.context<never>())
  const owner = caller.agentId ?? null
  const orUnavailable = <A>(effect: Effect.Effect<A, { readonly _tag: "StorageUnavailable" }>) =>
    run(effect.pipe(Effect.catchTag("StorageUnavailable", () => Effect.succeed("unavailable" as const))))
  const nowIso = () => new Date().toISOString()
  const openTask = Effect.fnUntraced(function* (call: {
    readonly serviceId: string
    readonly tierId: string | null
    readonly body: string
  }) {
    const at = nowIso()
    // A few never-paid tasks past their time go with each new one: the table stays bounded.
    yield* store.purgeUnpaid(new Date(Date.parse(at) - X402_TASK_TTL_MS).toISOString(), 10)
    const record: X402TaskRecord = {
      id: yield* ids.make(X402_TASK_PREFIX.slice(0, -1)),
      agentId: owner,
      serviceId: call.serviceId,
      tierId: call.tierId,
      body: call.body,
      state: "payment-required",
      payer: null,
      nonce: null,
      paymentId: null,
      createdAt: at,
      updatedAt: at
    }
    yield* store.insert(record)
    return record
  })
  return {
    activated: x402Activated(headers),
    now: () => Date.now(),
    open: (call) => orUnavailable(openTask(call)),
    get: (id) =>
      orUnavailable(
        Effect.map(store.get(id), (task) => (task !== undefined && task.agentId === owner ? task : undefined))
      ),
    replace: (expected, next) => orUnavailable(store.replace(expected, next)),
    setPayment: (id, paymentId) =>
      run(store.setPayment(id, paymentId, nowIso()).pipe(Effect.catchTag("StorageUnavailable", () => Effect.void))),
    payment: (task) =>
      task.payer === null || task.nonce === null
        ? Promise.resolve(undefined)
        : orUnavailable(
            Effect.map(
              x402.ofTask({
                paymentId: task.paymentId,
                payer: task.payer,
                nonce: task.nonce,
                serviceId: task.serviceId,
                body: task.body
              }),
              (found) =>
                Option.isNone(found) ? undefined : (JSON.parse(JSON.stringify(found.value)) as X402TaskPayment)
            )
          ),
    required: (task, error) =>
      run(
        Effect.map(
          x402.paymentRequired(
            {
              serviceId: task.serviceId,
              tierId: task.tierId ?? undefined,
              url: `${baseUrl}${paidCallOf(task)}`
            },
            error
          ),
          (required) => (Option.isNone(required) ? undefined : (JSON.parse(JSON.stringify(required.value)) as Json))
        )
      )
  } satisfies A2aX402
})
