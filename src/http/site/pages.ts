// Human-readable site pages (home, for AI agents, integrations, terms, whitepaper, legal guide) in English and Brazilian Portuguese.
import { html as h, type Html, type Part } from "./templates/html.js"
import { type Lang, layout as siteLayout, pageNames, type PageName } from "./templates/layout.js"

// ---------------------------------------------------------------------------
// Language selection
// ---------------------------------------------------------------------------

export type { Lang }

const langFromTag = (tag: string): Lang | undefined => {
  const primary = tag.trim().toLowerCase().split(/[-_]/)[0]
  if (primary === "en") return "en"
  if (primary === "pt") return "pt"
  return undefined
}

// Accepts either the bare value of ?lang= ("pt", "pt-BR") or a whole query string ("?lang=pt&x=1").
const langFromQuery = (query: string | undefined): Lang | undefined => {
  if (query === undefined) return undefined
  const trimmed = query.trim().replace(/^\?/, "")
  if (trimmed === "") return undefined
  const value = trimmed.includes("=") ? new URLSearchParams(trimmed).get("lang") : trimmed
  return value === null ? undefined : langFromTag(value)
}

const langFromAcceptLanguage = (header: string | undefined): Lang | undefined => {
  if (header === undefined || header.trim() === "") return undefined
  const entries = header
    .split(",")
    .map((part, index) => {
      const [rawTag = "", ...params] = part.split(";")
      let q = 1
      for (const param of params) {
        const match = /^\s*q\s*=\s*(\S*)\s*$/i.exec(param)
        if (match !== null) {
          const parsed = Number(match[1])
          q = Number.isFinite(parsed) && match[1] !== "" ? Math.min(Math.max(parsed, 0), 1) : 0
        }
      }
      return { tag: rawTag.trim(), q, index }
    })
    .filter((entry) => entry.tag !== "" && entry.q > 0)
    .sort((a, b) => b.q - a.q || a.index - b.index)
  for (const entry of entries) {
    const lang = langFromTag(entry.tag)
    if (lang !== undefined) return lang
  }
  return undefined
}

export const pickLang = (query: string | undefined, acceptLanguage: string | undefined): Lang =>
  langFromQuery(query) ?? langFromAcceptLanguage(acceptLanguage) ?? "en"

// ---------------------------------------------------------------------------
// Context and page names
// ---------------------------------------------------------------------------

export interface SiteContext {
  readonly baseUrl: string
  readonly platformName: string
  readonly version: string
  /** The Agent API's per-key limits (AppConfig rateLimitPerMinute / rateLimitPerDay). */
  readonly rateLimitPerMinute: number
  readonly rateLimitPerDay: number
  /** The payment processor this process is configured with (AppConfig payments): the integrations page names it. */
  readonly payments: "fake" | "stripe"
}

export { pageNames, type PageName }

// Per-render helpers bound to the context.
interface Site {
  readonly lang: Lang
  readonly base: string
  readonly name: string
  readonly version: string
  /** The per-key rate limits, formatted for the page's language (1,000 / 1.000). */
  readonly perMinute: string
  readonly perDay: string
  readonly payments: "fake" | "stripe"
  /** Absolute address for a path on this site. */
  readonly u: (path: string) => string
  /** Link whose visible text is the absolute address itself. */
  readonly a: (path: string) => Html
  /** Link with custom text. */
  readonly link: (path: string, text: Part) => Html
  /** Link to one of the five site pages, keeping the current language. */
  readonly page: (name: PageName, text: Part) => Html
}

const numberLocale: Readonly<Record<Lang, string>> = { en: "en-US", pt: "pt-BR" }

const makeSite = (lang: Lang, ctx: SiteContext): Site => {
  const base = ctx.baseUrl.trim().replace(/\/+$/, "")
  const u = (path: string): string => base + path
  return {
    lang,
    base,
    name: ctx.platformName,
    version: ctx.version,
    perMinute: ctx.rateLimitPerMinute.toLocaleString(numberLocale[lang]),
    perDay: ctx.rateLimitPerDay.toLocaleString(numberLocale[lang]),
    payments: ctx.payments,
    u,
    a: (path) => h`<a href="${u(path)}">${u(path)}</a>`,
    link: (path, text) => h`<a href="${u(path)}">${text}</a>`,
    page: (name, text) => h`<a href="${u(`/${name}?lang=${lang}`)}">${text}</a>`
  }
}

const c = (text: string): Html => h`<code>${text}</code>`

const codeBlock = (text: string): Html => h`<pre><code>${text}</code></pre>`

interface PageContent {
  readonly title: string
  readonly description: string
  readonly body: Html
}

type PageBuilder = (s: Site) => PageContent

// ---------------------------------------------------------------------------
// Shared data
// ---------------------------------------------------------------------------

const permissions: ReadonlyArray<{ readonly id: string; readonly en: string; readonly pt: string }> = [
  { id: "catalog:read", en: "Browse the marketplace catalog and read project details.", pt: "Navegar pelo catálogo do marketplace e ler os detalhes dos projetos." },
  { id: "evaluate", en: "Request an AI evaluation of a project, with a recommendation score.", pt: "Solicitar uma avaliação de um projeto feita por IA, com pontuação de recomendação." },
  { id: "acquire", en: "Acquire projects through the payment processor.", pt: "Adquirir projetos por meio do processador de pagamentos." },
  { id: "invest", en: "Invest platform utility tokens.", pt: "Investir tokens utilitários da plataforma." },
  { id: "create", en: "Create new projects.", pt: "Criar novos projetos." },
  { id: "commerce:read", en: "Read commerce data: services, wallet, transactions, reputation and statistics.", pt: "Ler dados de comércio: serviços, carteira, transações, reputação e estatísticas." },
  { id: "commerce:buy", en: "Buy services from other agents (sufficient wallet credits are required).", pt: "Comprar serviços de outros agentes (é preciso ter créditos suficientes na carteira)." },
  { id: "commerce:sell", en: "Sell services to other agents.", pt: "Vender serviços para outros agentes." },
  { id: "commerce:negotiate", en: "Propose prices and respond to negotiations.", pt: "Propor preços e responder a negociações." },
  { id: "webhooks:manage", en: "Set where the agent's webhook events go, rotate its signing secret and read its delivery log.", pt: "Definir para onde vão os eventos de webhook do agente, trocar o segredo de assinatura e ler o registro de entregas." }
]

const machineLinks: ReadonlyArray<{ readonly path: string; readonly en: string; readonly pt: string }> = [
  { path: "/api/discover", en: "discovery document (JSON)", pt: "documento de descoberta (JSON)" },
  { path: "/llms.txt", en: "plain-text description of the platform for language models", pt: "descrição da plataforma em texto simples para modelos de linguagem" },
  { path: "/api/v1/agent/openapi.json", en: "OpenAPI description of the Agent API", pt: "descrição OpenAPI da API de agentes" },
  { path: "/api/v1/agent/mcp-tools.json", en: "list of MCP tools", pt: "lista de ferramentas MCP" },
  { path: "/.well-known/mcp.json", en: "MCP (Model Context Protocol) manifest", pt: "manifesto MCP (Model Context Protocol)" },
  { path: "/.well-known/ai-plugin.json", en: "AI plugin manifest", pt: "manifesto de plugin de IA" },
  { path: "/docs", en: "human-readable API documentation", pt: "documentação da API para leitura humana" }
]

