// Who is asking for the discovery document: a User-Agent classified as an AI agent, a crawler, a
// browser or unknown (pure), and the message each kind of visitor is given.
import { AGENT_API_PREFIX } from "../../schema/platform/routes.js"
import type { Visitor, VisitorClass } from "../../schema/discovery/discovery.js"

export interface UserAgentClass {
  readonly classified_as: VisitorClass
  readonly agent_name: string | null
  readonly organization: string | null
}

type Known = readonly [pattern: RegExp, name: string, organization: string | null, kind: VisitorClass]

/**
 * Checked in order; the first match wins. AI agents before crawlers before browsers (AI bots send
 * Mozilla-style strings).
 */
const KNOWN_USER_AGENTS: ReadonlyArray<Known> = [
  [/ChatGPT-User/i, "ChatGPT-User", "OpenAI", "ai_agent"],
  [/OAI-SearchBot/i, "OAI-SearchBot", "OpenAI", "ai_agent"],
  [/GPTBot/i, "GPTBot", "OpenAI", "ai_agent"],
  [/Claude-User/i, "Claude-User", "Anthropic", "ai_agent"],
  [/Claude-SearchBot/i, "Claude-SearchBot", "Anthropic", "ai_agent"],
  [/Claude-Web/i, "Claude-Web", "Anthropic", "ai_agent"],
  [/ClaudeBot/i, "ClaudeBot", "Anthropic", "ai_agent"],
  [/anthropic-ai/i, "anthropic-ai", "Anthropic", "ai_agent"],
  [/\bAnthropic\//i, "Anthropic SDK", "Anthropic", "ai_agent"],
  [/\bOpenAI\//i, "OpenAI SDK", "OpenAI", "ai_agent"],
  [/Perplexity-User/i, "Perplexity-User", "Perplexity", "ai_agent"],
  [/PerplexityBot/i, "PerplexityBot", "Perplexity", "ai_agent"],
  [/MistralAI-User/i, "MistralAI-User", "Mistral AI", "ai_agent"],
  [/cohere-ai/i, "cohere-ai", "Cohere", "ai_agent"],
  [/meta-externalagent/i, "meta-externalagent", "Meta", "ai_agent"],
  [/Google-CloudVertexBot/i, "Google-CloudVertexBot", "Google", "ai_agent"],
  [/Gemini/i, "Gemini", "Google", "ai_agent"],
  [/YouBot/i, "YouBot", "You.com", "ai_agent"],
  [/DuckAssistBot/i, "DuckAssistBot", "DuckDuckGo", "ai_agent"],
  [/LangChain/i, "LangChain", null, "ai_agent"],
  [/llama[-_ ]?index/i, "LlamaIndex", null, "ai_agent"],
  [/python-requests/i, "python-requests", null, "ai_agent"],
  [/python-httpx/i, "python-httpx", null, "ai_agent"],
  [/aiohttp/i, "aiohttp", null, "ai_agent"],
  [/Python-urllib/i, "Python-urllib", null, "ai_agent"],
  [/^curl\//i, "curl", null, "ai_agent"],
  [/^Wget\//i, "Wget", null, "ai_agent"],
  [/node-fetch/i, "node-fetch", null, "ai_agent"],
  [/\bundici\b/i, "undici", null, "ai_agent"],
  [/^node$/i, "node", null, "ai_agent"],
  [/\baxios\//i, "axios", null, "ai_agent"],
  [/Go-http-client/i, "Go-http-client", null, "ai_agent"],
  [/okhttp/i, "okhttp", null, "ai_agent"],
  [/^(Deno|Bun)\//i, "JavaScript runtime", null, "ai_agent"],
  [/Googlebot/i, "Googlebot", "Google", "crawler"],
  [/bingbot/i, "bingbot", "Microsoft", "crawler"],
  [/DuckDuckBot/i, "DuckDuckBot", "DuckDuckGo", "crawler"],
  [/Baiduspider/i, "Baiduspider", "Baidu", "crawler"],
  [/YandexBot/i, "YandexBot", "Yandex", "crawler"],
  [/Slurp/i, "Slurp", "Yahoo", "crawler"],
  [/Applebot/i, "Applebot", "Apple", "crawler"],
  [/Amazonbot/i, "Amazonbot", "Amazon", "crawler"],
  [/CCBot/i, "CCBot", "Common Crawl", "crawler"],
  [/Bytespider/i, "Bytespider", "ByteDance", "crawler"],
  [/facebookexternalhit/i, "facebookexternalhit", "Meta", "crawler"],
  [/Twitterbot/i, "Twitterbot", "X", "crawler"],
  [/LinkedInBot/i, "LinkedInBot", "LinkedIn", "crawler"]
]

const GENERIC_BOT = /bot\b|crawl|spider|slurp|archiver|fetcher/i
const BROWSER = /^Mozilla\/5\.0 .*(Chrome|Chromium|Firefox|Safari|Edg|OPR|Gecko)\//

/** Classifies a User-Agent header: known AI agents and clients, crawlers, browsers, else unknown. */
export const classifyUserAgent = (userAgent: string | undefined): UserAgentClass => {
  const ua = (userAgent ?? "").trim()
  if (ua === "") return { classified_as: "unknown", agent_name: null, organization: null }
  for (const [pattern, name, organization, kind] of KNOWN_USER_AGENTS) {
    if (pattern.test(ua)) return { classified_as: kind, agent_name: name, organization }
  }
  if (GENERIC_BOT.test(ua)) return { classified_as: "crawler", agent_name: null, organization: null }
  if (BROWSER.test(ua)) return { classified_as: "browser", agent_name: null, organization: null }
  return { classified_as: "unknown", agent_name: null, organization: null }
}

/** An Authorization header carrying a bearer key (the key is the first group). */
export const BEARER = /^Bearer[ ]+([^\s]+)[ ]*$/i

const visitorMessage = (base: string, c: UserAgentClass): string => {
  switch (c.classified_as) {
    case "ai_agent":
      return (
        `Welcome${c.agent_name ? `, ${c.agent_name}` : ""}: you are classified as an AI agent. ` +
        "Start with for_ai_agents; " +
        `get an API key at ${base}/agent-dashboard and send it as Authorization: Bearer <key> ` +
        `to ${base}${AGENT_API_PREFIX}.`
      )
    case "crawler":
      return `Welcome, crawler. Public pages are listed in ${base}/sitemap.xml; crawl rules are in ${base}/robots.txt.`
    case "browser":
      return `This is the machine-readable description of the platform; the human-readable site starts at ${base}/.`
    case "unknown":
      return (
        "Your client could not be classified from its User-Agent. " +
        `AI agents: read ${base}/llms.txt and for_ai_agents.`
      )
  }
}

/** A visitor without a (valid) key, described from its User-Agent. */
export const anonymousVisitor = (
  baseUrl: string,
  userAgent: string | undefined,
  c: UserAgentClass,
  rejected: string | undefined
): Visitor => {
  const message = visitorMessage(baseUrl, c)
  const refused = `The Authorization header was not accepted (${rejected}); classified by User-Agent instead.`
  return {
    ...c,
    message: rejected ? `${refused} ${message}` : message,
    authenticated: false,
    detected_by: (userAgent ?? "").trim() === "" ? "none" : "user_agent"
  }
}
