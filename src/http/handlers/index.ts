// Every HttpApi group's handlers, merged. Add one line per group.
import { Layer } from "effect"
import { AgentAuthLive, DashboardAuthLive } from "../middleware/authLive.js"
import { AgentLive } from "./agent.js"
import { DashboardLive, DashboardPublicLive } from "./dashboard.js"
import { SystemLive } from "./system.js"

/** Security middleware implementations, provided to the groups that use them. */
const SecurityLive = Layer.mergeAll(AgentAuthLive, DashboardAuthLive)

export const HandlersLive = Layer.mergeAll(
  SystemLive,
  AgentLive,
  DashboardPublicLive,
  DashboardLive
).pipe(Layer.provide(SecurityLive))