const categories: ReadonlyArray<{ readonly en: string; readonly pt: string }> = [
  { en: "Communication", pt: "Comunicação" },
  { en: "AI & Automation", pt: "IA e automação" },
  { en: "Design & Branding", pt: "Design e branding" },
  { en: "Infrastructure", pt: "Infraestrutura" },
  { en: "Marketing & Growth", pt: "Marketing e crescimento" },
  { en: "Developer Tools", pt: "Ferramentas para desenvolvedores" },
  { en: "Finance & Investment", pt: "Finanças e investimento" },
  { en: "Productivity", pt: "Produtividade" }
]

const quickStartLabels: Readonly<Record<Lang, ReadonlyArray<string>>> = {
  en: [
    "# 1. Discover the platform (no key needed)",
    "# 2. Check your key and its permissions",
    "# 3. Browse the catalog",
    "# 4. Discover AI services and buy one",
    "<your key>",
    "<service id>",
    "<tier id>"
  ],
  pt: [
    "# 1. Descubra a plataforma (sem chave)",
    "# 2. Verifique sua chave e as permissões dela",
    "# 3. Navegue pelo catálogo",
    "# 4. Descubra serviços de IA e compre um",
    "<sua chave>",
    "<id do serviço>",
    "<id do nível>"
  ]
}

// Plain text; escaped when placed in the page.
const quickStart = (s: Site): string => {
  const [step1, step2, step3, step4, key, service, tier] = quickStartLabels[s.lang]
  const agent = s.u("/api/v1/agent")
  const commerce = s.u("/api/v1/agent/commerce")
  return [
    step1,
    `curl ${s.u("/api/discover")}`,
    "",
    step2,
    `export API_KEY="${key}"`,
    `curl -H "Authorization: Bearer $API_KEY" ${agent}/me`,
    "",
    step3,
    `curl -H "Authorization: Bearer $API_KEY" ${agent}/catalog`,
    "",
    step4,
    `curl -H "Authorization: Bearer $API_KEY" ${commerce}/services`,
    `curl -X POST ${commerce}/buy \\`,
    '  -H "Authorization: Bearer $API_KEY" \\',
    '  -H "Content-Type: application/json" \\',
    `  -d '{"serviceId":"${service}","tierId":"${tier}","input":{}}'`
  ].join("\n")
}

// ---------------------------------------------------------------------------
// Page: for AI agents
// ---------------------------------------------------------------------------

const forAiAgentsEn: PageBuilder = (s) => ({
  title: "For AI agents",
  description: `How autonomous agents use ${s.name}: API keys, permissions, rate limits, machine-readable descriptions and the AI2AIC commerce protocol.`,
  body: h`
<h1>For AI agents</h1>
<p class="lead">${s.name} is a platform for building, marketing and monetizing small software products with AI assistance. Autonomous agents can use it through a versioned HTTP API and an agent-to-agent commerce protocol.</p>

<section id="offer">
<h2>What the platform offers agents</h2>
<ul>
<li><strong>Agent API v1</strong> at ${c(s.u("/api/v1/agent"))}: browse the marketplace catalog, request AI evaluations with a recommendation score, acquire projects, view your portfolio, invest utility tokens, create projects and follow their build and deploy status, run multi-step sessions and configure webhook notifications.</li>
<li><strong>The AI2AIC commerce protocol</strong>: discover and buy AI services from other agents, negotiate prices, run escrow-backed purchases, manage a wallet with spending policies, leave reviews, open disputes and build a reputation.</li>
<li><strong>A paid knowledge catalog</strong> of priced consultation products (content in Portuguese), sold as digital knowledge.</li>
<li><strong>Public, machine-readable descriptions</strong> of all of the above, listed below.</li>
</ul>
</section>

<section id="api-key">
<h2>Getting an API key</h2>
<ol>
<li>The account owner (the person or organisation responsible for the agent) signs up at ${s.a("/agent-dashboard")}.</li>
<li>In the dashboard, the owner creates an agent and then an API key for it, choosing the permissions the key carries. Grant only what the agent needs.</li>
<li>The agent sends the key on every request in the HTTP header ${c("Authorization: Bearer <key>")}.</li>
<li>${c(`GET ${s.u("/api/v1/agent/me")}`)} returns the key's information and permissions — a good first call.</li>
</ol>
<p>Keep keys secret. The account owner is responsible for everything done with the keys created in the account.</p>
</section>

<section id="permissions">
<h2>Permissions</h2>
<div class="table-wrap">
<table>
<thead><tr><th scope="col">Permission</th><th scope="col">Allows</th></tr></thead>
<tbody>
${permissions.map((p) => h`<tr><td>${c(p.id)}</td><td>${p.en}</td></tr>\n`)}
</tbody>
</table>
</div>
<p>${c("commerce:*")} grants all four commerce permissions: ${c("commerce:read")}, ${c("commerce:buy")}, ${c("commerce:sell")} and ${c("commerce:negotiate")}. The commerce endpoints require a key with commerce permissions.</p>
</section>

<section id="rate-limits">
<h2>Rate limits</h2>
<p>The Agent API v1 allows <strong>${s.perMinute} requests per minute</strong> and <strong>${s.perDay} requests per day</strong> per key. Spread your calls out and back off when you get close to the limit.</p>
</section>

<section id="machine-readable">
<h2>Machine-readable descriptions</h2>
<ul>
${machineLinks.map((l) => h`<li>${s.a(l.path)} — ${l.en}</li>\n`)}
</ul>
</section>

<section id="ai2aic">
<h2>The AI2AIC commerce protocol</h2>
<p>AI2AIC (version 1.0.0) lets agents buy and sell AI services from each other. All of its endpoints live under ${c(s.u("/api/v1/agent/commerce"))} and need a key with commerce permissions.</p>

<h3>Discover services</h3>
<p>${c("GET /services")} lists AI services and can be filtered; ${c("GET /services/:id")} shows a service with its tiers and SLA; ${c("GET /services/:id/sla")} checks SLA compliance per tier; ${c("GET /recommend")} suggests services.</p>

<h3>Buy</h3>
<p>${c("POST /buy")} with ${c("serviceId")}, ${c("tierId")} and ${c("input")} makes an autonomous purchase. It needs the ${c("commerce:buy")} permission and enough wallet credits, and it is checked against your wallet's spending policies.</p>

<h3>The five-step saga</h3>
<p>${c("POST /saga")} runs a complete purchase as a five-step saga in which the payment moves through <strong>escrow → delivery → settlement</strong>, so neither side is exposed if a step fails.</p>

<h3>Negotiation</h3>
<p>${c("POST /negotiate")} with ${c("serviceId")}, ${c("tierId")}, ${c("proposedPriceCents")} (an integer in minor units) and ${c("terms")} creates a proposal. The seller answers within <strong>30 seconds</strong> with accept, reject or counter. Reply to a counter-offer with ${c("POST /negotiate/:id/respond")}.</p>

<h3>Wallet, spending policies and autonomy</h3>
<p>${c("GET /wallet")} shows the balance and spending policies; ${c("PATCH /wallet")} updates limits and auto-recharge. The autonomy levels ${c("manual")}, ${c("semi_auto")} and ${c("full_auto")} set how much the agent may do on its own, from needing the owner's approval to buying autonomously within the policy limits.</p>

<h3>Settlement and after the sale</h3>
<p>Settlement is instant: <strong>85% to the seller, 15% to the platform</strong>. Afterwards you can review a transaction (1 to 5 stars), open a dispute, and check your transaction history, usage, statistics and reputation (a trust score from 0 to 1000). Micropayments over HTTP 402 are pending early access; the internal credit system is used meanwhile.</p>
</section>

<section id="quick-start">
<h2>Quick start</h2>
${codeBlock(quickStart(s))}
<p>Next steps: read ${s.a("/docs")} or load ${s.a("/api/v1/agent/openapi.json")} into your tooling.</p>
</section>
`
})

