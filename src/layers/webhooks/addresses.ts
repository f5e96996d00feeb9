// Which IP addresses an outgoing webhook may connect to: a pure classifier over IPv4 and IPv6
// (IPv4-mapped, NAT64 and 6to4 forms are judged by the IPv4 address they embed).
import { isIPv4, isIPv6 } from "node:net"

/** Why an address is refused; `public` is the only kind a webhook may reach (plus loopback when allowed). */
export type AddressKind =
  | "public"
  | "loopback"
  | "private"
  | "link-local"
  | "cgnat"
  | "metadata"
  | "unspecified"
  | "multicast"
  | "reserved"
  | "invalid"

interface Range {
  readonly base: bigint
  readonly bits: number
  readonly kind: AddressKind
}

const v4 = (text: string): bigint | undefined => {
  if (!isIPv4(text)) return undefined
  return text.split(".").reduce((acc, part) => (acc << 8n) | BigInt(Number(part)), 0n)
}

const v6 = (input: string): bigint | undefined => {
  const text = input.replace(/%.*$/, "") // zone id (fe80::1%eth0)
  if (!isIPv6(text)) return undefined
  let head = text
  let tail: Array<number> = []
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text)
  if (dotted) {
    const n = v4(dotted[1])
    if (n === undefined) return undefined
    tail = [Number(n >> 16n), Number(n & 0xffffn)]
    head = text.slice(0, -dotted[1].length)
    if (head.endsWith(":") && !head.endsWith("::")) head = head.slice(0, -1)
  }
  const [left, right] = head.includes("::") ? head.split("::") : [head, undefined]
  const parse = (s: string | undefined) =>
    s
      ? s
          .split(":")
          .filter((x) => x !== "")
          .map((h) => parseInt(h, 16))
      : []
  const l = parse(left)
  const r = [...parse(right), ...tail]
  const groups =
    right === undefined && !head.includes("::")
      ? [...l, ...tail]
      : [...l, ...Array(8 - l.length - r.length).fill(0), ...r]
  if (groups.length !== 8) return undefined
  return groups.reduce((acc, g) => (acc << 16n) | BigInt(g), 0n)
}

const range4 = (cidr: string, kind: AddressKind): Range => {
  const [ip, bits] = cidr.split("/")
  return { base: v4(ip)!, bits: Number(bits), kind }
}
const range6 = (cidr: string, kind: AddressKind): Range => {
  const [ip, bits] = cidr.split("/")
  return { base: v6(ip)!, bits: Number(bits), kind }
}

/** Most specific first: the first match decides. */
const RANGES_V4: ReadonlyArray<Range> = [
  range4("169.254.169.254/32", "metadata"), // AWS, GCP, Azure, OpenStack instance metadata
  range4("100.100.100.200/32", "metadata"), // Alibaba Cloud metadata
  range4("0.0.0.0/8", "unspecified"),
  range4("10.0.0.0/8", "private"),
  range4("100.64.0.0/10", "cgnat"),
  range4("127.0.0.0/8", "loopback"),
  range4("169.254.0.0/16", "link-local"),
  range4("172.16.0.0/12", "private"),
  range4("192.0.0.0/24", "reserved"),
  range4("192.0.2.0/24", "reserved"),
  range4("192.88.99.0/24", "reserved"),
  range4("192.168.0.0/16", "private"),
  range4("198.18.0.0/15", "reserved"),
  range4("198.51.100.0/24", "reserved"),
  range4("203.0.113.0/24", "reserved"),
  range4("224.0.0.0/4", "multicast"),
  range4("240.0.0.0/4", "reserved") // includes 255.255.255.255
]

const RANGES_V6: ReadonlyArray<Range> = [
  range6("fd00:ec2::254/128", "metadata"), // AWS instance metadata over IPv6
  range6("::/128", "unspecified"),
  range6("::1/128", "loopback"),
  range6("::/96", "reserved"), // deprecated IPv4-compatible addresses
  range6("100::/64", "reserved"), // discard-only
  range6("2001:db8::/32", "reserved"), // documentation
  range6("fc00::/7", "private"), // unique local
  range6("fe80::/10", "link-local"),
  range6("fec0::/10", "private"), // deprecated site-local
  range6("ff00::/8", "multicast")
]

const inRange = (n: bigint, width: number, r: Range) => {
  const shift = BigInt(width - r.bits)
  return n >> shift === r.base >> shift
}

const classify4 = (n: bigint): AddressKind => RANGES_V4.find((r) => inRange(n, 32, r))?.kind ?? "public"

const MAPPED = v6("::ffff:0:0")!
const NAT64 = v6("64:ff9b::")!
const SIX_TO_FOUR = v6("2002::")!

/** The kind of an IP address literal (IPv4 dotted quad or IPv6, zone ids allowed). */
export const classifyAddress = (address: string): AddressKind => {
  const a4 = v4(address)
  if (a4 !== undefined) return classify4(a4)
  const a6 = v6(address)
  if (a6 === undefined) return "invalid"
  if (a6 >> 32n === MAPPED >> 32n) return classify4(a6 & 0xffffffffn)
  if (a6 >> 32n === NAT64 >> 32n) return classify4(a6 & 0xffffffffn)
  if (a6 >> 112n === SIX_TO_FOUR >> 112n) return classify4((a6 >> 80n) & 0xffffffffn)
  return RANGES_V6.find((r) => inRange(a6, 128, r))?.kind ?? "public"
}

/** Loopback is allowed only by the development flag, and only 127.0.0.0/8 and ::1. */
export const isAllowedAddress = (address: string, allowLoopback: boolean): boolean => {
  const kind = classifyAddress(address)
  return kind === "public" || (kind === "loopback" && allowLoopback)
}
