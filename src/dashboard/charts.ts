/**
 * Stacked bar charts as inline SVG, drawn on the server: no script, no
 * network, nothing to download. Each chart has an accessible name that
 * states its totals and a table of its numbers for anyone who cannot see it.
 */
import { html, type Html } from "./html.js";
import type { HourSeries } from "../views/activity.js";

/** Fixed colours for the names people learn to recognise; others take the palette in turn. */
const FIXED: Record<string, string> = {
  merged: "#2da44e",
  reads: "#0969da",
  writes: "#bf8700",
  infra: "#8250df",
  phantom: "#cf222e",
  "checks-failed": "#fb8500",
  "merge-conflict": "#9a6700",
  question: "#1f6feb",
  unclassified: "#8c959f",
};
const PALETTE = ["#e16f24", "#116329", "#a40e26", "#0550ae", "#6e7781", "#953800", "#6639ba", "#1b7c83"];

export function colours(names: string[]): Map<string, string> {
  let next = 0;
  return new Map(names.map((n) => [n, FIXED[n] ?? PALETTE[next++ % PALETTE.length]!]));
}

const W = 720;
const H = 180;
const PAD = { left: 40, right: 8, top: 8, bottom: 24 };

const hourLabel = (d: Date) => `${String(d.getUTCHours()).padStart(2, "0")}:00`;

/** The largest stacked total, rounded up to a tidy axis maximum. */
export function axisMax(totals: number[]): number {
  const max = Math.max(0, ...totals);
  if (max <= 4) return 4;
  const step = 10 ** Math.floor(Math.log10(max));
  for (const m of [1, 2, 2.5, 5, 10]) if (m * step >= max) return m * step;
  return 10 * step;
}

export function stackedBars(title: string, data: HourSeries, unit: string): Html {
  const n = data.hours.length;
  const totals = data.hours.map((_, i) => data.series.reduce((s, x) => s + x.counts[i]!, 0));
  const max = axisMax(totals);
  const colour = colours(data.series.map((s) => s.name));
  const plotW = W - PAD.left - PAD.right;
  const plotH = H - PAD.top - PAD.bottom;
  const slot = plotW / Math.max(1, n);
  const barW = Math.max(1, slot * 0.8);
  const y = (v: number) => PAD.top + plotH - (v / max) * plotH;
  const bars: Html[] = [];
  data.hours.forEach((hour, i) => {
    let base = 0;
    for (const s of data.series) {
      const v = s.counts[i]!;
      if (v === 0) continue;
      const x = PAD.left + i * slot + (slot - barW) / 2;
      bars.push(
        html`<rect x="${x.toFixed(1)}" y="${y(base + v).toFixed(1)}" width="${barW.toFixed(1)}" height="${(y(base) - y(base + v)).toFixed(1)}" fill="${colour.get(s.name)}"><title>${hourLabel(hour)} UTC: ${v} ${s.name}</title></rect>`,
      );
      base += v;
    }
  });
  const ticks = [0, max / 2, max].map(
    (v) =>
      html`<line class="grid" x1="${PAD.left}" x2="${W - PAD.right}" y1="${y(v).toFixed(1)}" y2="${y(v).toFixed(1)}"/><text class="axis" x="${PAD.left - 4}" y="${(y(v) + 4).toFixed(1)}" text-anchor="end">${Number.isInteger(v) ? v : v.toFixed(1)}</text>`,
  );
  const labels = data.hours.map((h, i) =>
    i % 6 === 0 || i === n - 1
      ? html`<text class="axis" x="${(PAD.left + i * slot + slot / 2).toFixed(1)}" y="${H - 6}" text-anchor="middle">${hourLabel(h)}</text>`
      : html``,
  );
  const sums = data.series.map((s) => `${s.counts.reduce((a, b) => a + b, 0)} ${s.name}`);
  const name = `${title}, last ${n} hours: ${sums.length ? sums.join(", ") : `no ${unit}`}`;
  return html`<figure class="chart">
  <figcaption>${title} <span class="muted">(last ${n} hours, UTC)</span></figcaption>
  <svg viewBox="0 0 ${W} ${H}" role="img" aria-label="${name}" preserveAspectRatio="xMidYMid meet">${ticks}${bars}${labels}</svg>
  <ul class="legend">${data.series.length ? data.series.map((s) => html`<li><svg class="swatch" width="12" height="12" aria-hidden="true"><rect width="12" height="12" fill="${colour.get(s.name)}"/></svg>${s.name} <span class="muted">${s.counts.reduce((a, b) => a + b, 0)}</span></li>`) : html`<li class="muted">no ${unit} in this period</li>`}</ul>
  <details><summary>Numbers</summary>
    <table><thead><tr><th scope="col">Hour (UTC)</th>${data.series.map((s) => html`<th scope="col">${s.name}</th>`)}</tr></thead>
    <tbody>${data.hours.map((h, i) => (totals[i] ? html`<tr><td>${h.toISOString().slice(0, 13)}:00</td>${data.series.map((s) => html`<td>${s.counts[i]}</td>`)}</tr>` : html``))}</tbody></table>
  </details>
</figure>`;
}
