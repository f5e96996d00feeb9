// The owner page's spend chart: an inline SVG drawn on the server.
import { type Html, html } from "../templates/html.js"
import { CHART_DAYS, usd } from "./format.js"

/** Spend per UTC day for the last 30 days as bars, the daily limit as a dashed line (inline SVG, no script). */
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
  const width = 600
  const height = 180
  const top = 10
  const bottom = 22
  const left = 4
  const plot = height - top - bottom
  const max = Math.max(1, dailyLimitCents ?? 0, ...days.map((d) => d.cents))
  const barWidth = (width - left) / CHART_DAYS
  const y = (cents: number) => top + plot - (cents / max) * plot
  const total = days.reduce((s, d) => s + d.cents, 0)
  const over = dailyLimitCents === null ? 0 : days.filter((d) => d.cents > dailyLimitCents).length
  const bars = days.map((d, i) => {
    const h = Math.max(d.cents > 0 ? 1 : 0, (d.cents / max) * plot)
    const cls = dailyLimitCents !== null && d.cents > dailyLimitCents ? "bar over" : "bar"
    return html`<rect class="${cls}" data-day="${d.day}" data-cents="${d.cents}" x="${(left + i * barWidth + 1).toFixed(1)}" y="${(top + plot - h).toFixed(1)}" width="${(barWidth - 2).toFixed(1)}" height="${h.toFixed(1)}"><title>${d.day}: ${usd(d.cents)}</title></rect>`
  })

  const limit =
    dailyLimitCents === null
      ? ""
      : html`<line class="limit" data-cents="${dailyLimitCents}" x1="${left}" x2="${width}" y1="${y(dailyLimitCents).toFixed(1)}" y2="${y(dailyLimitCents).toFixed(1)}"/><text class="limit-label" x="${width - 4}" y="${(y(dailyLimitCents) - 3).toFixed(1)}" text-anchor="end">daily limit ${usd(dailyLimitCents)}</text>`
  const axis = html`<text class="axis" x="${left}" y="${height - 6}">${days[0]!.day}</text><text class="axis" x="${width}" y="${height - 6}" text-anchor="end">${days[days.length - 1]!.day} (today)</text>`
  const summary = `${usd(total)} spent in the last ${CHART_DAYS} days${dailyLimitCents === null ? "; no daily limit" : `; daily limit ${usd(dailyLimitCents)}, exceeded on ${over} day${over === 1 ? "" : "s"}`}`
  return html`<figure class="chart"><svg id="spend-chart" viewBox="0 0 ${width} ${height}" role="img" aria-labelledby="spend-chart-title spend-chart-desc" preserveAspectRatio="none">
<title id="spend-chart-title">Spend per day, last ${CHART_DAYS} days</title><desc id="spend-chart-desc">${summary}</desc>
${bars}${limit}${axis}</svg>
<figcaption>${summary}</figcaption></figure>`
}
