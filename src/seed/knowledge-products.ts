// Knowledge catalog products (spec §2.5): six paid digital-knowledge products, content in pt-BR.
import type { KnowledgeProductSeed } from "./types.js"

export const knowledgeProducts: ReadonlyArray<KnowledgeProductSeed> = [
  {
    id: 1,
    name: "Resposta Rápida de IA sobre Dinâmica do Casal",
    slug: "resposta-rapida-ia-dinamica-casal",
    description:
      "Uma resposta objetiva, gerada por IA, para uma dúvida pontual sobre a convivência e a comunicação do casal ao longo do ciclo.",
    priceInCents: 25,
    currency: "usd",
    category: "ai_consultation",
    isActive: true
  },
  {
    id: 2,
    name: "Análise Detalhada de Compatibilidade",
    slug: "analise-detalhada-compatibilidade",
    description:
      "Uma análise aprofundada dos padrões de comunicação, rotina e necessidades do casal, com sugestões práticas para cada fase do ciclo.",
    priceInCents: 99,
    currency: "usd",
    category: "ai_consultation",
    isActive: true
  },
  {
    id: 3,
    name: "Guia Completo dos 4 Ciclos",
    slug: "guia-completo-4-ciclos",
    description:
      "Um guia digital completo sobre as quatro fases do ciclo menstrual: o que acontece no corpo, como cada fase pode ser sentida e como o parceiro pode apoiar.",
    priceInCents: 1997,
    currency: "usd",
    category: "ai_consultation",
    isActive: true
  },
  {
    id: 4,
    name: "Workshop Online para Casais (4 horas)",
    slug: "workshop-online-casais-4-horas",
    description:
      "Um workshop online ao vivo de quatro horas para casais, com exercícios de escuta, comunicação e planejamento da rotina a dois ao longo do ciclo.",
    priceInCents: 14997,
    currency: "usd",
    category: "ai_consultation",
    isActive: true
  },
  {
    id: 5,
    name: "Mentoria em 4 Sessões",
    slug: "mentoria-4-sessoes",
    description:
      "Quatro sessões individuais de mentoria para o casal, com acompanhamento entre os encontros e um plano de ação personalizado.",
    priceInCents: 49997,
    currency: "usd",
    category: "ai_consultation",
    isActive: true
  },
  {
    id: 6,
    name: "Videochamada Exclusiva com os Fundadores",
    slug: "videochamada-exclusiva-fundadores",
    description:
      "Uma videochamada exclusiva e reservada com os fundadores, para uma conversa aprofundada e personalizada sobre a jornada do casal.",
    priceInCents: 1000000,
    currency: "usd",
    category: "ai_consultation",
    isActive: true
  }
]
