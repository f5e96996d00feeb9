// What a user message asks the A2A endpoint for (docs/a2a.md "Calling a skill", "Text"): the skill
// and its arguments (a data part, or the intent of its text), its Idempotency-Key, the reply's
// envelope and the help answer, and what a caller without a key may send.
import { agentTools, type ApiTool } from "../descriptors/tools.js"
import { type A2aSkill, resolveSkills } from "../descriptors/a2a.js"
import type { A2aCalls } from "./calls.js"
import { type Intent, intentExamples, intentOf, type NoIntent } from "./intents.js"
import { isRecord, type Json } from "./rpc.js"
import { isX402TaskId } from "./x402Tasks.js"

const skills = resolveSkills(agentTools)
const skillIds = skills.map((s) => s.skill.id).join(", ")

/**
 * The skill and its arguments a user message asks for: a data part `{skill, …arguments}`, or
 * `message.metadata.skill` with the arguments in a data part. Otherwise a reason.
 */
export const skillCall = (
  message: unknown
): { readonly skill: string; readonly args: Json } | { readonly problem: string } => {
  if (!isRecord(message)) return { problem: "params.message is required" }
  const parts = Array.isArray(message.parts) ? message.parts : []
  const data = parts.find((p): p is { data: Json } => isRecord(p) && isRecord(p.data))?.data
  const fromMeta =
    isRecord(message.metadata) && typeof message.metadata.skill === "string" ? message.metadata.skill : undefined
  const named = data && typeof data.skill === "string" ? data.skill : fromMeta
  if (named === undefined)
    return { problem: `name the skill: a data part {"skill": "<id>", …arguments} (skills: ${skillIds})` }
  const { skill: _skill, ...args } = data ?? {}
  void _skill
  return { skill: named, args }
}

/** A tool by name; fails at startup if it was renamed. */
const toolNamed = (name: string) => {
  const tool = agentTools.find((t) => t.name === name)
  if (!tool) throw new Error(`A2A: no tool named ${name}`)
  return tool
}
const intentTools = new Map(
  (["list_services", "get_service", "buy", "transaction"] as const).map((n) => [n, toolNamed(n)])
)

/** What a user message runs: a skill named in a data part, or the intent of its text (docs/a2a.md). */
type MessageCall =
  | {
      readonly tool: ApiTool
      readonly args: Json
      readonly skill?: A2aSkill
      readonly intent?: Intent
    }
  | { readonly tool?: undefined; readonly intent: NoIntent }
  | { readonly problem: string }

export const messageCall = (message: unknown): MessageCall => {
  const call = skillCall(message)
  if (!("problem" in call)) {
    const found = skills.find((s) => s.skill.id === call.skill)
    if (!found) return { problem: `unknown skill ${call.skill} (skills: ${skillIds})` }
    return { tool: found.tool, args: call.args, skill: found.skill }
  }
  const text = textOf(message)
  if (text === undefined) return call
  const intent = intentOf(text)
  if (intent.intent === "help") return { intent }
  return {
    tool: intentTools.get(intent.tool)!,
    args: intent.args,
    intent,
    ...(skillOfTool.has(intent.tool) ? { skill: skillOfTool.get(intent.tool)! } : {})
  }
}
const skillOfTool = new Map(skills.map((s) => [s.tool.name, s.skill]))

/** The message's text: its text parts joined, when it has any. */
const textOf = (message: unknown): string | undefined => {
  if (!isRecord(message) || !Array.isArray(message.parts)) return undefined
  const texts = message.parts.filter((p): p is { text: string } => isRecord(p) && typeof p.text === "string")
  return texts.length === 0 ? undefined : texts.map((p) => p.text).join(" ")
}

/** The head of an agent message answering `message`: its id, the client's context kept. */
export const replyEnvelope = (calls: Pick<A2aCalls, "requestId">, message: unknown) => ({
  messageId: `${calls.requestId}.reply`,
  ...(isRecord(message) && typeof message.contextId === "string" && message.contextId !== ""
    ? { contextId: message.contextId }
    : {}),
  role: "ROLE_AGENT"
})

/** The answer to a text no row matched: the skills, how to call each, and the phrases understood. */
export const helpMessage = (calls: Pick<A2aCalls, "requestId">, params: Json, intent: NoIntent) => ({
  ...replyEnvelope(calls, params.message),
  parts: [
    {
      text: [
        ...(intent.hint !== undefined ? [`To check a purchase, ${intent.hint}.`] : []),
        `I sell and buy AI services for your agent's wallet. Say: ${intentExamples.map((e) => `"${e.say}"`).join(", ")}.`,
        `Or send a data part naming a skill: ${skills.map((s) => JSON.stringify(s.skill.example)).join(" ")}.`
      ].join(" "),
      mediaType: "text/plain"
    },
    {
      data: {
        skills: skills.map((s) => ({
          id: s.skill.id,
          name: s.skill.name,
          description: s.skill.description,
          example: s.skill.example
        })),
        phrases: intentExamples
      },
      mediaType: "application/json"
    }
  ],
  metadata: { intent: "help", ok: true }
})

const IDEMPOTENCY_KEY = /^[\x21-\x7e]{1,255}$/

/**
 * The message's own Idempotency-Key: `message.metadata.idempotencyKey` (or, as first documented,
 * the request's `metadata.idempotencyKey`; both given must agree). None when absent; a malformed
 * one is refused rather than dropped, so a client never believes a purchase is keyed when it is not.
 */
export const messageIdempotencyKey = (
  params: Json
): { readonly key: string | undefined } | { readonly problem: string; readonly field: string } => {
  const message = isRecord(params.message) ? params.message : {}
  const found = [
    ["message.metadata.idempotencyKey", isRecord(message.metadata) ? message.metadata.idempotencyKey : undefined],
    ["metadata.idempotencyKey", isRecord(params.metadata) ? params.metadata.idempotencyKey : undefined]
  ].filter((entry): entry is [string, unknown] => entry[1] !== undefined)
  for (const [field, value] of found) {
    if (typeof value !== "string" || !IDEMPOTENCY_KEY.test(value))
      return { problem: `${field}: must be 1 to 255 visible ASCII characters`, field }
  }
  if (found.length === 2 && found[0][1] !== found[1][1]) {
    return {
      problem: "message.metadata.idempotencyKey and metadata.idempotencyKey differ: send one",
      field: "message.metadata.idempotencyKey"
    }
  }
  return { key: found[0]?.[1] as string | undefined }
}

/** What a keyless caller may send: a buy (paid with x402), a message naming its x402 task, and GetTask / CancelTask of one. */
export const keylessCall = (body: unknown): boolean => {
  if (!isRecord(body) || body.jsonrpc !== "2.0") return false
  const params = isRecord(body.params) ? body.params : {}
  if (body.method === "GetTask" || body.method === "CancelTask") return isX402TaskId(params.id)
  if (body.method !== "SendMessage") return false
  if (isRecord(params.message) && isX402TaskId(params.message.taskId)) return true
  const call = messageCall(params.message)
  return "tool" in call && call.tool?.name === "buy"
}
