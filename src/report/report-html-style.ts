/**
 * The html report's one stylesheet, inlined: the page loads nothing. System fonts, tabular figures for
 * amounts, colour only where it means something (matched green, pending amber, exceptions red), and a
 * print layout, since accountants print reports.
 */
export const REPORT_CSS = `
:root { --ink: #1f2933; --muted: #5f6b7a; --line: #dde3ea; --page: #f4f6f9; --card: #ffffff;
  --ok: #2f855a; --wait: #c98a1b; --bad: #c53030; --bad-bg: #fff1f1; --accent: #2c5282; }
* { box-sizing: border-box; }
body { margin: 0; background: var(--page); color: var(--ink);
  font: 14px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; }
main { max-width: 1180px; margin: 0 auto; padding: 28px 32px 56px; }
header.top { display: flex; justify-content: space-between; align-items: flex-end; gap: 24px;
  border-bottom: 3px solid var(--accent); padding-bottom: 14px; margin-bottom: 20px; }
h1 { font-size: 26px; margin: 0; letter-spacing: -0.01em; }
.subtitle { color: var(--muted); margin-top: 2px; font-size: 15px; }
.generated { color: var(--muted); font-size: 12px; text-align: right; }
h2 { font-size: 17px; margin: 0 0 12px; }
section { background: var(--card); border: 1px solid var(--line); border-radius: 8px; padding: 18px 20px; margin-top: 18px; }
.note { color: var(--muted); font-size: 12.5px; margin: 8px 0 0; }
.banner { border-radius: 8px; padding: 14px 18px; margin: 0 0 14px; font-weight: 600; }
.banner.suspect { background: var(--bad-bg); border: 2px solid var(--bad); color: #822727; font-size: 16px; }
.banner.suspect strong { display: block; font-size: 20px; letter-spacing: 0.04em; color: var(--bad); }
.banner.warning { background: #fffaf0; border: 1px solid var(--wait); color: #7b4a06; }
.cards { display: grid; grid-template-columns: repeat(auto-fit, minmax(160px, 1fr)); gap: 12px; }
.card { background: var(--card); border: 1px solid var(--line); border-radius: 8px; padding: 12px 16px; border-top: 4px solid var(--line); }
.card .label { color: var(--muted); font-size: 12px; text-transform: uppercase; letter-spacing: 0.05em; }
.card .value { font-size: 28px; font-weight: 650; font-variant-numeric: tabular-nums; line-height: 1.2; margin-top: 4px; }
.card .sub { color: var(--muted); font-size: 12.5px; }
.card.ok { border-top-color: var(--ok); } .card.wait { border-top-color: var(--wait); } .card.bad { border-top-color: var(--bad); }
.card.bad .value { color: var(--bad); }
table { border-collapse: collapse; width: 100%; }
th, td { padding: 7px 10px; border-bottom: 1px solid var(--line); text-align: left; vertical-align: top; }
th { font-size: 12px; text-transform: uppercase; letter-spacing: 0.04em; color: var(--muted); font-weight: 600; background: #f8fafc; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
td.num { white-space: nowrap; }
tfoot td { font-weight: 650; border-top: 2px solid var(--line); }
.neg { color: var(--bad); } .pos { color: var(--accent); }
td.at-risk.some { color: var(--bad); font-weight: 600; }
#money-first { border-top: 4px solid var(--accent); margin-top: 0; margin-bottom: 18px; }
#money-first .headline { font-size: 15px; margin: 0 0 10px; }
#money-first .headline .figure { font-size: 26px; font-weight: 650; font-variant-numeric: tabular-nums; margin-right: 6px; }
#money-first .headline .figure.bad { color: var(--bad); } #money-first .headline .figure.ok { color: var(--ok); }
#money-first table + table { margin-top: 12px; }
#money-first tr.last-day td { border-bottom-style: dashed; }
code, .id { font-family: ui-monospace, "SFMono-Regular", Menlo, Consolas, monospace; font-size: 12.5px; overflow-wrap: anywhere; }
.badge { display: inline-block; border-radius: 10px; padding: 1px 9px; font-size: 12px; font-weight: 600; white-space: nowrap;
  background: #fdecec; color: #9b2c2c; }
.badge.matched { background: #e6f4ea; color: #22643e; } .badge.pending { background: #fdf3e1; color: #8a5a0a; }
.badge.new { background: #e8eefb; color: var(--accent); } .badge.persisting { background: #eef0f3; color: #3e4a59; }
.muted { color: var(--muted); font-weight: normal; font-size: 12.5px; }
tbody.currency tr.total td { background: #f8fafc; border-top: 2px solid var(--line); }
tbody.currency tr.part td:first-child { padding-left: 26px; }
tbody.received-currency tr.part td:first-child { padding-left: 26px; }
tbody.received-currency tr.total td { background: #f8fafc; border-bottom: 2px solid var(--line); }
.difference-bar { display: block; width: 100%; min-width: 72px; max-width: 200px; height: 18px; }
.difference-bar line { stroke: #9aa5b1; stroke-width: 1; }
.difference-bar .over { fill: var(--accent); } .difference-bar .short { fill: var(--bad); }
svg.money-chart { width: 100%; height: auto; display: block; margin-top: 6px; }
svg.money-chart .gross { fill: #bcd0ea; } svg.money-chart .net { fill: var(--accent); } svg.money-chart .net.negative { fill: var(--bad); }
svg.money-chart .net.zero { fill: var(--ink); }
svg.money-chart .grid { stroke: #e9edf2; stroke-width: 1; } svg.money-chart .baseline { stroke: #9aa5b1; stroke-width: 1; }
svg.money-chart .axis { fill: var(--muted); font-size: 11px; } svg.money-chart .currency { fill: var(--ink); font-size: 13px; font-weight: 650; }
svg.money-chart g:hover rect { opacity: 0.8; }
td.empty { color: #c3cad3; }
details.group { border: 1px solid var(--line); border-radius: 6px; margin: 8px 0; }
details.group > summary { padding: 9px 12px; background: #f8fafc; border-radius: 6px; }
details.group[open] > summary { border-bottom: 1px solid var(--line); border-radius: 6px 6px 0 0; }
details.group > summary .count { margin: 0 10px 0 6px; font-variant-numeric: tabular-nums; }
details.group > summary .money { font-variant-numeric: tabular-nums; font-weight: 600; }
details.group > table, details.group > p { margin: 0 12px 10px; width: calc(100% - 24px); }
details.days { margin-top: 10px; }
h3 { font-size: 14.5px; margin: 16px 0 6px; }
.badge.acknowledged { background: #e6f4ea; color: #22643e; }
tr.note-row td { border-bottom: none; padding-top: 0; font-size: 12.5px; }
.last-note { color: var(--ink); margin-top: 2px; }
details.days > table { margin-top: 6px; }
.legend { display: flex; flex-wrap: wrap; gap: 4px 18px; font-size: 12.5px; color: var(--muted); margin: 4px 0 8px; }
.legend > span:has(> .swatch) { white-space: nowrap; }
.swatch { display: inline-block; width: 11px; height: 11px; border-radius: 2px; margin-right: 6px; vertical-align: -1px; }
.swatch.matched { background: var(--ok); } .swatch.pending { background: var(--wait); } .swatch.exceptions { background: var(--bad); }
.swatch.gross { background: #bcd0ea; } .swatch.net { background: var(--accent); }
svg.chart { width: 100%; height: auto; display: block; }
svg.chart .bar.matched { fill: var(--ok); } svg.chart .bar.pending { fill: var(--wait); } svg.chart .bar.exceptions { fill: var(--bad); }
svg.chart .grid { stroke: #e9edf2; stroke-width: 1; } svg.chart .baseline { stroke: #9aa5b1; stroke-width: 1; }
svg.chart .axis { fill: var(--muted); font-size: 11px; }
svg.chart g:hover rect { opacity: 0.8; }
.two { display: grid; grid-template-columns: 1fr 1fr; gap: 18px; }
.two > section { margin-top: 18px; }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: 6px 18px; margin: 0; }
dl.facts dt { color: var(--muted); } dl.facts dd { margin: 0; }
tr.explain td { background: #fbfcfd; padding-top: 0; }
tr.main td { border-bottom: none; }
details summary { cursor: pointer; color: var(--ink); }
details summary::marker { color: var(--muted); }
details .inner { margin: 8px 0 6px 18px; }
details table { margin: 6px 0; font-size: 12.5px; }
details ul { margin: 6px 0; padding-left: 18px; color: #7b4a06; }
details ul.conflicts { color: #822727; }
.figures { color: var(--muted); font-size: 12.5px; }
@media (max-width: 860px) { .two { grid-template-columns: 1fr; } }
@media (max-width: 1000px) {
  main { padding: 20px 16px 40px; } section { padding: 14px 12px; } th, td { padding: 6px 6px; }
}
@media print {
  body { background: #fff; font-size: 11px; } main { max-width: none; padding: 0; }
  section, .card { break-inside: avoid; border-color: #bbb; }
  tr { break-inside: avoid; }
}
`;
