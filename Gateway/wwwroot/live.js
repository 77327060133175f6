// The landing page: polls GET /live every 2 s and redraws the flags, the last minute per route and mode, the
// replicas the Gateway routes to, and a chart per route (each mode's median per 5 s slot). No framework: DOM built
// with textContent only.
const flagsBody = document.querySelector('#flags tbody');
const routesBody = document.querySelector('#routes tbody');
const destinationsBody = document.querySelector('#destinations tbody');
const statusLine = document.getElementById('status');
const charts = document.getElementById('charts');
const svgNs = 'http://www.w3.org/2000/svg';
const modeColors = { naive: '#b3261e', streaming: '#1f5fa8', optimized: '#146c2e', mixed: '#b7791f' };
const otherColors = ['#7b3fa0', '#4a4a4a'];

function cell(row, text, className) {
  const td = row.insertCell();
  td.textContent = text;
  if (className) td.className = className;
  return td;
}

function render(live) {
  flagsBody.replaceChildren();
  for (const flag of live.flags) {
    const row = flagsBody.insertRow();
    row.dataset.flag = flag.flag;
    cell(row, flag.flag);
    cell(row, flag.service);
    cell(row, flag.variant, `variant ${flag.variant}`);
    cell(row, flag.does ?? '', 'does');
  }

  routesBody.replaceChildren();
  for (const route of live.routes) {
    const row = routesBody.insertRow();
    row.dataset.route = route.route;
    row.dataset.variant = route.variant;
    cell(row, route.route);
    cell(row, route.path, 'path');
    cell(row, route.variant, `variant ${route.variant}`);
    cell(row, route.requests.toLocaleString('en'), 'requests');
    cell(row, route.p50Ms.toLocaleString('en'));
    cell(row, route.p99Ms.toLocaleString('en'));
    cell(row, route.megabytesPerSecond.toLocaleString('en'));
    cell(row, route.servedBy);
  }

  destinationsBody.replaceChildren();
  for (const destination of live.destinations) {
    const row = destinationsBody.insertRow();
    cell(row, destination.cluster);
    cell(row, destination.address, 'path');
    cell(row, destination.active);
    cell(row, destination.passive);
    cell(row, destination.available ? 'yes' : 'no', destination.available ? '' : 'variant naive');
  }

  renderCharts(live);

  statusLine.textContent = live.routes.length === 0
    ? `No requests through the Gateway in the last ${live.windowSeconds} s: start LoadGen from the dashboard, or open a link above.`
    : `Updated ${new Date().toLocaleTimeString('en')}; the window is the last ${live.windowSeconds} s.`;
  statusLine.className = '';
}

function svg(parent, name, attributes) {
  const element = document.createElementNS(svgNs, name);
  for (const [key, value] of Object.entries(attributes)) element.setAttribute(key, value);
  parent.appendChild(element);
  return element;
}

// One chart per route: x is the last minute in 5 s slots, y the median in ms from 0 to the route's highest
// slot; each mode that served the route is one line (a dot where a slot stands alone).
function renderCharts(live) {
  charts.replaceChildren();
  const width = 440, height = 150, left = 52, right = 10, top = 10, bottom = 24;
  const routes = [...new Set(live.routes.map(r => r.route))];
  for (const route of routes) {
    const rows = live.routes.filter(r => r.route === route);
    const slots = rows[0].p50MsBySlot.length;
    const max = Math.max(...rows.flatMap(r => r.p50MsBySlot.filter(v => v !== null))) * 1.1 || 1;
    const x = i => left + (i + 0.5) * (width - left - right) / slots;
    const y = v => top + (height - top - bottom) * (1 - v / max);

    const figure = document.createElement('figure');
    figure.className = 'chart';
    const caption = document.createElement('figcaption');
    caption.textContent = `${route} (${rows[0].path})`;
    figure.appendChild(caption);
    const chart = svg(figure, 'svg', { width, height, viewBox: `0 0 ${width} ${height}`, 'data-route': route, role: 'img' });
    svg(chart, 'line', { x1: left, y1: y(0), x2: width - right, y2: y(0), stroke: '#999' });
    svg(chart, 'line', { x1: left, y1: top, x2: left, y2: y(0), stroke: '#999' });
    svg(chart, 'text', { x: left - 4, y: top + 8, 'text-anchor': 'end', 'font-size': 11 }).textContent = `${Math.round(max)} ms`;
    svg(chart, 'text', { x: left - 4, y: y(0), 'text-anchor': 'end', 'font-size': 11 }).textContent = '0';
    svg(chart, 'text', { x: left, y: height - 6, 'font-size': 11 }).textContent = `-${live.windowSeconds} s`;
    svg(chart, 'text', { x: width - right, y: height - 6, 'text-anchor': 'end', 'font-size': 11 }).textContent = 'now';

    rows.forEach((row, index) => {
      const color = modeColors[row.variant] ?? otherColors[index % otherColors.length];
      const points = row.p50MsBySlot.map((v, i) => v === null ? null : `${x(i)},${y(v)}`);
      // A gap (a slot with no request of this mode) breaks the line.
      const runs = points.reduce((all, p) => { if (p === null) all.push([]); else all[all.length - 1].push(p); return all; }, [[]]);
      for (const run of runs.filter(r => r.length > 0)) {
        svg(chart, 'polyline', { points: run.join(' '), fill: 'none', stroke: color, 'stroke-width': 2, 'data-variant': row.variant });
        if (run.length === 1) {
          const [cx, cy] = run[0].split(',');
          svg(chart, 'circle', { cx, cy, r: 3, fill: color });
        }
      }

      const legend = document.createElement('span');
      legend.className = 'legend';
      legend.style.color = color;
      legend.textContent = row.variant;
      caption.appendChild(legend);
    });
    charts.appendChild(figure);
  }
}

async function refresh() {
  try {
    const response = await fetch('live', { cache: 'no-store' });
    if (!response.ok) throw new Error(`${response.status} ${response.statusText}`);
    render(await response.json());
  } catch (error) {
    statusLine.textContent = `Could not load /live: ${error.message}`;
    statusLine.className = 'error';
  }
}

refresh();
setInterval(refresh, 2000);
