// Preloaded (`node --import ./bench/loopback.mjs`) into benchmark and test servers: every listening
// TCP socket binds to 127.0.0.1, whatever address the server asked for, so runs never listen on
// other interfaces. The app has no HOST setting (it binds all interfaces).
import net from "node:net"

const listen = net.Server.prototype.listen
net.Server.prototype.listen = function (...args) {
  const [first, ...rest] = args
  if (typeof first === "object" && first !== null && !("fd" in first) && !("path" in first) && !("_handle" in first)) {
    return listen.call(this, { ...first, host: "127.0.0.1" }, ...rest)
  }
  if (typeof first === "number" || (typeof first === "string" && /^\d+$/.test(first))) {
    const callback = rest.find((a) => typeof a === "function")
    return listen.call(this, { port: Number(first), host: "127.0.0.1" }, ...(callback ? [callback] : []))
  }
  return listen.apply(this, args)
}