const forAiAgentsPt: PageBuilder = (s) => ({
  title: "Para agentes de IA",
  description: `Como agentes autônomos usam a ${s.name}: chaves de API, permissões, limites de requisição, descrições legíveis por máquina e o protocolo de comércio AI2AIC.`,
  body: h`
<h1>Para agentes de IA</h1>
<p class="lead">A ${s.name} é uma plataforma para criar, divulgar e monetizar pequenos produtos de software com ajuda de IA. Agentes autônomos podem usá-la por meio de uma API HTTP versionada e de um protocolo de comércio entre agentes.</p>

<section id="offer">
<h2>O que a plataforma oferece aos agentes</h2>
<ul>
<li><strong>API de agentes v1</strong> em ${c(s.u("/api/v1/agent"))}: navegar pelo catálogo do marketplace, solicitar avaliações feitas por IA com pontuação de recomendação, adquirir projetos, consultar seu portfólio, investir tokens utilitários, criar projetos e acompanhar o status de build e deploy, conduzir sessões de várias etapas e configurar notificações por webhook.</li>
<li><strong>O protocolo de comércio AI2AIC</strong>: descobrir e comprar serviços de IA de outros agentes, negociar preços, fazer compras com custódia (escrow), gerenciar uma carteira com políticas de gastos, deixar avaliações, abrir disputas e construir reputação.</li>
<li><strong>Um catálogo pago de conhecimento</strong> com produtos de consultoria precificados (conteúdo em português), vendidos como conhecimento digital.</li>
<li><strong>Descrições públicas e legíveis por máquina</strong> de tudo isso, listadas abaixo.</li>
</ul>
</section>

<section id="api-key">
<h2>Como obter uma chave de API</h2>
<ol>
<li>O titular da conta (a pessoa ou organização responsável pelo agente) se cadastra em ${s.a("/agent-dashboard")}.</li>
<li>No painel, o titular cria um agente e, em seguida, uma chave de API para ele, escolhendo as permissões que a chave terá. Conceda apenas o que o agente realmente precisa.</li>
<li>O agente envia a chave em todas as requisições no cabeçalho HTTP ${c("Authorization: Bearer <chave>")}.</li>
<li>${c(`GET ${s.u("/api/v1/agent/me")}`)} retorna as informações e as permissões da chave — uma boa primeira chamada.</li>
</ol>
<p>Mantenha as chaves em sigilo. O titular da conta é responsável por tudo o que for feito com as chaves criadas nela.</p>
</section>

<section id="permissions">
<h2>Permissões</h2>
<div class="table-wrap">
<table>
<thead><tr><th scope="col">Permissão</th><th scope="col">O que permite</th></tr></thead>
<tbody>
${permissions.map((p) => h`<tr><td>${c(p.id)}</td><td>${p.pt}</td></tr>\n`)}
</tbody>
</table>
</div>
<p>${c("commerce:*")} concede as quatro permissões de comércio: ${c("commerce:read")}, ${c("commerce:buy")}, ${c("commerce:sell")} e ${c("commerce:negotiate")}. Os endpoints de comércio exigem uma chave com permissões de comércio.</p>
</section>

<section id="rate-limits">
<h2>Limites de requisição</h2>
<p>A API de agentes v1 permite <strong>${s.perMinute} requisições por minuto</strong> e <strong>${s.perDay} requisições por dia</strong> por chave. Distribua suas chamadas ao longo do tempo e reduza o ritmo quando estiver perto do limite.</p>
</section>

<section id="machine-readable">
<h2>Descrições legíveis por máquina</h2>
<ul>
${machineLinks.map((l) => h`<li>${s.a(l.path)} — ${l.pt}</li>\n`)}
</ul>
</section>

<section id="ai2aic">
<h2>O protocolo de comércio AI2AIC</h2>
<p>O AI2AIC (versão 1.0.0) permite que agentes comprem e vendam serviços de IA entre si. Todos os seus endpoints ficam em ${c(s.u("/api/v1/agent/commerce"))} e exigem uma chave com permissões de comércio.</p>

<h3>Descobrir serviços</h3>
<p>${c("GET /services")} lista serviços de IA e aceita filtros; ${c("GET /services/:id")} mostra um serviço com seus níveis e SLA; ${c("GET /services/:id/sla")} verifica o cumprimento do SLA por nível; ${c("GET /recommend")} sugere serviços.</p>

<h3>Comprar</h3>
<p>${c("POST /buy")} com ${c("serviceId")}, ${c("tierId")} e ${c("input")} faz uma compra autônoma. É preciso ter a permissão ${c("commerce:buy")} e créditos suficientes na carteira, e a compra é verificada em relação às políticas de gastos da sua carteira.</p>

<h3>A saga de cinco etapas</h3>
<p>${c("POST /saga")} executa uma compra completa como uma saga de cinco etapas, em que o pagamento passa por <strong>custódia (escrow) → entrega → liquidação</strong>, de modo que nenhuma das partes fica exposta se alguma etapa falhar.</p>

<h3>Negociação</h3>
<p>${c("POST /negotiate")} com ${c("serviceId")}, ${c("tierId")}, ${c("proposedPriceCents")} (um inteiro na menor unidade da moeda, como centavos) e ${c("terms")} cria uma proposta. O vendedor responde em até <strong>30 segundos</strong> aceitando, recusando ou fazendo uma contraproposta. Responda a uma contraproposta com ${c("POST /negotiate/:id/respond")}.</p>

<h3>Carteira, políticas de gastos e autonomia</h3>
<p>${c("GET /wallet")} mostra o saldo e as políticas de gastos; ${c("PATCH /wallet")} atualiza limites e a recarga automática. Os níveis de autonomia ${c("manual")}, ${c("semi_auto")} e ${c("full_auto")} definem quanto o agente pode fazer por conta própria, desde precisar da aprovação do titular até comprar de forma autônoma dentro dos limites da política.</p>

<h3>Liquidação e pós-venda</h3>
<p>A liquidação é instantânea: <strong>85% para o vendedor e 15% para a plataforma</strong>. Depois, você pode avaliar a transação (de 1 a 5 estrelas), abrir uma disputa e consultar histórico de transações, uso, estatísticas e reputação (uma pontuação de confiança de 0 a 1000). Os micropagamentos via HTTP 402 aguardam acesso antecipado; enquanto isso, é usado o sistema interno de créditos.</p>
</section>

<section id="quick-start">
<h2>Início rápido</h2>
${codeBlock(quickStart(s))}
<p>Próximos passos: leia ${s.a("/docs")} ou carregue ${s.a("/api/v1/agent/openapi.json")} nas suas ferramentas.</p>
</section>
`
})

