// The landing page: polls GET /live every 2 s and redraws the flags and the last minute per route and
// variant. No framework: DOM built with textContent only.
const flagsBody = document.querySelector('#flags tbody');
const routesBody = document.querySelector('#routes tbody');
const statusLine = document.getElementById('status');

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
    cell(row, flag.variant === 'naive' ? flag.naive : flag.optimized);
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

  statusLine.textContent = live.routes.length === 0
    ? `No requests through the Gateway in the last ${live.windowSeconds} s: start LoadGen from the dashboard, or open a link above.`
    : `Updated ${new Date().toLocaleTimeString('en')}; the window is the last ${live.windowSeconds} s.`;
  statusLine.className = '';
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
