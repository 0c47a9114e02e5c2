// KV cache vs. context, drawn with uPlot (bundled; nothing loaded from other hosts).
// Loaded after the first answer (lazy.js); uPlot's style sheet is in the page's (index.html, build-site.mjs).
// All y values come from the core's compute() result.
import uPlot from 'uplot';
import { bytes, int, tokens } from './format.js';
import { t } from './i18n.js';

function cssVar(name, fallback) {
  const v = getComputedStyle(document.documentElement).getPropertyValue(name).trim();
  return v || fallback;
}

// Ticks at consecutive powers of two (…, 4 GiB, 8 GiB, 16 GiB, …) on a log2 axis, the
// top one at or above the largest value and at most `most` of them: the weights and
// GPU-memory lines keep their place at every context instead of being flattened by the
// KV curve's largest value; the KV of short contexts may start below the axis.
export function binaryTicks(min, max, most, keep = max) {
  const hi = Math.ceil(Math.log2(Math.max(2, max)));
  // The horizontal lines (`keep`: the lowest of them) always lie inside.
  const lo = Math.min(Math.floor(Math.log2(Math.max(1, keep))), Math.max(Math.floor(Math.log2(Math.max(1, min))), hi - (most - 1)));
  const stride = Math.ceil((hi - lo + 1) / most);
  const out = [];
  for (let e = hi - Math.ceil((hi - lo) / stride) * stride; e <= hi; e += stride) out.push(2 ** e);
  return out;
}

// "4 GiB", "512 MiB": a power of two in the largest binary unit it is whole in.
export function binaryLabel(v) {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB'];
  let i = 0;
  while (i < units.length - 1 && v >= 1024) {
    v /= 1024;
    i++;
  }
  return int(v) + ' ' + units[i];
}

export class KvChart {
  constructor(container) {
    this.container = container;
    this.plot = null;
    this.ro = null;
    this.data = null;
    // Colours come from CSS variables: redraw when the theme changes.
    const recolor = () => {
      this.colors = null;
      this.redraw();
    };
    document.addEventListener('kvbudget:theme', recolor);
    window.matchMedia?.('(prefers-color-scheme: dark)').addEventListener?.('change', recolor);
  }

  update(chart) {
    const xs = chart.contexts;
    const series = [xs, chart.kvBytes];
    const labels = [t('chart.kv')];
    if (chart.weightsBytes > 0) {
      series.push(xs.map(() => chart.weightsBytes));
      labels.push(t('chart.weights'));
    }
    if (chart.capacityBytes > 0) {
      series.push(xs.map(() => chart.capacityBytes));
      labels.push(t('chart.capacity'));
    }
    // The crossover is only quoted inside the model's range (render.js passes 0 past it).
    this.data = { series, labels, crossover: chart.crossoverContext || 0, context: chart.context || 0, contextKvBytes: chart.contextKvBytes, memoryLimit: chart.memoryLimit || 0 };
    this.redraw();
  }