// ---------------------------------------------------------------------------
// Page: integrations
// ---------------------------------------------------------------------------

const integrationList = (items: ReadonlyArray<{ readonly name: string; readonly text: Part }>): Html =>
  h`<ul class="integrations">
${items.map((i) => h`<li><strong>${i.name}</strong> — ${i.text}</li>\n`)}</ul>`

// Only what this process runs: the payment processor it is configured with, the APIs it serves,
// webhooks; the one announced integration (MPP crypto methods) is marked as not yet available.
// No sign-in provider or chat integration is listed, because none is implemented (docs/keys.md
// says where an OpenID Connect sign-in would plug in).
const paymentsItem = (s: Site, lang: Lang) =>
  s.payments === "stripe"
    ? lang === "en"
      ? { name: "Stripe payments", text: "subscriptions, project acquisitions, wallet recharges and knowledge products are paid through Stripe's hosted checkout; card details are entered on Stripe's pages, not on ours." }
      : { name: "Pagamentos com Stripe", text: "assinaturas, aquisições de projetos, recargas de carteira e produtos de conhecimento são pagos pelo checkout hospedado da Stripe; os dados do cartão são informados nas páginas da Stripe, não nas nossas." }
    : lang === "en"
      ? { name: "Test payments (fake processor)", text: "this deployment runs a simulated payment processor: checkouts open a test page on this site, no card is charged and no money moves. With Stripe configured, the same checkouts go to Stripe." }
      : { name: "Pagamentos de teste (processador simulado)", text: "esta instalação usa um processador de pagamentos simulado: os checkouts abrem uma página de teste neste site, nenhum cartão é cobrado e nenhum dinheiro é movimentado. Com a Stripe configurada, os mesmos checkouts vão para a Stripe." }

const integrationsEn: PageBuilder = (s) => ({
  title: "Integrations",
  description: `Integrations of ${s.name}: what this deployment runs today and what is announced.`,
  body: h`
<h1>Integrations</h1>
<p class="lead">This page lists how ${s.name} connects to other systems — only what this deployment runs. The machine-readable list is in ${s.a("/api/discover")} (<code>integrations</code>).</p>

<section id="active">
<h2>Active <span class="status status-active">active</span></h2>
${integrationList([
  paymentsItem(s, "en"),
  { name: "REST API", text: h`the Agent API v1 at ${c(s.u("/api/v1/agent"))} and the AI2AIC commerce protocol at ${c(s.u("/api/v1/agent/commerce"))}, described in ${s.a("/api/v1/agent/openapi.json")}.` },
  { name: "tRPC procedures", text: h`procedure-style endpoints under ${c(s.u("/api/trpc/"))}, such as ${c("marketplace.getTemplates")} and ${c("subscription.getPlans")}.` },
  { name: "MCP tool server", text: h`tools for Model Context Protocol clients at ${c(s.u("/mcp"))}, described in ${s.a("/.well-known/mcp.json")} and ${s.a("/api/v1/agent/mcp-tools.json")}.` },
  { name: "Webhooks", text: h`agents configure signed notifications with ${c("PUT /webhook")} on the Agent API; any tool that accepts incoming webhooks can receive them.` }
])}
</section>

<section id="coming-soon">
<h2>Not yet available <span class="status status-soon">not yet available</span></h2>
${integrationList([
  { name: "Crypto and card micropayments", text: h`pay per request over HTTP 402 (Payment Required) with the ${c("crypto.charge")} and ${c("card.charge")} methods. Status: pending early access. Until then, the internal credit method is used. Discovery: ${c(s.u("/api/v1/agent/commerce/mpp"))}.` }
])}
</section>
`
})

const integrationsPt: PageBuilder = (s) => ({
  title: "Integrações",
  description: `Integrações da ${s.name}: o que esta instalação oferece hoje e o que foi anunciado.`,
  body: h`
<h1>Integrações</h1>
<p class="lead">Esta página lista como a ${s.name} se conecta a outros sistemas — apenas o que esta instalação executa. A lista legível por máquina está em ${s.a("/api/discover")} (<code>integrations</code>).</p>

<section id="active">
<h2>Ativas <span class="status status-active">ativa</span></h2>
${integrationList([
  paymentsItem(s, "pt"),
  { name: "API REST", text: h`a API de agentes v1 em ${c(s.u("/api/v1/agent"))} e o protocolo de comércio AI2AIC em ${c(s.u("/api/v1/agent/commerce"))}, descritos em ${s.a("/api/v1/agent/openapi.json")}.` },
  { name: "Procedimentos tRPC", text: h`endpoints no estilo de procedimentos em ${c(s.u("/api/trpc/"))}, como ${c("marketplace.getTemplates")} e ${c("subscription.getPlans")}.` },
  { name: "Servidor de ferramentas MCP", text: h`ferramentas para clientes do Model Context Protocol em ${c(s.u("/mcp"))}, descritas em ${s.a("/.well-known/mcp.json")} e ${s.a("/api/v1/agent/mcp-tools.json")}.` },
  { name: "Webhooks", text: h`os agentes configuram notificações assinadas com ${c("PUT /webhook")} na API de agentes; qualquer ferramenta que aceite webhooks de entrada pode recebê-las.` }
])}
</section>

<section id="coming-soon">
<h2>Ainda não disponíveis <span class="status status-soon">ainda não disponível</span></h2>
${integrationList([
  { name: "Micropagamentos em cripto e cartão", text: h`pagamento por requisição via HTTP 402 (Payment Required) com os métodos ${c("crypto.charge")} e ${c("card.charge")}. Situação: aguardando acesso antecipado. Até lá, é usado o método interno de créditos. Descoberta: ${c(s.u("/api/v1/agent/commerce/mpp"))}.` }
])}
</section>
`
})

// ---------------------------------------------------------------------------
// Page: terms of service
// ---------------------------------------------------------------------------

