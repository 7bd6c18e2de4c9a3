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
      const box = html`x="${x.toFixed(1)}" y="${y(base + v).toFixed(1)}" width="${barW.toFixed(1)}"`;
      const tip = html`<title>${hourLabel(hour)} UTC: ${v} ${s.name}</title>`;
      bars.push(
        html`<rect ${box} height="${(y(base) - y(base + v)).toFixed(1)}" fill="${colour.get(s.name)}">${tip}</rect>`,
      );
      base += v;
    }
  });
  const ticks = [0, max / 2, max].map((v) => {
    const ys = html`y1="${y(v).toFixed(1)}" y2="${y(v).toFixed(1)}"`;
    const grid = html`<line class="grid" x1="${PAD.left}" x2="${W - PAD.right}" ${ys}/>`;
    const value = Number.isInteger(v) ? v : v.toFixed(1);
    const at = html`x="${PAD.left - 4}" y="${(y(v) + 4).toFixed(1)}"`;
    return html`${grid}<text class="axis" ${at} text-anchor="end">${value}</text>`;
  });
  const labels = data.hours.map((h, i) => {
    const x = (PAD.left + i * slot + slot / 2).toFixed(1);
    return i % 6 === 0 || i === n - 1
      ? html`<text class="axis" x="${x}" y="${H - 6}" text-anchor="middle">${hourLabel(h)}</text>`
      : html``;
  });
  const sums = data.series.map((s) => `${s.counts.reduce((a, b) => a + b, 0)} ${s.name}`);
  const name = `${title}, last ${n} hours: ${sums.length ? sums.join(", ") : `no ${unit}`}`;
  const plot = html`${ticks}${bars}${labels}`;
  const legend = data.series.length
    ? data.series.map((s) => {
        const rect = html`<rect width="12" height="12" fill="${colour.get(s.name)}"/>`;
        const swatch = html`<svg class="swatch" width="12" height="12" aria-hidden="true">${rect}</svg>`;
        const sum = html`<span class="muted">${s.counts.reduce((a, b) => a + b, 0)}</span>`;
        return html`<li>${swatch}${s.name} ${sum}</li>`;
      })
    : html`<li class="muted">no ${unit} in this period</li>`;
  const heads = data.series.map((s) => html`<th scope="col">${s.name}</th>`);
  const rows = data.hours.map((h, i) => {
    const cells = data.series.map((s) => html`<td>${s.counts[i]}</td>`);
    return totals[i] ? html`<tr><td>${h.toISOString().slice(0, 13)}:00</td>${cells}</tr>` : html``;
  });
  return html`<figure class="chart">
  <figcaption>${title} <span class="muted">(last ${n} hours, UTC)</span></figcaption>
  <svg viewBox="0 0 ${W} ${H}" role="img" aria-label="${name}" preserveAspectRatio="xMidYMid meet">${plot}</svg>
  <ul class="legend">${legend}</ul>
  <details><summary>Numbers</summary>
    <table><thead><tr><th scope="col">Hour (UTC)</th>${heads}</tr></thead>
    <tbody>${rows}</tbody></table>
  </details>
</figure>`;
}
