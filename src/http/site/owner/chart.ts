// The owner page's spend chart: an inline SVG drawn on the server. Its text keeps its proportions
// (no preserveAspectRatio="none"): the drawing scales as a whole and the stylesheet sizes the labels
// for the screen, so they are never squashed.
import { type Html, html } from "../templates/html.js"
import { CHART_DAYS, usd } from "./format.js"

const WIDTH = 600
const HEIGHT = 260
const TOP = 16
const BOTTOM = 36
const LEFT = 90
const RIGHT = 8

/** A round step for the y axis: 1, 2 or 5 times a power of ten, in cents, giving at most 4 steps. */
const stepFor = (max: number): number => {
  const raw = max / 4
  const power = 10 ** Math.floor(Math.log10(Math.max(raw, 1)))
  return [1, 2, 5, 10].map((m) => m * power).find((s) => s >= raw) ?? 10 * power
}

/** Spend per UTC day for the last 30 days as bars, an axis in dollars, the daily limit as a dashed line. */
export const spendChart = (
  byDay: ReadonlyArray<{ readonly day: string; readonly spentCents: number }>,
  dailyLimitCents: number | null,
  today: number
): Html => {
  const days: Array<{ day: string; cents: number }> = []
  const start =
    Date.UTC(new Date(today).getUTCFullYear(), new Date(today).getUTCMonth(), new Date(today).getUTCDate()) -
    (CHART_DAYS - 1) * 86_400_000
  const spent = new Map(byDay.map((d) => [d.day.slice(0, 10), d.spentCents]))
  for (let i = 0; i < CHART_DAYS; i++) {
    const day = new Date(start + i * 86_400_000).toISOString().slice(0, 10)
    days.push({ day, cents: spent.get(day) ?? 0 })
  }
  const plot = HEIGHT - TOP - BOTTOM
  const step = stepFor(Math.max(100, dailyLimitCents ?? 0, ...days.map((d) => d.cents)))
  const max = step * Math.ceil(Math.max(100, dailyLimitCents ?? 0, ...days.map((d) => d.cents)) / step)
  const barWidth = (WIDTH - LEFT - RIGHT) / CHART_DAYS
  const y = (cents: number) => TOP + plot - (cents / max) * plot
  const total = days.reduce((s, d) => s + d.cents, 0)
  const over = dailyLimitCents === null ? 0 : days.filter((d) => d.cents > dailyLimitCents).length
  const bars = days.map((d, i) => {
    const h = Math.max(d.cents > 0 ? 1 : 0, (d.cents / max) * plot)
    const cls = dailyLimitCents !== null && d.cents > dailyLimitCents ? "bar over" : "bar"
    return html`<rect class="${cls}" data-day="${d.day}" data-cents="${d.cents}" x="${(LEFT + i * barWidth + 1).toFixed(1)}" y="${(TOP + plot - h).toFixed(1)}" width="${(barWidth - 2).toFixed(1)}" height="${h.toFixed(1)}"><title>${d.day}: ${usd(d.cents)}</title></rect>`
  })
  const ticks: Array<Html> = []
  for (let c = 0; c <= max; c += step)
    ticks.push(
      html`<line class="grid" x1="${LEFT}" x2="${WIDTH - RIGHT}" y1="${y(c).toFixed(1)}" y2="${y(c).toFixed(1)}"/><text class="axis" x="${LEFT - 6}" y="${(y(c) + 5).toFixed(1)}" text-anchor="end">${usd(c).replace(/\.00$/, "")}</text>`
    )
  const limit =
    dailyLimitCents === null
      ? ""
      : html`<line class="limit" data-cents="${dailyLimitCents}" x1="${LEFT}" x2="${WIDTH - RIGHT}" y1="${y(dailyLimitCents).toFixed(1)}" y2="${y(dailyLimitCents).toFixed(1)}"/><text class="limit-label" x="${WIDTH - RIGHT - 4}" y="${(y(dailyLimitCents) - 5).toFixed(1)}" text-anchor="end">daily limit ${usd(dailyLimitCents)}</text>`
  const label = (day: string) =>
    new Date(`${day}T00:00:00Z`).toLocaleDateString("en-US", { month: "short", day: "numeric", timeZone: "UTC" })
  const middle = days[Math.floor(CHART_DAYS / 2)]!.day
  const axis = html`<line class="axis-line" x1="${LEFT}" x2="${WIDTH - RIGHT}" y1="${TOP + plot}" y2="${TOP + plot}"/>
<text class="axis" x="${LEFT}" y="${HEIGHT - 10}">${label(days[0]!.day)}</text><text class="axis" x="${(LEFT + (WIDTH - RIGHT)) / 2}" y="${HEIGHT - 10}" text-anchor="middle">${label(middle)}</text><text class="axis" x="${WIDTH - RIGHT}" y="${HEIGHT - 10}" text-anchor="end">today</text>`
  const summary = `${usd(total)} spent in the last ${CHART_DAYS} days${dailyLimitCents === null ? "; no daily limit" : `; daily limit ${usd(dailyLimitCents)}, exceeded on ${over} day${over === 1 ? "" : "s"}`}`
  return html`<figure class="chart"><svg id="spend-chart" viewBox="0 0 ${WIDTH} ${HEIGHT}" role="img" aria-labelledby="spend-chart-title spend-chart-desc">
<title id="spend-chart-title">Spend per day, last ${CHART_DAYS} days</title><desc id="spend-chart-desc">${summary}</desc>
${ticks}${bars}${limit}${axis}</svg>
<figcaption>${summary}</figcaption></figure>`
}