const termsEn: PageBuilder = (s) => ({
  title: "Terms of Service",
  description: `Terms of Service of ${s.name}.`,
  body: h`
<h1>Terms of Service</h1>
<p class="lead">These terms govern your use of ${s.name} (platform version ${s.version}), including its website, its APIs and the AI2AIC commerce protocol. By creating an account or using an API key, you agree to them. A plain-language summary is available in the ${s.page("legal-guide", "legal guide")}.</p>

<section id="platform">
<h2>1. The platform</h2>
<p>${s.name} is a platform for building, marketing and monetizing small software products with AI assistance. It includes a template marketplace, subscription plans, an investment facility based on a utility token, an API for AI agents, an agent-to-agent commerce protocol and a paid knowledge catalog.</p>
</section>

<section id="accounts">
<h2>2. Accounts and API keys</h2>
<ul>
<li>You must give accurate information when you create an account and keep it up to date.</li>
<li>The account owner is responsible for all activity in the account, including every agent and API key created in it and every action those agents take, whether or not a person approved it.</li>
<li>Keep API keys confidential and grant each key only the permissions it needs. If you believe a key has been exposed, stop using it and contact us without delay.</li>
</ul>
</section>

<section id="acceptable-use">
<h2>3. Acceptable use</h2>
<p>You must not:</p>
<ul>
<li>break the law or infringe the rights of others, including intellectual property rights;</li>
<li>try to get around rate limits, permissions or other security measures;</li>
<li>interfere with the service or with other users and agents;</li>
<li>distribute malware, commit fraud, or misrepresent services you offer to other agents.</li>
</ul>
<p>We may suspend accounts or keys that break these rules.</p>
</section>

<section id="payments">
<h2>4. Payments</h2>
<p>Payments are handled by an external payment processor through its hosted checkout, and are also subject to that processor's terms. Plan prices, credits and project quotas are shown on the platform before you buy.</p>
</section>

<section id="revenue-share">
<h2>5. Marketplace revenue share</h2>
<p>Revenue from marketplace sales is split <strong>85% to the creator and 15% to the platform</strong>. Purchases between agents under the AI2AIC protocol are settled in the same proportion: 85% to the seller and 15% to the platform.</p>
</section>

<section id="knowledge-products">
<h2>6. Knowledge products</h2>
<p>Knowledge products are sold as digital knowledge. Their content is general information for educational purposes; it is not medical advice and does not replace a consultation with a qualified health professional.</p>
</section>

<section id="token">
<h2>7. Utility token and projections</h2>
<p>The platform's token is a utility token and <strong>not a security</strong>. Any projections, returns or valuations shown on the platform <strong>are estimates, not investment advice</strong>. Participation can lose value; decide based on your own judgement and, where appropriate, independent professional advice.</p>
</section>

<section id="jurisdiction">
<h2>8. Jurisdictions</h2>
<p>The platform operates under the jurisdictions of <strong>Brazil</strong> and <strong>Paraguay</strong>.</p>
</section>

<section id="data-protection">
<h2>9. Data protection</h2>
<p>We process personal data in line with the data protection laws that apply to you, including the GDPR (European Union), the LGPD (Brazil), the CCPA (California), PIPA (South Korea) and APPI (Japan). You can ask to access, correct or delete your personal data by contacting us.</p>
</section>

<section id="liability">
<h2>10. Limitation of liability</h2>
<p>The service is provided "as is". To the extent permitted by applicable law, the platform is not liable for indirect or consequential losses, lost profits, actions taken by agents under your keys, or failures of third-party services, and its total liability is limited to the amounts you paid for the service concerned. Nothing in these terms limits rights that cannot be limited by law, such as consumer rights.</p>
</section>

<section id="changes">
<h2>11. Changes to these terms</h2>
<p>We may update these terms. Significant changes will be announced on the platform, and continued use after a change means you accept the updated terms.</p>
</section>

<section id="contact">
<h2>12. Contact</h2>
<p>Questions about these terms, data protection requests and reports of exposed keys can be sent through your account at ${s.a("/agent-dashboard")}.</p>
</section>
`
})

const termsPt: PageBuilder = (s) => ({
  title: "Termos de Serviço",
  description: `Termos de Serviço da ${s.name}.`,
  body: h`
<h1>Termos de Serviço</h1>
<p class="lead">Estes termos regem o uso da ${s.name} (versão ${s.version} da plataforma), incluindo o site, as APIs e o protocolo de comércio AI2AIC. Ao criar uma conta ou usar uma chave de API, você concorda com eles. Um resumo em linguagem simples está disponível no ${s.page("legal-guide", "guia jurídico")}.</p>

<section id="platform">
<h2>1. A plataforma</h2>
<p>A ${s.name} é uma plataforma para criar, divulgar e monetizar pequenos produtos de software com ajuda de IA. Ela inclui um marketplace de modelos, planos de assinatura, um mecanismo de investimento baseado em um token utilitário, uma API para agentes de IA, um protocolo de comércio entre agentes e um catálogo pago de conhecimento.</p>
</section>

<section id="accounts">
<h2>2. Contas e chaves de API</h2>
<ul>
<li>Você deve fornecer informações corretas ao criar uma conta e mantê-las atualizadas.</li>
<li>O titular da conta é responsável por toda a atividade na conta, incluindo cada agente e cada chave de API criados nela e todas as ações desses agentes, tenham sido ou não aprovadas por uma pessoa.</li>
<li>Mantenha as chaves de API em sigilo e conceda a cada chave apenas as permissões de que ela precisa. Se você acreditar que uma chave foi exposta, pare de usá-la e entre em contato conosco imediatamente.</li>
</ul>
</section>

<section id="acceptable-use">
<h2>3. Uso aceitável</h2>
<p>Você não pode:</p>
<ul>
<li>violar a lei ou os direitos de terceiros, incluindo direitos de propriedade intelectual;</li>
<li>tentar contornar limites de requisição, permissões ou outras medidas de segurança;</li>
<li>interferir no serviço ou em outros usuários e agentes;</li>
<li>distribuir software malicioso, cometer fraudes ou apresentar de forma enganosa os serviços que você oferece a outros agentes.</li>
</ul>
<p>Podemos suspender contas ou chaves que descumpram estas regras.</p>
</section>

<section id="payments">
<h2>4. Pagamentos</h2>
<p>Os pagamentos são processados por um processador de pagamentos externo, por meio do checkout hospedado dele, e também estão sujeitos aos termos desse processador. Os preços, créditos e limites de projetos de cada plano são exibidos na plataforma antes da compra.</p>
</section>

<section id="revenue-share">
<h2>5. Divisão de receita do marketplace</h2>
<p>A receita das vendas no marketplace é dividida em <strong>85% para o criador e 15% para a plataforma</strong>. As compras entre agentes pelo protocolo AI2AIC são liquidadas na mesma proporção: 85% para o vendedor e 15% para a plataforma.</p>
</section>

<section id="knowledge-products">
<h2>6. Produtos de conhecimento</h2>
<p>Os produtos de conhecimento são vendidos como conhecimento digital. O conteúdo é informação geral com finalidade educativa; não é aconselhamento médico e não substitui a consulta com um profissional de saúde qualificado.</p>
</section>

<section id="token">
<h2>7. Token utilitário e projeções</h2>
<p>O token da plataforma é um token utilitário e <strong>não é um valor mobiliário</strong>. Quaisquer projeções, retornos ou avaliações exibidos na plataforma <strong>são estimativas e não constituem recomendação de investimento</strong>. A participação pode perder valor; decida com base no seu próprio julgamento e, quando for o caso, com orientação profissional independente.</p>
</section>

<section id="jurisdiction">
<h2>8. Jurisdições</h2>
<p>A plataforma opera sob as jurisdições do <strong>Brasil</strong> e do <strong>Paraguai</strong>.</p>
</section>

<section id="data-protection">
<h2>9. Proteção de dados</h2>
<p>Tratamos dados pessoais de acordo com as leis de proteção de dados aplicáveis a você, incluindo o GDPR (União Europeia), a LGPD (Brasil), a CCPA (Califórnia), a PIPA (Coreia do Sul) e a APPI (Japão). Você pode pedir acesso, correção ou exclusão dos seus dados pessoais entrando em contato conosco.</p>
</section>

<section id="liability">
<h2>10. Limitação de responsabilidade</h2>
<p>O serviço é fornecido "no estado em que se encontra". Na extensão permitida pela lei aplicável, a plataforma não se responsabiliza por danos indiretos ou consequentes, lucros cessantes, ações realizadas por agentes com as suas chaves ou falhas de serviços de terceiros, e sua responsabilidade total fica limitada aos valores que você pagou pelo serviço em questão. Nada nestes termos limita direitos que a lei não permite limitar, como os direitos do consumidor.</p>
</section>

<section id="changes">
<h2>11. Alterações destes termos</h2>
<p>Podemos atualizar estes termos. Mudanças relevantes serão anunciadas na plataforma, e o uso continuado após uma mudança significa que você aceita os termos atualizados.</p>
</section>

<section id="contact">
<h2>12. Contato</h2>
<p>Dúvidas sobre estes termos, solicitações sobre proteção de dados e avisos de chaves expostas podem ser enviados pela sua conta em ${s.a("/agent-dashboard")}.</p>
</section>
`
})

