// Every HttpApi group's handlers, merged. Add one line per group.
import { Layer } from "effect"
import { SystemLive } from "./system.js"

export const HandlersLive = Layer.mergeAll(SystemLive)
