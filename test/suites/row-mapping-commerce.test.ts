// The purchase path's hand-mapped rows, on the SQL storages: the wallet lock a paid call takes
// (WalletStore.lockForPurchase) reads its row without a row Schema, so this pins its mapping
// against the decoded row `get` returns (a wallet with a non-default policy, its timestamps and
// its whole balance, and a first-timer's rows). The settlement's open statement is pinned the same
// way in test/suites/settlement.test.ts ("opening a purchase").
import { expect } from "@effect/vitest"
import { Effect, Layer } from "effect"
import type { WalletRecord } from "../../src/schema/commerce/wallets.js"
import { EXTERNAL_GRANTS, walletAccount } from "../../src/schema/ledger/ledger.js"
import { cents } from "../../src/schema/platform/common.js"
import { DEFAULT_POLICY } from "../../src/schema/wallet/policy.js"
import { Ledger } from "../../src/services/ledger/Ledger.js"
import { Ids, Transactor } from "../../src/services/platform/Db.js"
import { WalletStore } from "../../src/services/wallet/WalletStore.js"
import { forEachStorage } from "../fixtures/suite.js"

forEachStorage(
  "row mapping: the purchase lock",
  (storage) => Ledger.layer.pipe(Layer.provideMerge(storage), Layer.provideMerge(Ids.Live)),
  (it) => {
    it.effect("lockForPurchase maps the wallet row exactly as the decoded `get` does, with the balance", () =>
      Effect.gen(function* () {
        const wallets = yield* WalletStore
        const ledger = yield* Ledger
        const { atomically } = yield* Transactor
        const wallet: WalletRecord = {
          agentId: "agt_rowmap_1",
          policy: {
            ...DEFAULT_POLICY,
            perTransactionLimitCents: cents(700),
            dailyLimitCents: null,
            allowedCategories: ["data", "text"],
            autonomyLevel: "semi_auto",
            autoRecharge: { enabled: true, thresholdCents: cents(100), amountCents: cents(2_000) }
          },
          createdAt: "2026-11-20T08:15:30.123Z",
          updatedAt: "2026-11-21T09:00:00.000Z"
        }
        yield* wallets.put(wallet)
        yield* ledger.transfer({
          kind: "grant",
          reference: "fund-rowmap-1",
          from: EXTERNAL_GRANTS,
          to: walletAccount(wallet.agentId),
          amount: 1_234
        })
        const locked = yield* atomically(wallets.lockForPurchase({ ...wallet, policy: DEFAULT_POLICY }))
        expect(locked).toEqual({ wallet, balanceCents: 1_234 })
        expect(locked.wallet).toEqual(yield* wallets.get(wallet.agentId))
      })
    )

    it.effect("a first-timer's lock makes the rows: the wallet as given, balance 0, the same as `get` reads", () =>
      Effect.gen(function* () {
        const wallets = yield* WalletStore
        const { atomically } = yield* Transactor
        const initial: WalletRecord = {
          agentId: "agt_rowmap_new",
          policy: DEFAULT_POLICY,
          createdAt: "2026-11-22T00:00:00.000Z",
          updatedAt: "2026-11-22T00:00:00.000Z"
        }
        const locked = yield* atomically(wallets.lockForPurchase(initial))
        expect(locked).toEqual({ wallet: initial, balanceCents: 0 })
        expect(yield* wallets.get(initial.agentId)).toEqual(initial)
      })
    )
  },
  undefined,
  { only: ["embedded", "postgres"] }
)