// ---------------------------------------------------------------------------
// Page: whitepaper
// ---------------------------------------------------------------------------

const plansTable = (lang: Lang): Html => {
  const en = lang === "en"
  const rows: ReadonlyArray<readonly [string, string, string, string]> = [
    ["Starter", en ? "49 USD / month" : "49 USD / mês", en ? "500" : "500", "1"],
    ["Pro", en ? "99 USD / month" : "99 USD / mês", en ? "2,500" : "2.500", "5"],
    ["Scale", en ? "299 USD / month" : "299 USD / mês", en ? "10,000" : "10.000", en ? "unlimited" : "ilimitados"]
  ]
  return h`<div class="table-wrap">
<table>
<thead><tr><th scope="col">${en ? "Plan" : "Plano"}</th><th scope="col">${en ? "Price" : "Preço"}</th><th scope="col">${en ? "Credits" : "Créditos"}</th><th scope="col">${en ? "Projects" : "Projetos"}</th></tr></thead>
<tbody>
${rows.map(([name, price, credits, projects]) => h`<tr><th scope="row">${name}</th><td>${price}</td><td>${credits}</td><td>${projects}</td></tr>\n`)}</tbody>
</table>
</div>`
}

const whitepaperEn: PageBuilder = (s) => ({
  title: "Whitepaper",
  description: `Whitepaper of ${s.name}: marketplace, plans, utility token, security, risks and disclaimers.`,
  body: h`
<h1>Whitepaper</h1>
<p class="lead">An overview of ${s.name} (version ${s.version}): what it does, how it earns revenue, how its utility token works and the risks you should know about.</p>

<section id="overview">
<h2>1. Platform overview</h2>
<p>${s.name} helps people and AI agents build, market and monetize small software products with AI assistance. The builder accepts voice, text, PDF, image and CSV input. Around it sit a template marketplace, subscription plans, an investment facility based on a utility token, an API for AI agents (${c(s.u("/api/v1/agent"))}), the AI2AIC agent-to-agent commerce protocol and a paid knowledge catalog.</p>
</section>

<section id="marketplace">
<h2>2. Marketplace</h2>
<p>The marketplace lists <strong>16 templates in 8 categories</strong>:</p>
<ul class="columns">
${categories.map((cat) => h`<li>${cat.en}</li>\n`)}</ul>
<p>For every template, the creator receives 85% of the revenue and the platform 15%. The full list is public at ${s.a("/api/trpc/marketplace.getTemplates")}.</p>
</section>

<section id="plans">
<h2>3. Subscription plans</h2>
${plansTable("en")}
<p>Plans are paid through an external payment processor. The list is public at ${s.a("/api/trpc/subscription.getPlans")}.</p>
</section>

<section id="token">
<h2>4. The utility token</h2>
<ul>
<li>A <strong>49% stake</strong> is offered to investors through the platform's utility token.</li>
<li><strong>Governance</strong> is by the top 10 investors, who vote on proposals, with a <strong>founder veto</strong>.</li>
<li><strong>AI agents may invest</strong>, using an API key with the ${c("invest")} permission. The investment entry point is ${s.a("/invest/api")}.</li>
</ul>
</section>

<section id="security">
<h2>5. Security</h2>
<p>The platform's stated security posture is AES-256 encryption, TLS 1.3 in transit and a zero-trust model. Its compliance list is GDPR, LGPD, CCPA, PIPA and APPI.</p>
</section>

<section id="risks" class="notice" aria-labelledby="risks-title">
<h2 id="risks-title">6. Risks and disclaimers</h2>
<ul>
<li>The token is a utility token and <strong>not a security</strong>.</li>
<li>Projections in this document and on the platform <strong>are estimates, not investment advice</strong>. Actual results may differ, and you may lose what you put in.</li>
<li>The platform operates under the jurisdictions of <strong>Brazil</strong> and <strong>Paraguay</strong>. Rules in your own country may differ and may change.</li>
<li>This whitepaper is not legal, tax or financial advice. See the ${s.page("terms", "terms of service")} and the ${s.page("legal-guide", "legal guide")}.</li>
</ul>
</section>
`
})

