// A chart as SVG and PNG (export.js's chart buttons): the live uPlot's geometry,
// series and axis ticks, drawn again in the page's colours with a title and legend.
// Comes with views.js (chart and simulator), not before the first answer (issue 13).

function cssVar(name, fallback) {
  const v = getComputedStyle(document.documentElement).getPropertyValue(name).trim();
  return v || fallback;
}

function xmlEscape(s) {
  return String(s).replace(/[<>&"']/g, (c) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;', '"': '&quot;', "'": '&apos;' }[c]));
}

// What the chart shows, in CSS pixels, read back from the live uPlot instance so
// PNG and SVG match the screen: plot box, axis ticks, series paths and colours.
function chartGeometry(chart) {
  const u = chart.plot ?? chart;
  const ratio = u.ctx.canvas.width / u.width || 1;
  const box = { left: u.bbox.left / ratio, top: u.bbox.top / ratio, width: u.bbox.width / ratio, height: u.bbox.height / ratio };
  const xs = u.data[0];
  const series = [];
  for (let i = 1; i < u.series.length; i++) {
    const s = u.series[i];
    const pts = [];
    for (let j = 0; j < xs.length; j++) {
      const y = u.data[i][j];
      if (y === null || y === undefined) continue;
      pts.push([box.left + u.valToPos(xs[j], 'x'), box.top + u.valToPos(y, 'y')]);
    }
    if (s.show === false) continue;
    const stroke = typeof s.stroke === 'function' ? s.stroke(u, i) : s.stroke;
    const fill = typeof s.fill === 'string' ? s.fill : null;
    series.push({ label: s.label, stroke: stroke || '#000', fill, width: s.width || 1, dash: s.dash || null, pts });
  }
  const ticks = (axisIdx, scale) => {
    const a = u.axes[axisIdx];
    const splits = a._splits || [];
    const values = a._values || [];
    return splits.map((v, k) => ({ pos: (scale === 'x' ? box.left : box.top) + u.valToPos(v, scale), text: values[k] == null ? '' : String(values[k]) }))
      .filter((tk) => Number.isFinite(tk.pos));
  };
  const crossover = chart.data?.crossover || 0;
  const cx = crossover ? box.left + u.valToPos(crossover, 'x') : null;
  return {
    width: u.width, height: u.height, box, series,
    xTicks: ticks(0, 'x'), yTicks: ticks(1, 'y'),
    xLabel: u.axes[0].label || '',
    crossoverX: cx !== null && cx >= box.left && cx <= box.left + box.width ? cx : null,
  };
}

const LEGEND_H = 28;
const TITLE_H = 26;

export function chartSvg(chart, title) {
  const g = chartGeometry(chart);
  const W = Math.round(g.width);
  const H = Math.round(g.height + TITLE_H + LEGEND_H);
  const fg = cssVar('--fg', '#16181d');
  const muted = cssVar('--fg-muted', '#4a5160');
  const grid = cssVar('--grid', '#e3e6eb');
  const bg = cssVar('--bg', '#ffffff');
  const f = (n) => (Math.round(n * 10) / 10).toString();
  const out = [];
  out.push(`<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="system-ui, sans-serif" font-size="12">`);
  out.push(`<title>${xmlEscape(title)}</title>`);
  out.push(`<rect width="100%" height="100%" fill="${xmlEscape(bg)}"/>`);
  out.push(`<text x="8" y="18" font-size="14" font-weight="600" fill="${xmlEscape(fg)}">${xmlEscape(title)}</text>`);
  out.push(`<g transform="translate(0 ${TITLE_H})">`);
  const { box } = g;
  for (const tk of g.yTicks) {
    out.push(`<line x1="${f(box.left)}" x2="${f(box.left + box.width)}" y1="${f(tk.pos)}" y2="${f(tk.pos)}" stroke="${xmlEscape(grid)}"/>`);
    out.push(`<text x="${f(box.left - 6)}" y="${f(tk.pos + 4)}" text-anchor="end" fill="${xmlEscape(muted)}">${xmlEscape(tk.text)}</text>`);
  }
  for (const tk of g.xTicks) {
    out.push(`<line x1="${f(tk.pos)}" x2="${f(tk.pos)}" y1="${f(box.top)}" y2="${f(box.top + box.height)}" stroke="${xmlEscape(grid)}"/>`);
    out.push(`<text x="${f(tk.pos)}" y="${f(box.top + box.height + 16)}" text-anchor="middle" fill="${xmlEscape(muted)}">${xmlEscape(tk.text)}</text>`);
  }
  if (g.xLabel) out.push(`<text x="${f(box.left + box.width / 2)}" y="${f(g.height - 4)}" text-anchor="middle" fill="${xmlEscape(muted)}">${xmlEscape(g.xLabel)}</text>`);
  if (g.crossoverX !== null) {
    out.push(`<line x1="${f(g.crossoverX)}" x2="${f(g.crossoverX)}" y1="${f(box.top)}" y2="${f(box.top + box.height)}" stroke="${xmlEscape(muted)}" stroke-dasharray="2 3"/>`);
  }
  for (const s of g.series) {
    if (!s.pts.length) continue;
    const d = s.pts.map(([x, y], k) => (k ? 'L' : 'M') + f(x) + ' ' + f(y)).join(' ');
    if (s.fill) {
      // Area charts: filled down to the x axis, in series order, under the line.
      const base = f(box.top + box.height);
      out.push(`<path d="${d} L${f(s.pts.at(-1)[0])} ${base} L${f(s.pts[0][0])} ${base} Z" fill="${xmlEscape(s.fill)}" stroke="none"/>`);
    }
    out.push(`<path d="${d}" fill="none" stroke="${xmlEscape(s.stroke)}" stroke-width="${s.width}"${s.dash ? ` stroke-dasharray="${s.dash.join(' ')}"` : ''}/>`);
  }
  out.push('</g>');
  let x = 8;
  const ly = H - 10;
  for (const s of g.series) {
    out.push(`<line x1="${x}" x2="${x + 18}" y1="${ly - 4}" y2="${ly - 4}" stroke="${xmlEscape(s.stroke)}" stroke-width="${s.width}"${s.dash ? ` stroke-dasharray="${s.dash.join(' ')}"` : ''}/>`);
    out.push(`<text x="${x + 24}" y="${ly}" fill="${xmlEscape(fg)}">${xmlEscape(s.label)}</text>`);
    x += 24 + 8 * String(s.label).length + 24;
  }
  out.push('</svg>');
  return out.join('\n') + '\n';
}

// The uPlot canvas already holds axes and lines; title and legend (HTML in uPlot)
// are drawn around it.
export function chartPng(chart, title) {
  const u = chart.plot ?? chart;
  const src = u.ctx.canvas;
  const ratio = src.width / u.width || 1;
  const c = document.createElement('canvas');
  c.width = src.width;
  c.height = src.height + Math.round((TITLE_H + LEGEND_H) * ratio);
  const ctx = c.getContext('2d');
  ctx.fillStyle = cssVar('--bg', '#ffffff');
  ctx.fillRect(0, 0, c.width, c.height);
  ctx.scale(ratio, ratio);
  ctx.fillStyle = cssVar('--fg', '#16181d');
  ctx.font = '600 14px system-ui, sans-serif';
  ctx.fillText(title, 8, 18);
  ctx.drawImage(src, 0, TITLE_H, u.width, src.height / ratio);
  ctx.font = '12px system-ui, sans-serif';
  let x = 8;
  const ly = TITLE_H + src.height / ratio + LEGEND_H - 10;
  for (let i = 1; i < u.series.length; i++) {
    const s = u.series[i];
    ctx.strokeStyle = typeof s.stroke === 'function' ? s.stroke(u, i) : s.stroke;
    ctx.lineWidth = s.width || 1;
    ctx.setLineDash(s.dash || []);
    ctx.beginPath();
    ctx.moveTo(x, ly - 4);
    ctx.lineTo(x + 18, ly - 4);
    ctx.stroke();
    ctx.setLineDash([]);
    ctx.fillText(String(s.label), x + 24, ly);
    x += 24 + ctx.measureText(String(s.label)).width + 16;
  }
  return new Promise((resolve, reject) => c.toBlob((b) => (b ? resolve(b) : reject(new Error('toBlob failed'))), 'image/png'));
}
