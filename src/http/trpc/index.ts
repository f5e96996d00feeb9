// The full procedure table: public procedures plus the authenticated ones. Add one spread per router.
import { publicProcedures } from "./procedures.js"
import { investProcedures } from "./invest.js"
import { paymentProcedures } from "./payments.js"

export const procedures = {
  ...publicProcedures,
  ...investProcedures,
  ...paymentProcedures
}