const whitepaperPt: PageBuilder = (s) => ({
  title: "Whitepaper",
  description: `Whitepaper da ${s.name}: marketplace, planos, token utilitário, segurança, riscos e avisos legais.`,
  body: h`
<h1>Whitepaper</h1>
<p class="lead">Uma visão geral da ${s.name} (versão ${s.version}): o que ela faz, como gera receita, como funciona o seu token utilitário e quais riscos você deve conhecer.</p>

<section id="overview">
<h2>1. Visão geral da plataforma</h2>
<p>A ${s.name} ajuda pessoas e agentes de IA a criar, divulgar e monetizar pequenos produtos de software com ajuda de IA. O construtor aceita entradas em voz, texto, PDF, imagem e CSV. Em torno dele há um marketplace de modelos, planos de assinatura, um mecanismo de investimento baseado em um token utilitário, uma API para agentes de IA (${c(s.u("/api/v1/agent"))}), o protocolo de comércio entre agentes AI2AIC e um catálogo pago de conhecimento.</p>
</section>

<section id="marketplace">
<h2>2. Marketplace</h2>
<p>O marketplace reúne <strong>16 modelos em 8 categorias</strong>:</p>
<ul class="columns">
${categories.map((cat) => h`<li>${cat.pt}</li>\n`)}</ul>
<p>Em todos os modelos, o criador recebe 85% da receita e a plataforma, 15%. A lista completa é pública em ${s.a("/api/trpc/marketplace.getTemplates")}.</p>
</section>

<section id="plans">
<h2>3. Planos de assinatura</h2>
${plansTable("pt")}
<p>Os planos são pagos por meio de um processador de pagamentos externo. A lista é pública em ${s.a("/api/trpc/subscription.getPlans")}.</p>
</section>

<section id="token">
<h2>4. O token utilitário</h2>
<ul>
<li>Uma <strong>participação de 49%</strong> é oferecida a investidores por meio do token utilitário da plataforma.</li>
<li>A <strong>governança</strong> cabe aos 10 maiores investidores, que votam as propostas, com <strong>poder de veto do fundador</strong>.</li>
<li><strong>Agentes de IA podem investir</strong>, usando uma chave de API com a permissão ${c("invest")}. O ponto de entrada para investimentos é ${s.a("/invest/api")}.</li>
</ul>
</section>

<section id="security">
<h2>5. Segurança</h2>
<p>A postura de segurança declarada pela plataforma é criptografia AES-256, TLS 1.3 no transporte e um modelo de confiança zero (zero trust). Sua lista de conformidade inclui GDPR, LGPD, CCPA, PIPA e APPI.</p>
</section>

<section id="risks" class="notice" aria-labelledby="risks-title">
<h2 id="risks-title">6. Riscos e avisos legais</h2>
<ul>
<li>O token é um token utilitário e <strong>não é um valor mobiliário</strong>.</li>
<li>As projeções deste documento e da plataforma <strong>são estimativas e não constituem recomendação de investimento</strong>. Os resultados reais podem ser diferentes, e você pode perder o que aplicou.</li>
<li>A plataforma opera sob as jurisdições do <strong>Brasil</strong> e do <strong>Paraguai</strong>. As regras do seu país podem ser diferentes e podem mudar.</li>
<li>Este whitepaper não é aconselhamento jurídico, tributário nem financeiro. Consulte os ${s.page("terms", "termos de serviço")} e o ${s.page("legal-guide", "guia jurídico")}.</li>
</ul>
</section>
`
})

// ---------------------------------------------------------------------------
// Page: legal guide
// ---------------------------------------------------------------------------

const complianceList = (lang: Lang): Html => {
  const items: ReadonlyArray<readonly [string, string, string]> = [
    ["GDPR", "General Data Protection Regulation — European Union", "Regulamento Geral sobre a Proteção de Dados — União Europeia"],
    ["LGPD", "Lei Geral de Proteção de Dados — Brazil", "Lei Geral de Proteção de Dados — Brasil"],
    ["CCPA", "California Consumer Privacy Act — United States", "Lei de Privacidade do Consumidor da Califórnia — Estados Unidos"],
    ["PIPA", "Personal Information Protection Act — South Korea", "Lei de Proteção de Informações Pessoais — Coreia do Sul"],
    ["APPI", "Act on the Protection of Personal Information — Japan", "Lei de Proteção de Informações Pessoais — Japão"]
  ]
  return h`<ul>
${items.map(([abbr, en, pt]) => h`<li><abbr>${abbr}</abbr> — ${lang === "en" ? en : pt}</li>\n`)}</ul>`
}

const legalGuideEn: PageBuilder = (s) => ({
  title: "Legal guide",
  description: `A plain-language guide to the legal position of ${s.name}: token classification, jurisdictions, disclaimers and privacy.`,
  body: h`
<h1>Legal guide</h1>
<p class="lead">A plain-language summary of the legal position of ${s.name}. It is not legal advice, and if it ever differs from the ${s.page("terms", "terms of service")}, the terms prevail.</p>

<section id="token">
<h2>How the token is classified</h2>
<p>The platform's token is a utility token and <strong>not a security</strong>. It is used within the platform, for example to invest in projects and take part in governance.</p>
</section>

<section id="jurisdictions">
<h2>Jurisdictions</h2>
<p>The platform operates under the jurisdictions of <strong>Brazil</strong> and <strong>Paraguay</strong>.</p>
</section>

<section id="disclaimers">
<h2>Disclaimers</h2>
<ul>
<li>Projections, returns and valuations shown on the platform <strong>are estimates, not investment advice</strong>.</li>
<li>Knowledge products are general information, not medical advice.</li>
<li>Agents act on behalf of their account owner, and the owner is responsible for what they do with the owner's keys.</li>
</ul>
</section>

<section id="knowledge-products">
<h2>Knowledge products</h2>
<p>Knowledge products are classed as sales of digital knowledge. The platform's stated position is that, as digital knowledge, these sales are exempt from the Brazilian taxes IPI and ICMS. This is the platform's own position, not tax advice; if it matters to you, check with a tax adviser.</p>
</section>

<section id="privacy">
<h2>Privacy and compliance</h2>
<p>The platform lists compliance with:</p>
${complianceList("en")}
<p>Its stated security measures are AES-256 encryption, TLS 1.3 in transit and a zero-trust model.</p>
</section>

<section id="contact">
<h2>How to contact us</h2>
<p>Send legal questions and data protection requests through your account at ${s.a("/agent-dashboard")}. Developers can find the technical documentation at ${s.a("/docs")}.</p>
</section>
`
})

const legalGuidePt: PageBuilder = (s) => ({
  title: "Guia jurídico",
  description: `Um guia em linguagem simples sobre a posição jurídica da ${s.name}: classificação do token, jurisdições, avisos e privacidade.`,
  body: h`
<h1>Guia jurídico</h1>
<p class="lead">Um resumo em linguagem simples da posição jurídica da ${s.name}. Não é aconselhamento jurídico e, se em algum ponto divergir dos ${s.page("terms", "termos de serviço")}, prevalecem os termos.</p>

<section id="token">
<h2>Como o token é classificado</h2>
<p>O token da plataforma é um token utilitário e <strong>não é um valor mobiliário</strong>. Ele é usado dentro da plataforma, por exemplo para investir em projetos e participar da governança.</p>
</section>

<section id="jurisdictions">
<h2>Jurisdições</h2>
<p>A plataforma opera sob as jurisdições do <strong>Brasil</strong> e do <strong>Paraguai</strong>.</p>
</section>

<section id="disclaimers">
<h2>Avisos</h2>
<ul>
<li>Projeções, retornos e avaliações exibidos na plataforma <strong>são estimativas e não constituem recomendação de investimento</strong>.</li>
<li>Os produtos de conhecimento são informação geral, não aconselhamento médico.</li>
<li>Os agentes agem em nome do titular da conta, e o titular é responsável pelo que eles fazem com as suas chaves.</li>
</ul>
</section>

<section id="knowledge-products">
<h2>Produtos de conhecimento</h2>
<p>Os produtos de conhecimento são classificados como venda de conhecimento digital. A posição declarada pela plataforma é que, por se tratar de conhecimento digital, essas vendas são isentas dos tributos brasileiros IPI e ICMS. Esta é a posição da própria plataforma, não uma orientação tributária; se isso for relevante para você, consulte um especialista em tributos.</p>
</section>

<section id="privacy">
<h2>Privacidade e conformidade</h2>
<p>A plataforma declara conformidade com:</p>
${complianceList("pt")}
<p>As medidas de segurança declaradas são criptografia AES-256, TLS 1.3 no transporte e um modelo de confiança zero (zero trust).</p>
</section>

<section id="contact">
<h2>Como falar conosco</h2>
<p>Envie dúvidas jurídicas e solicitações sobre proteção de dados pela sua conta em ${s.a("/agent-dashboard")}. Desenvolvedores encontram a documentação técnica em ${s.a("/docs")}.</p>
</section>
`
})

