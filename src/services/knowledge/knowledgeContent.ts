// What each paid knowledge product delivers, arranged from the knowledge base (pt-BR). Pure: the
// Knowledge service hands it the product and the base; Payments decides who may read it.
import type { KnowledgeBase, KnowledgeProduct } from "../../schema/knowledge/knowledge.js"

export interface Deliverable {
  readonly format: "guide" | "consultation" | "live_session"
  readonly sections: ReadonlyArray<{ readonly heading: string; readonly body: string }>
  readonly disclaimer: string
}

const list = (u: unknown): ReadonlyArray<string> =>
  Array.isArray(u) ? u.filter((x): x is string => typeof x === "string") : []
const text = (u: unknown): string => (typeof u === "string" ? u : "")
const bullets = (items: ReadonlyArray<string>) => items.map((i) => `• ${i}`).join("\n")

const phases = (kb: KnowledgeBase) => Object.values(kb.phases)

/** The full guide: every phase's physiology, sensations, partner guidance and pain scale. */
const guide = (kb: KnowledgeBase) =>
  phases(kb).map((p) => ({
    heading: p.name,
    body: [
      p.physiology,
      `Sensações físicas:\n${bullets(list(p.femaleSensations.physical))}`,
      `Sensações emocionais:\n${bullets(list(p.femaleSensations.emotional))}`,
      `Energia: ${text(p.femaleSensations.energy)}`,
      `Como o parceiro pode apoiar:\n${bullets(list(p.partnerGuidance.do))}`,
      `O que evitar:\n${bullets(list(p.partnerGuidance.avoid))}`,
      `Conexão: ${text(p.partnerGuidance.connection)}`,
      `Escala de dor: ${text(p.painScale.description)}`
    ]
      .filter((part) => !part.endsWith(": ") && !part.endsWith(":\n"))
      .join("\n\n")
  }))

/** A written consultation: the partner guidance of every phase (the short one: connection only). */
const consultation = (kb: KnowledgeBase, detailed: boolean) => [
  { heading: kb.story.title, body: kb.story.quote },
  ...phases(kb).map((p) => ({
    heading: p.name,
    body: detailed
      ? [
          `Como apoiar:\n${bullets(list(p.partnerGuidance.do))}`,
          `O que evitar:\n${bullets(list(p.partnerGuidance.avoid))}`,
          `Conexão: ${text(p.partnerGuidance.connection)}`
        ].join("\n\n")
      : text(p.partnerGuidance.connection)
  }))
]

/**
 * Products 1–3 are read on the spot. 4–6 are live sessions held by people, outside this service: the
 * buyer gets the access id to quote when booking and the guide to prepare with — said plainly, not
 * pretended to be the session itself.
 */
export const deliverable = (product: KnowledgeProduct, kb: KnowledgeBase): Deliverable => {
  const disclaimer = kb.disclaimer
  switch (product.id) {
    case 1:
      return { format: "consultation", sections: consultation(kb, false), disclaimer }
    case 2:
      return { format: "consultation", sections: consultation(kb, true), disclaimer }
    case 3:
      return { format: "guide", sections: guide(kb), disclaimer }
    default:
      return {
        format: "live_session",
        sections: [
          {
            heading: "Sua sessão ao vivo",
            body: `${product.description}\n\nA sessão é agendada com a equipe; informe o código de acesso desta compra ao agendar. Este serviço não marca horários: ele registra a compra e entrega o material de preparação abaixo.`
          },
          ...guide(kb)
        ],
        disclaimer
      }
  }
}