  redraw() {
    if (!this.data) return;
    // Layout and style reads in the middle of an update force the browser to lay the page
    // out there and then (on every slider step): the width is measured for a new plot and
    // then kept up to date by the ResizeObserver, the colours are read once per theme.
    if (!this.width || !this.plot) this.width = Math.max(240, this.container.clientWidth || 320);
    this.colors ||= {
      series: [cssVar('--c-kv', '#2563eb'), cssVar('--c-weights', '#b45309'), cssVar('--c-capacity', '#b91c1c')],
      axis: cssVar('--fg-muted', '#555'),
      grid: cssVar('--grid', '#ddd'),
    };
    const width = this.width;
    const height = Math.min(320, Math.max(200, Math.round(width * 0.5)));
    const colors = this.colors.series;
    const axisColor = this.colors.axis;
    const gridColor = this.colors.grid;
    const self = this;
    const all = this.data.series.slice(1).flat().filter((v) => v > 0);
    const lines = this.data.series.slice(2).map((x) => x[0]).filter((v) => v > 0);
    const ticks = binaryTicks(Math.min(...all), Math.max(...all), height < 260 ? 6 : 8, lines.length ? Math.min(...lines) : Math.max(...all));
    const yMin = ticks[0], yMax = ticks[ticks.length - 1];
    if (this.container.dataset.yTicks !== ticks.join(',')) this.container.dataset.yTicks = ticks.join(',');
    // The legend shows the values at the chosen context until the pointer picks another.
    // The point is read when the legend is drawn, so a new context alone (a slider step)
    // only redraws the legend, never the plot.
    const xs = this.data.series[0];
    this.at = xs.length - 1;
    for (let i = 0; i < xs.length; i++) if (xs[i] <= this.data.context) this.at = i;
    // With no pointer, the chosen context itself, usually between two of the curve's points: the
    // x and KV values are the answer's own (the lines across are the same at every context).
    const legendValue = (fmt) => (u, v, si, idx) => {
      const chosen = idx == null && self.data.context > 0 && self.data.contextKvBytes != null;
      const val = chosen && si === 0 ? self.data.context : chosen && si === 1 ? self.data.contextKvBytes
        : idx == null ? u.data[si]?.[self.at] : v;
      return val == null ? '' : fmt(val);
    };
    const yLabelWidth = Math.max(...ticks.map((v) => binaryLabel(v).length));
    const opts = {
      width,
      height,
      scales: { x: { distr: 3, log: 2, time: false }, y: { distr: 3, log: 2, range: () => [yMin, yMax] } },
      legend: { show: true, live: true },
      cursor: { drag: { x: false, y: false } },
      axes: [
        { stroke: axisColor, grid: { stroke: gridColor }, values: (u, vals) => vals.map((v) => (v == null ? '' : tokens(v))), label: t('chart.x') },
        { stroke: axisColor, grid: { stroke: gridColor }, size: 16 + yLabelWidth * 8, splits: () => ticks, values: (u, vals) => vals.map((v) => (v == null ? '' : binaryLabel(v))) },
      ],
      series: [
        { label: t('chart.x'), value: legendValue(tokens) },
        ...this.data.labels.map((label, i) => ({
          label,
          stroke: colors[i],
          width: i === 0 ? 2.5 : 1.5,
          dash: i === 0 ? undefined : [6, 4],
          value: legendValue(bytes),
          points: { show: false },
        })),
      ],
      hooks: {
        draw: [
          (u) => {
            const mark = (ctx, color, dash, label) => {
              const x = u.valToPos(ctx, 'x', true);
              if (!(x >= u.bbox.left && x <= u.bbox.left + u.bbox.width)) return;
              const c = u.ctx;
              c.save();
              c.strokeStyle = color;
              c.setLineDash(dash);
              c.beginPath();
              c.moveTo(x, u.bbox.top);
              c.lineTo(x, u.bbox.top + u.bbox.height);
              c.stroke();
              if (label) {
                c.setLineDash([]);
                c.fillStyle = color;
                c.font = `${Math.round(11 * devicePixelRatio)}px system-ui, sans-serif`;
                const w = c.measureText(label).width;
                const right = x + 4 + w <= u.bbox.left + u.bbox.width;
                c.textAlign = right ? 'left' : 'right';
                c.fillText(label, right ? x + 4 : x - 4, u.bbox.top + 12 * devicePixelRatio);
              }
              c.restore();
            };
            if (self.data.crossover) mark(self.data.crossover, axisColor, [2, 3], '');
            // Where the KV cache no longer fits beside the weights and overheads.
            const limit = self.data.memoryLimit;
            const xMax = u.scales.x.max;
            if (limit && limit <= xMax) mark(limit, colors[2], [4, 2], t('chart.memoryFull', { ctx: tokens(limit) }));
            else if (limit) {
              // Past the drawn range: said at the right edge.
              const c = u.ctx;
              c.save();
              c.fillStyle = colors[2];
              c.font = `${Math.round(11 * devicePixelRatio)}px system-ui, sans-serif`;
              c.textAlign = 'right';
              c.fillText(t('chart.memoryFull', { ctx: tokens(limit) }) + ' →', u.bbox.left + u.bbox.width - 4, u.bbox.top + 12 * devicePixelRatio);
              c.restore();
            }
          },
        ],
      },
    };
    // Same series and size: only the data changed (a control moved), so keep the plot.
    const shape = `${width}x${height}:${this.data.labels.join('|')}:${colors.join('|')}:${ticks.join(',')}:${this.data.memoryLimit}:${this.data.crossover}`;
    if (this.plot && this.shape === shape && this.plot.root.isConnected) {
      // Redrawing the canvas is most of a slider step's cost; the curves move only when
      // the model or the settings that scale them change.
      const key = this.data.series.map((s) => s.join(',')).join(';');
      if (key !== this.drawn) {
        this.drawn = key;
        this.plot.setData(this.data.series);
      }
      this.plot.setLegend({ idx: null });
      return;
    }
    this.drawn = this.data.series.map((s) => s.join(',')).join(';');
    this.shape = shape;
    if (this.plot) this.plot.destroy();
    this.plot = new uPlot(opts, this.data.series, this.container);
    this.plot.setLegend({ idx: null });
    this.container.dataset.memoryLimit = String(this.data.memoryLimit);
    if (!this.ro && typeof ResizeObserver !== 'undefined') {
      let last = width;
      this.ro = new ResizeObserver(() => {
        const w = this.container.clientWidth;
        if (Math.abs(w - last) > 8) {
          last = w;
          this.width = Math.max(240, w || 320);
          this.redraw();
        }
      });
      this.ro.observe(this.container);
    }
  }
}
