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
    // uPlot keeps a series' fill as a function of the plot (null for a line).
    const fill = (typeof s.fill === 'function' ? s.fill(u, i) : s.fill) || null;
    series.push({ label: s.label, stroke: stroke || '#000', fill, width: s.width ?? 1, dash: s.dash || null, pts });
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
    yLabel: u.axes[1]?.label || '',
    crossoverX: cx !== null && cx >= box.left && cx <= box.left + box.width ? cx : null,
  };
}

// ---------- title, notes and legend around the plot ----------
// Laid out once for both formats, measured with the page's fonts, and wrapped to the
// chart's width: a long title, the settings under it and a legend of seven parts stay
// inside the image at any width (they ran off a 371 px export in one line each).

const PAD = 8;
const FONT_TITLE = '600 14px system-ui, sans-serif';
const FONT_TEXT = '12px system-ui, sans-serif';
const TITLE_LINE = 18;
const NOTE_LINE = 16;
const LEGEND_ROW = 18;

let measurer = null;
function textWidth(font, text) {
  measurer ||= document.createElement('canvas').getContext('2d');
  measurer.font = font;
  return measurer.measureText(text).width;
}

// Break opportunities: after a word and its spaces, and between CJK characters (a
// closing mark stays with the character before it, an opening one with the next).
const CJK = '\u2e80-\u9fff\uf900-\ufaff\uff00-\uffef\u3000-\u303f';
const CLOSING = '\u3001\u3002\uff09\uff0c\uff1a\uff1b\uff01\uff1f\u300d\u300f\u3011';
const OPENING = /^[\uff08\u300c\u300e\u3010]$/;
function pieces(text) {
  const re = new RegExp(`[${CJK}][${CLOSING}]*|[^\\s${CJK}]+\\s*|\\s+`, 'g');
  const out = [];
  let carry = '';
  for (const p of String(text).match(re) || []) {
    if (OPENING.test(p)) {
      carry += p;
      continue;
    }
    out.push(carry + p);
    carry = '';
  }
  if (carry) out.push(carry);
  return out;
}

export function wrapText(text, font, maxWidth) {
  const lines = [];
  let line = '';
  const push = () => {
    if (line.trim()) lines.push(line.trimEnd());
    line = '';
  };
  for (let p of pieces(text)) {
    if (!line && !p.trim()) continue;
    if (textWidth(font, (line + p).trimEnd()) <= maxWidth) {
      line += p;
      continue;
    }
    push();
    p = p.trimStart();
    // One piece wider than the whole line (a long model id): broken where it must be.
    while (textWidth(font, p.trimEnd()) > maxWidth && p.length > 1) {
      let k = p.length - 1;
      while (k > 1 && textWidth(font, p.slice(0, k)) > maxWidth) k--;
      lines.push(p.slice(0, k));
      p = p.slice(k);
    }
    line = p;
  }
  push();
  return lines;
}

// The legend's entries: the chart's own (chart.legend: a stacked chart's parts in the
// order they are stacked, each a filled swatch) or its series'.
function legendItems(chart) {
  if (chart.legend) return chart.legend.map((e) => ({ label: String(e.label), fill: e.fill || null, stroke: e.stroke || e.fill || '#000', width: e.width || 1, dash: e.dash || null }));
  const u = chart.plot ?? chart;
  const out = [];
  for (let i = 1; i < u.series.length; i++) {
    const s = u.series[i];
    if (s.show === false) continue;
    const stroke = (typeof s.stroke === 'function' ? s.stroke(u, i) : s.stroke) || '#000';
    const fill = (typeof s.fill === 'function' ? s.fill(u, i) : s.fill) || null;
    out.push({ label: String(s.label), fill: fill && !(s.width > 0) ? fill : null, stroke, width: s.width || 1, dash: s.dash || null });
  }
  return out;
}

