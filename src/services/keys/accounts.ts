// Accounts and dashboard sessions: sign-up, sign-in (scrypt-checked password), session tokens.
import { traced } from "../platform/Tracing.js"
import { Clock, Effect } from "effect"
import { Account, type AccountRecord } from "../../schema/keys/keys.js"
import { InvalidInput, NotFound, Unauthorized } from "../../schema/platform/errors.js"
import { DUMMY_HASH, hashPassword, sha256, verifyPassword } from "./credentials.js"
import { KeysStore } from "./KeysStore.js"
import { Ids } from "../platform/Db.js"

const SESSION_TTL_MS = 7 * 24 * 3600 * 1000

const nowIso = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms).toISOString())

const toAccount = (a: AccountRecord) =>
  Account.make({ id: a.id, email: a.email, name: a.name, planId: a.planId, createdAt: a.createdAt })

/** The account and session methods of the Keys service, over its store. */
export const makeAccounts = Effect.gen(function* () {
  const store = yield* KeysStore
  const ids = yield* Ids

  const signUp = Effect.fnUntraced(function* (input: { email: string; password: string; name: string }) {
    if (input.password.length < 10) {
      return yield* Effect.fail(
        new InvalidInput({ message: "password must have at least 10 characters", field: "password" })
      )
    }
    const email = input.email.trim().toLowerCase()
    const record: AccountRecord = {
      id: yield* ids.make("acct"),
      email,
      name: input.name,
      passwordHash: yield* hashPassword(input.password),
      planId: null,
      createdAt: yield* nowIso
    }
    yield* store.insertAccount(record)
    return toAccount(record)
  }, traced("Keys.signUp"))

  const startSession = Effect.fnUntraced(function* (accountId: string) {
    const token = yield* ids.secret(32)
    const now = yield* Clock.currentTimeMillis
    yield* store.insertSession({
      tokenHash: sha256(token),
      accountId,
      createdAt: new Date(now).toISOString(),
      expiresAt: new Date(now + SESSION_TTL_MS).toISOString()
    })
    return { token, expiresAt: new Date(now + SESSION_TTL_MS).toISOString() }
  })

  const signIn = Effect.fnUntraced(function* (input: { email: string; password: string }) {
    const account = yield* store.findAccountByEmail(input.email.trim().toLowerCase())
    // Verify against a dummy hash when the account is unknown, so timing does not reveal it.
    const ok = yield* verifyPassword(input.password, account?.passwordHash ?? DUMMY_HASH)
    if (!account || !ok) return yield* Effect.fail(new Unauthorized({ message: "wrong e-mail or password" }))
    const session = yield* startSession(account.id)
    return { account: toAccount(account), ...session }
  }, traced("Keys.signIn"))

  const sessionAccount = Effect.fnUntraced(function* (token: string) {
    const session = token ? yield* store.findSession(sha256(token)) : undefined
    const now = yield* Clock.currentTimeMillis
    if (!session || Date.parse(session.expiresAt) <= now) {
      return yield* Effect.fail(new Unauthorized({ message: "not signed in, or the session expired" }))
    }
    const account = yield* store.getAccount(session.accountId)
    if (!account) return yield* Effect.fail(new Unauthorized({ message: "account no longer exists" }))
    return toAccount(account)
  })

  const signOut = (token: string) => store.deleteSession(sha256(token))

  const getAccount = (accountId: string) =>
    Effect.flatMap(store.getAccount(accountId), (a) =>
      a
        ? Effect.succeed(toAccount(a))
        : Effect.fail(new NotFound({ message: `account ${accountId} not found`, resource: "account", id: accountId }))
    )

  return {
    signUp,
    signIn,
    signOut,
    sessionAccount,
    startSession,
    getAccount,
    setAccountPlan: store.setAccountPlan
  }
})