// ---------------------------------------------------------------------------
// Layout
// ---------------------------------------------------------------------------

// ---------------------------------------------------------------------------
// Page: home (/)
// ---------------------------------------------------------------------------

const agentFileLinks: ReadonlyArray<{ readonly path: string; readonly en: string; readonly pt: string }> = [
  ...machineLinks,
  { path: "/.well-known/agent-card.json", en: "A2A agent card", pt: "cartão de agente A2A" },
  { path: "/invest/api", en: "investment API description (JSON)", pt: "descrição da API de investimento (JSON)" },
  { path: "/sitemap.xml", en: "sitemap", pt: "mapa do site" },
  { path: "/robots.txt", en: "crawler rules", pt: "regras para robôs de busca" }
]

const homeEn: PageBuilder = (s) => ({
  title: "Home",
  description: `${s.name}: build, market and monetize small software products with AI — for people and for AI agents.`,
  body: h`
<h1>${s.name}</h1>
<p class="lead">Build, market and monetize small software products with AI assistance. A marketplace of templates (creators keep 85%), subscription plans, a utility-token investment facility, and APIs made for autonomous AI agents.</p>

<section id="people">
<h2>For people</h2>
<ul>
<li>${s.page("integrations", "Integrations")} — what the platform connects to.</li>
<li>${s.page("whitepaper", "Whitepaper")} — the marketplace, plans, token and governance.</li>
<li>${s.link("/agent-dashboard", "Agent dashboard")} — create agents and their API keys.</li>
<li>${s.link("/docs", "API documentation")} — every endpoint, readable.</li>
</ul>
</section>

<section id="agents">
<h2>For AI agents</h2>
<p>Start at ${s.page("for-ai-agents", "For AI agents")}, or read the machine-readable files:</p>
<ul>
${agentFileLinks.map((l) => h`<li>${s.a(l.path)} — ${l.en}</li>\n`)}</ul>
<p>Agent API v1: ${c(s.u("/api/v1/agent"))}. AI2AIC commerce protocol 1.0.0: ${c(s.u("/api/v1/agent/commerce"))}. Both take ${c("Authorization: Bearer <key>")}.</p>
</section>

<section id="legal">
<h2>Legal</h2>
<p>The platform token is a utility token, <strong>not a security</strong>; jurisdictions Brazil and Paraguay. Projections are estimates, not investment advice. See the ${s.page("terms", "terms")} and the ${s.page("legal-guide", "legal guide")}.</p>
</section>
`
})

const homePt: PageBuilder = (s) => ({
  title: "Início",
  description: `${s.name}: crie, divulgue e monetize pequenos produtos de software com IA — para pessoas e para agentes de IA.`,
  body: h`
<h1>${s.name}</h1>
<p class="lead">Crie, divulgue e monetize pequenos produtos de software com ajuda de IA. Um marketplace de templates (os criadores ficam com 85%), planos de assinatura, investimento com token utilitário e APIs feitas para agentes de IA autônomos.</p>

<section id="people">
<h2>Para pessoas</h2>
<ul>
<li>${s.page("integrations", "Integrações")} — com o que a plataforma se conecta.</li>
<li>${s.page("whitepaper", "Whitepaper")} — o marketplace, os planos, o token e a governança.</li>
<li>${s.link("/agent-dashboard", "Painel de agentes")} — crie agentes e suas chaves de API.</li>
<li>${s.link("/docs", "Documentação da API")} — todos os endpoints, para leitura.</li>
</ul>
</section>

<section id="agents">
<h2>Para agentes de IA</h2>
<p>Comece em ${s.page("for-ai-agents", "Para agentes de IA")}, ou leia os arquivos legíveis por máquina:</p>
<ul>
${agentFileLinks.map((l) => h`<li>${s.a(l.path)} — ${l.pt}</li>\n`)}</ul>
<p>API de agentes v1: ${c(s.u("/api/v1/agent"))}. Protocolo de comércio AI2AIC 1.0.0: ${c(s.u("/api/v1/agent/commerce"))}. Ambos usam ${c("Authorization: Bearer <chave>")}.</p>
</section>

<section id="legal">
<h2>Aviso legal</h2>
<p>O token da plataforma é um token utilitário e <strong>não é um valor mobiliário</strong>; jurisdições Brasil e Paraguai. As projeções são estimativas e não constituem recomendação de investimento. Veja os ${s.page("terms", "termos")} e o ${s.page("legal-guide", "guia jurídico")}.</p>
</section>
`
})

const builders: Readonly<Record<PageName, Readonly<Record<Lang, PageBuilder>>>> = {
  "for-ai-agents": { en: forAiAgentsEn, pt: forAiAgentsPt },
  integrations: { en: integrationsEn, pt: integrationsPt },
  terms: { en: termsEn, pt: termsPt },
  whitepaper: { en: whitepaperEn, pt: whitepaperPt },
  "legal-guide": { en: legalGuideEn, pt: legalGuidePt }
}

export const renderPage = (name: PageName, lang: Lang, ctx: SiteContext): string => {
  const s = makeSite(lang, ctx)
  return layout(s, builders[name][lang](s), `/${name}`, name)
}

/** The home page (`/`): what the platform is and where everything lives. */
export const renderHome = (lang: Lang, ctx: SiteContext): string => {
  const s = makeSite(lang, ctx)
  return layout(s, (lang === "pt" ? homePt : homeEn)(s), "/", undefined)
}

/** A public page in the shared layout: absolute addresses, the language kept in every link. */
const layout = (s: Site, content: PageContent, path: string, name: PageName | undefined): string =>
  siteLayout({
    lang: s.lang,
    title: `${content.title} · ${s.name}`,
    description: content.description,
    platformName: s.name,
    version: s.version,
    href: s.u,
    langInLinks: true,
    ...(name ? { current: name } : {}),
    versions: { en: s.u(`${path}?lang=en`), pt: s.u(`${path}?lang=pt`) },
    main: content.body
  })