function layout(chart, title, width) {
  const inner = width - 2 * PAD;
  const titleLines = wrapText(title, FONT_TITLE, inner);
  const noteLines = (chart.notes || []).flatMap((n) => wrapText(n, FONT_TEXT, inner));
  const top = PAD + titleLines.length * TITLE_LINE + noteLines.length * NOTE_LINE + 6;
  const items = legendItems(chart);
  const rows = [];
  let x = PAD;
  let row = [];
  for (const it of items) {
    const w = 18 + 6 + textWidth(FONT_TEXT, it.label);
    if (row.length && x + w > width - PAD) {
      rows.push(row);
      row = [];
      x = PAD;
    }
    row.push({ ...it, x });
    x += w + 16;
  }
  if (row.length) rows.push(row);
  const legendH = rows.length ? rows.length * LEGEND_ROW + 10 : 0;
  return { titleLines, noteLines, top, rows, legendH };
}

// Baselines of the header's lines and of each legend row, below `plotH` of plot.
function headerBaselines(L) {
  const out = [];
  let y = PAD + 14;
  for (const text of L.titleLines) {
    out.push({ text, y, font: FONT_TITLE, title: true });
    y += TITLE_LINE;
  }
  y += NOTE_LINE - TITLE_LINE + 2;
  for (const text of L.noteLines) {
    out.push({ text, y, font: FONT_TEXT, title: false });
    y += NOTE_LINE;
  }
  return out;
}
const legendY = (L, plotH, r) => L.top + plotH + 4 + 13 + r * LEGEND_ROW;

export function chartSvg(chart, title) {
  const g = chartGeometry(chart);
  const W = Math.round(g.width);
  const L = layout(chart, title, W);
  const H = Math.round(L.top + g.height + L.legendH);
  const fg = cssVar('--fg', '#16181d');
  const muted = cssVar('--fg-muted', '#4a5160');
  const grid = cssVar('--grid', '#e3e6eb');
  const bg = cssVar('--bg', '#ffffff');
  const f = (n) => (Math.round(n * 10) / 10).toString();
  const out = [];
  out.push(`<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="system-ui, sans-serif" font-size="12">`);
  out.push(`<title>${xmlEscape(title)}</title>`);
  out.push(`<rect width="100%" height="100%" fill="${xmlEscape(bg)}"/>`);
  for (const l of headerBaselines(L)) {
    out.push(`<text x="${PAD}" y="${f(l.y)}"${l.title ? ' font-size="14" font-weight="600"' : ''} fill="${xmlEscape(l.title ? fg : muted)}">${xmlEscape(l.text)}</text>`);
  }
  out.push(`<g transform="translate(0 ${f(L.top)})">`);
  const { box } = g;
  for (const tk of g.yTicks) {
    out.push(`<line x1="${f(box.left)}" x2="${f(box.left + box.width)}" y1="${f(tk.pos)}" y2="${f(tk.pos)}" stroke="${xmlEscape(grid)}"/>`);
    out.push(`<text x="${f(box.left - 6)}" y="${f(tk.pos + 4)}" text-anchor="end" fill="${xmlEscape(muted)}">${xmlEscape(tk.text)}</text>`);
  }
  for (const tk of g.xTicks) {
    out.push(`<line x1="${f(tk.pos)}" x2="${f(tk.pos)}" y1="${f(box.top)}" y2="${f(box.top + box.height)}" stroke="${xmlEscape(grid)}"/>`);
    out.push(`<text x="${f(tk.pos)}" y="${f(box.top + box.height + 16)}" text-anchor="middle" fill="${xmlEscape(muted)}">${xmlEscape(tk.text)}</text>`);
  }
  if (g.xLabel) out.push(`<text x="${f(box.left + box.width / 2)}" y="${f(g.height - 4)}" text-anchor="middle" font-weight="600" fill="${xmlEscape(muted)}">${xmlEscape(g.xLabel)}</text>`);
  if (g.yLabel) out.push(`<text transform="translate(14 ${f(box.top + box.height / 2)}) rotate(-90)" text-anchor="middle" font-weight="600" fill="${xmlEscape(muted)}">${xmlEscape(g.yLabel)}</text>`);
  if (g.crossoverX !== null) {
    out.push(`<line x1="${f(g.crossoverX)}" x2="${f(g.crossoverX)}" y1="${f(box.top)}" y2="${f(box.top + box.height)}" stroke="${xmlEscape(muted)}" stroke-dasharray="2 3"/>`);
  }
  // Series stay inside the plot, as on the canvas (a log axis leaves short contexts' KV below it).
  out.push(`<clipPath id="plot-box"><rect x="${f(box.left)}" y="${f(box.top)}" width="${f(box.width)}" height="${f(box.height)}"/></clipPath>`);
  out.push('<g clip-path="url(#plot-box)">');
  for (const s of g.series) {
    if (!s.pts.length) continue;
    const d = s.pts.map(([x, y], k) => (k ? 'L' : 'M') + f(x) + ' ' + f(y)).join(' ');
    if (s.fill) {
      // Area charts: filled down to the x axis, in series order, under the line.
      const base = f(box.top + box.height);
      out.push(`<path d="${d} L${f(s.pts.at(-1)[0])} ${base} L${f(s.pts[0][0])} ${base} Z" fill="${xmlEscape(s.fill)}" stroke="none"/>`);
    }
    if (s.width > 0 || !s.fill) out.push(`<path d="${d}" fill="none" stroke="${xmlEscape(s.stroke)}" stroke-width="${s.width}"${s.dash ? ` stroke-dasharray="${s.dash.join(' ')}"` : ''}/>`);
  }
  out.push('</g>');
  out.push('</g>');
  L.rows.forEach((row, r) => {
    const ly = legendY(L, g.height, r);
    for (const it of row) {
      if (it.fill) out.push(`<rect x="${f(it.x + 3)}" y="${f(ly - 10)}" width="12" height="12" fill="${xmlEscape(it.fill)}" stroke="${xmlEscape(muted)}" stroke-width="0.5"/>`);
      else out.push(`<line x1="${f(it.x)}" x2="${f(it.x + 18)}" y1="${f(ly - 4)}" y2="${f(ly - 4)}" stroke="${xmlEscape(it.stroke)}" stroke-width="${it.width}"${it.dash ? ` stroke-dasharray="${it.dash.join(' ')}"` : ''}/>`);
      out.push(`<text x="${f(it.x + 24)}" y="${f(ly)}" fill="${xmlEscape(fg)}">${xmlEscape(it.label)}</text>`);
    }
  });
  out.push('</svg>');
  return out.join('\n') + '\n';
}

