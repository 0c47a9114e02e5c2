// KV cache vs. context, drawn with uPlot (bundled; nothing loaded from other hosts).
// Loaded after the first answer (lazy.js); uPlot's style sheet is in app.css (build-site.mjs).
// All y values come from the core's compute() result.
import uPlot from 'uplot';
import { bytes, tokens } from './format.js';
import { t } from './i18n.js';

function cssVar(name, fallback) {
  const v = getComputedStyle(document.documentElement).getPropertyValue(name).trim();
  return v || fallback;
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
    this.data = { series, labels, crossover: chart.crossoverContext || 0 };
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
    const opts = {
      width,
      height,
      scales: { x: { distr: 3, log: 2, time: false }, y: { range: (u, min, max) => [0, max * 1.05 || 1] } },
      legend: { show: true },
      cursor: { drag: { x: false, y: false } },
      axes: [
        { stroke: axisColor, grid: { stroke: gridColor }, values: (u, vals) => vals.map((v) => (v == null ? '' : tokens(v))), label: t('chart.x') },
        { stroke: axisColor, grid: { stroke: gridColor }, size: 80, values: (u, vals) => vals.map((v) => (v == null ? '' : bytes(v))) },
      ],
      series: [
        { label: t('chart.x'), value: (u, v) => (v == null ? '' : tokens(v)) },
        ...this.data.labels.map((label, i) => ({
          label,
          stroke: colors[i],
          width: i === 0 ? 2.5 : 1.5,
          dash: i === 0 ? undefined : [6, 4],
          value: (u, v) => (v == null ? '' : bytes(v)),
          points: { show: false },
        })),
      ],
      hooks: {
        draw: [
          (u) => {
            const crossover = self.data.crossover;
            if (!crossover) return;
            const x = u.valToPos(crossover, 'x', true);
            if (!(x >= u.bbox.left && x <= u.bbox.left + u.bbox.width)) return;
            const c = u.ctx;
            c.save();
            c.strokeStyle = axisColor;
            c.setLineDash([2, 3]);
            c.beginPath();
            c.moveTo(x, u.bbox.top);
            c.lineTo(x, u.bbox.top + u.bbox.height);
            c.stroke();
            c.restore();
          },
        ],
      },
    };
    // Same series and size: only the data changed (a control moved), so keep the plot.
    const shape = `${width}x${height}:${this.data.labels.join('|')}:${colors.join('|')}`;
    if (this.plot && this.shape === shape && this.plot.root.isConnected) {
      this.plot.setData(this.data.series);
      return;
    }
    this.shape = shape;
    if (this.plot) this.plot.destroy();
    this.plot = new uPlot(opts, this.data.series, this.container);
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
