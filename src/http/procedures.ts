// The full procedure table of the tRPC-wire surface: the public procedures plus each domain's
// (http/<domain>/procedures.ts). Add one spread per domain.
import { publicProcedures } from "./trpc/procedures.js"
import { investProcedures } from "./invest/procedures.js"
import { paymentProcedures } from "./payments/procedures.js"
import { orderProcedures } from "./orders/procedures.js"
import { negotiationProcedures } from "./negotiation/procedures.js"

export const procedures = {
  ...publicProcedures,
  ...investProcedures,
  ...paymentProcedures,
  ...orderProcedures,
  ...negotiationProcedures
}
