// The keys CLI's arguments: the usage text, the parsed options and the one error it reports.
import { parseArgs } from "node:util"
import { allPermissions, type PermissionGrant } from "../../schema/keys/keys.js"

export const USAGE = `Usage:
  npm run keys -- create --email <e-mail> --password <password> --agent <agent name>
                         --permissions <p1,p2,…> [--expires <ISO time | Nd>] [--org <organisation>]
                         [--name <account name>] [--key-name <label>] [--url <server>] [--json]
  npm run keys -- revoke --key <key_…> [--url <server> --email <e-mail> --password <password>]
  npm run keys -- list   --email <e-mail> [--url <server> --password <password>] [--json]

Permissions: ${allPermissions.join(", ")}, or commerce:* for all four commerce ones.

Where it writes:
  --url http://localhost:3000   talks to a running server through its dashboard JSON endpoints
                                (signs up, or signs in when the account exists). Works with any storage.
  without --url                 writes straight into the configured storage: the embedded store in
                                DATA_DIR (the default; only while no server holds the folder), or
                                STORAGE=postgres with DATABASE_URL set to the server's database.
                                (STORAGE=memory lives inside one process, so a key made there would
                                vanish when this command exits.)
  The password may also come from the KEYS_PASSWORD environment variable (keeps it out of shell history).
  Without --url, revoke and list act as the operator: no password is needed.`

/** A failure the CLI reports as one line (exit code 1; 2 for usage errors). */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode = 1
  ) {
    super(message)
  }
}

export interface Options {
  readonly command: string
  readonly email?: string
  readonly password?: string
  readonly name?: string
  readonly agent?: string
  readonly org?: string
  readonly permissions: ReadonlyArray<PermissionGrant>
  readonly expiresAt: string | null
  readonly keyName: string
  readonly key?: string
  readonly url?: string
  readonly json: boolean
}

const grantNames: ReadonlyArray<string> = [...allPermissions, "commerce:*"]

const parseExpiry = (raw: string | undefined, now: number): string | null => {
  if (raw === undefined || raw === "") return null
  const days = /^(\d{1,5})d$/.exec(raw)
  if (days) return new Date(now + Number(days[1]) * 86_400_000).toISOString()
  const at = Date.parse(raw)
  if (!Number.isFinite(at))
    throw new CliError(
      `--expires must be an ISO 8601 time (2027-01-01T00:00:00Z) or a number of days (30d), got "${raw}"`,
      2
    )
  return new Date(at).toISOString()
}

export const parseOptions = (argv: ReadonlyArray<string>, env: NodeJS.ProcessEnv, now: number): Options => {
  let parsed
  try {
    parsed = parseArgs({
      args: [...argv],
      allowPositionals: true,
      options: {
        email: { type: "string" },
        password: { type: "string" },
        name: { type: "string" },
        agent: { type: "string" },
        org: { type: "string" },
        permissions: { type: "string" },
        expires: { type: "string" },
        "key-name": { type: "string" },
        key: { type: "string" },
        url: { type: "string" },
        json: { type: "boolean", default: false },
        help: { type: "boolean", short: "h", default: false }
      }
    })
  } catch (e) {
    throw new CliError(`${(e as Error).message}\n\n${USAGE}`, 2)
  }
  const { values, positionals } = parsed
  const command = positionals[0] ?? ""
  if (values.help || command === "help" || command === "")
    throw new CliError(USAGE, values.help || command === "help" ? 0 : 2)
  if (!["create", "revoke", "list"].includes(command)) throw new CliError(`unknown command "${command}"\n\n${USAGE}`, 2)
  const permissions = (values.permissions ?? "")
    .split(",")
    .map((p) => p.trim())
    .filter((p) => p !== "")
  const unknown = permissions.filter((p) => !grantNames.includes(p))
  if (unknown.length > 0)
    throw new CliError(`unknown permission(s): ${unknown.join(", ")}; choose from ${grantNames.join(", ")}`, 2)
  const url = values.url?.replace(/\/+$/, "")
  if (url !== undefined && !/^https?:\/\/[^\s/]+/.test(url))
    throw new CliError(`--url must be an http(s) address, got "${values.url}"`, 2)
  const options: Options = {
    command,
    email: values.email?.trim(),
    password: values.password ?? env.KEYS_PASSWORD,
    name: values.name,
    agent: values.agent?.trim(),
    org: values.org?.trim(),
    permissions: permissions as ReadonlyArray<PermissionGrant>,
    expiresAt: parseExpiry(values.expires, now),
    keyName: values["key-name"]?.trim() || "cli",
    key: values.key?.trim(),
    url,
    json: values.json ?? false
  }
  const need = (ok: unknown, what: string) => {
    if (!ok) throw new CliError(`${command} needs ${what}\n\n${USAGE}`, 2)
  }
  if (command === "create") {
    need(options.email, "--email")
    need(options.password, "--password (or KEYS_PASSWORD)")
    need(options.agent, "--agent <agent name>")
    need(options.permissions.length > 0, "--permissions (comma-separated)")
  } else if (command === "revoke") {
    need(options.key, "--key <key id>")
    if (url) {
      need(options.email, "--email (with --url, revoking signs in as the key's owner)")
      need(options.password, "--password (or KEYS_PASSWORD)")
    }
  } else {
    need(options.email, "--email")
    if (url) need(options.password, "--password (or KEYS_PASSWORD)")
  }
  return options
}
