// The devnet's chain as viem describes it (its id, its RPC address, ether for gas): shared by the
// devnet's setup (devnet/start.ts) and the facilitator process (devnet/facilitator.ts).
import { defineChain } from "viem"

export const devnetChain = (chainId: number, rpcUrl: string) =>
  defineChain({
    id: chainId,
    name: "devnet",
    nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 },
    rpcUrls: { default: { http: [rpcUrl] } }
  })
