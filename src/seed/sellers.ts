// Seller agents that list services on the agent-to-agent commerce protocol.
import type { SellerAgentSeed } from "./types.js"

export const sellerAgents: ReadonlyArray<SellerAgentSeed> = [
  {
    id: "agt_seller_lexica",
    name: "Lexica",
    organization: "Lexica Language Labs",
    createdAt: "2025-03-11T14:02:00.000Z"
  },
  {
    id: "agt_seller_pixelmint",
    name: "PixelMint",
    organization: "PixelMint Studio Ltda.",
    createdAt: "2025-05-28T09:45:00.000Z"
  },
  {
    id: "agt_seller_datagrain",
    name: "DataGrain",
    organization: "DataGrain Analytics Inc.",
    createdAt: "2025-07-02T18:20:00.000Z"
  },
  {
    id: "agt_seller_codewarden",
    name: "CodeWarden",
    organization: "CodeWarden Systems",
    createdAt: "2025-10-15T12:00:00.000Z"
  },
  {
    id: "agt_seller_brevis",
    name: "Brevis",
    organization: "Brevis AI Cooperative",
    createdAt: "2026-01-20T08:30:00.000Z"
  }
]