// The uPlot canvas already holds axes and lines; title, notes and legend (HTML in uPlot)
// are drawn around it, laid out as in the SVG.
export function chartPng(chart, title) {
  const u = chart.plot ?? chart;
  const src = u.ctx.canvas;
  const ratio = src.width / u.width || 1;
  const L = layout(chart, title, u.width);
  const plotH = src.height / ratio;
  const c = document.createElement('canvas');
  c.width = src.width;
  c.height = Math.round((L.top + plotH + L.legendH) * ratio);
  const ctx = c.getContext('2d');
  ctx.fillStyle = cssVar('--bg', '#ffffff');
  ctx.fillRect(0, 0, c.width, c.height);
  ctx.scale(ratio, ratio);
  const fg = cssVar('--fg', '#16181d');
  const muted = cssVar('--fg-muted', '#4a5160');
  for (const l of headerBaselines(L)) {
    ctx.font = l.font;
    ctx.fillStyle = l.title ? fg : muted;
    ctx.fillText(l.text, PAD, l.y);
  }
  ctx.drawImage(src, 0, L.top, u.width, plotH);
  ctx.font = FONT_TEXT;
  L.rows.forEach((row, r) => {
    const ly = legendY(L, plotH, r);
    for (const it of row) {
      if (it.fill) {
        ctx.fillStyle = it.fill;
        ctx.fillRect(it.x + 3, ly - 10, 12, 12);
        ctx.strokeStyle = muted;
        ctx.lineWidth = 0.5;
        ctx.strokeRect(it.x + 3, ly - 10, 12, 12);
      } else {
        ctx.strokeStyle = it.stroke;
        ctx.lineWidth = it.width;
        ctx.setLineDash(it.dash || []);
        ctx.beginPath();
        ctx.moveTo(it.x, ly - 4);
        ctx.lineTo(it.x + 18, ly - 4);
        ctx.stroke();
        ctx.setLineDash([]);
      }
      ctx.fillStyle = fg;
      ctx.fillText(it.label, it.x + 24, ly);
    }
  });
  return new Promise((resolve, reject) => c.toBlob((b) => (b ? resolve(b) : reject(new Error('toBlob failed'))), 'image/png'));
}
