/** The dashboard's one stylesheet, served from /dashboard/assets/style.css (the pages allow no inline style). */
export const STYLE = `
:root { color-scheme: light dark; --fg: #1f2328; --muted: #59636e; --bg: #ffffff; --panel: #f6f8fa;\
 --line: #d1d9e0; --accent: #0969da; --bad: #cf222e; --ok: #1a7f37; --warn: #9a6700; }
@media (prefers-color-scheme: dark) { :root { --fg: #e6edf3; --muted: #9198a1; --bg: #0d1117; --panel: #151b23;\
 --line: #3d444d; --accent: #4493f8; --bad: #f85149; --ok: #3fb950; --warn: #d29922; } }
* { box-sizing: border-box; }
body { margin: 0; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif;\
 color: var(--fg); background: var(--bg); }
header.top { display: flex; align-items: center; gap: 1rem; padding: .6rem 1.2rem;\
 border-bottom: 1px solid var(--line); background: var(--panel); }
header.top h1 { font-size: 1.1rem; margin: 0; }
header.top nav { display: flex; gap: 1rem; flex: 1; }
main { padding: 1rem 1.2rem 3rem; max-width: 1400px; }
a { color: var(--accent); }
h2 { font-size: 1.05rem; margin: 1.6rem 0 .5rem; border-bottom: 1px solid var(--line); padding-bottom: .25rem; }
h3 { font-size: .95rem; margin: 1rem 0 .35rem; }
table { border-collapse: collapse; width: 100%; margin: .3rem 0 .8rem; }
th, td { text-align: left; vertical-align: top; padding: .3rem .5rem; border-bottom: 1px solid var(--line); }
th { font-weight: 600; color: var(--muted); font-size: .85rem; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
.muted { color: var(--muted); }
.tiles { display: flex; flex-wrap: wrap; gap: .6rem; margin: .3rem 0; padding: 0; list-style: none; }
.tiles li { background: var(--panel); border: 1px solid var(--line); border-radius: 6px;\
 padding: .4rem .8rem; min-width: 7rem; }
.tiles b { display: block; font-size: 1.3rem; }
.charts { display: grid; grid-template-columns: repeat(auto-fit, minmax(420px, 1fr)); gap: 1rem; }
figure.chart { margin: 0; background: var(--panel); border: 1px solid var(--line); border-radius: 6px; padding: .6rem; }
figure.chart > svg { width: 100%; height: auto; }
figcaption { font-weight: 600; margin-bottom: .3rem; }
.grid { stroke: var(--line); stroke-width: 1; }
.axis { fill: var(--muted); font-size: 11px; }
.legend { list-style: none; padding: 0; margin: .3rem 0; display: flex; flex-wrap: wrap; gap: .8rem; }
.swatch { width: 12px; height: 12px; vertical-align: -1px; margin-right: .3rem; }
.state { display: inline-block; padding: 0 .45rem; border-radius: 999px;\
 border: 1px solid var(--line); font-size: .8rem; }
.state-failed, .state-parked { color: var(--bad); border-color: var(--bad); }
.state-blocked { color: var(--warn); border-color: var(--warn); }
.state-done, .state-review { color: var(--ok); border-color: var(--ok); }
.notice, .error { padding: .5rem .8rem; border-radius: 6px; margin: .6rem 0; border: 1px solid; }
.notice { border-color: var(--ok); }
.error { border-color: var(--bad); color: var(--bad); }
form.inline { display: inline; margin: 0; }
button { font: inherit; padding: .2rem .7rem; border-radius: 6px; border: 1px solid var(--line);\
 background: var(--bg); color: var(--fg); cursor: pointer; }
button:hover { border-color: var(--accent); }
button.danger { color: var(--bad); }
.actions { display: flex; gap: .5rem; flex-wrap: wrap; margin: .5rem 0 1rem; }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: .2rem 1rem; margin: .5rem 0; }
dl.facts dt { color: var(--muted); }
dl.facts dd { margin: 0; }
td pre { white-space: pre-wrap; overflow-wrap: anywhere; }
pre { background: var(--panel); border: 1px solid var(--line); border-radius: 6px; padding: .5rem;\
 overflow-x: auto; max-height: 24rem; font-size: 12px; }
.signin { max-width: 26rem; margin: 4rem auto; background: var(--panel); border: 1px solid var(--line);\
 border-radius: 8px; padding: 1.2rem 1.4rem; }
.signin input { width: 100%; font: inherit; padding: .35rem .5rem; margin: .3rem 0 .8rem;\
 border: 1px solid var(--line); border-radius: 6px; background: var(--bg); color: var(--fg); }
.empty { color: var(--muted); font-style: italic; margin: .3rem 0 .8rem; }
`;
