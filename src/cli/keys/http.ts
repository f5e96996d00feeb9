// The keys CLI's HTTP mode: the dashboard JSON endpoints of a running server (--url), signed in as
// the account's owner.
import type { Agent, ApiKeyView } from "../../schema/keys/keys.js"
import { CliError, type Options } from "./options.js"
import { printCreated, printList, printRevoked } from "./output.js"

export const httpMode = async (o: Options): Promise<void> => {
  const base = o.url!
  let cookie = ""
  const call = async <A>(
    method: string,
    path: string,
    body?: unknown,
    okStatuses: ReadonlyArray<number> = [200, 201, 204]
  ) => {
    let res: Response
    try {
      res = await fetch(`${base}/api/dashboard${path}`, {
        method,
        // Every write is JSON, an empty one included: the server refuses cookie writes that are not (CSRF).
        headers: {
          accept: "application/json",
          ...(method !== "GET" ? { "content-type": "application/json" } : {}),
          ...(cookie ? { cookie } : {})
        },
        body: body !== undefined ? JSON.stringify(body) : undefined
      })
    } catch (e) {
      throw new CliError(`cannot reach ${base}: ${(e as Error).message} (is the server running? npm start)`)
    }
    const setCookie = res.headers.get("set-cookie")
    if (setCookie) cookie = setCookie.split(";")[0]
    const text = await res.text()
    const data = text ? (JSON.parse(text) as unknown) : undefined
    return { status: res.status, ok: okStatuses.includes(res.status), data: data as A }
  }
  const fail = (what: string, r: { status: number; data: unknown }): never => {
    const message = (r.data as { message?: string } | undefined)?.message ?? "no details"
    throw new CliError(`${what} failed: HTTP ${r.status}: ${message}`)
  }
  const signIn = async () => {
    const r = await call<{ account: { id: string; email: string } }>("POST", "/signin", {
      email: o.email,
      password: o.password
    })
    if (!r.ok) fail("sign-in", r)
    return r.data.account
  }

  if (o.command === "create") {
    let created = true
    const signUp = await call<{ account: { id: string; email: string } }>("POST", "/signup", {
      email: o.email,
      password: o.password,
      name: o.name ?? o.email!.split("@")[0]
    })
    let account = signUp.data?.account
    if (signUp.status === 409) {
      created = false
      account = await signIn()
    } else if (!signUp.ok) fail("sign-up", signUp)
    const agents = await call<ReadonlyArray<Agent>>("GET", "/agents")
    if (!agents.ok) fail("listing agents", agents)
    let agent = agents.data.find((a) => a.name === o.agent)
    const agentCreated = agent === undefined
    if (!agent) {
      const r = await call<Agent>("POST", "/agents", { name: o.agent, organization: o.org ?? null })
      if (!r.ok) fail("creating the agent", r)
      agent = r.data
    }
    const k = await call<{ key: ApiKeyView; secret: string }>("POST", `/agents/${encodeURIComponent(agent.id)}/keys`, {
      name: o.keyName,
      permissions: o.permissions,
      expiresAt: o.expiresAt
    })
    if (!k.ok) fail("creating the key", k)
    await call("POST", "/signout")
    printCreated(
      {
        account: { id: account!.id, email: account!.email, created },
        agent: { id: agent.id, name: agent.name, created: agentCreated },
        key: k.data.key,
        secret: k.data.secret,
        baseUrl: base
      },
      o.json
    )
  } else if (o.command === "revoke") {
    await signIn()
    const r = await call<ApiKeyView>("POST", `/keys/${encodeURIComponent(o.key!)}/revoke`)
    if (!r.ok) fail("revoking the key", r)
    await call("POST", "/signout")
    printRevoked(r.data, o.json)
  } else {
    const account = await signIn()
    const [agents, keys] = [
      await call<ReadonlyArray<Agent>>("GET", "/agents"),
      await call<ReadonlyArray<ApiKeyView>>("GET", "/keys")
    ]
    if (!agents.ok) fail("listing agents", agents)
    if (!keys.ok) fail("listing keys", keys)
    await call("POST", "/signout")
    printList(account.email, agents.data, keys.data, o.json)
  }
}
