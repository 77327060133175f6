// The admin page: lists the pitfall flags, switches them through /admin/flags, and waits until the
// owning service reports serving the new variant. No framework: DOM built with textContent only.
const keyInput = document.getElementById('key');
const tableBody = document.querySelector('#flags tbody');
const statusLine = document.getElementById('status');
let adminKey = sessionStorage.getItem('adminKey') ?? '';
keyInput.value = adminKey;

document.getElementById('key-form').addEventListener('submit', event => {
  event.preventDefault();
  adminKey = keyInput.value;
  sessionStorage.setItem('adminKey', adminKey);
  load();
});

document.querySelectorAll('[data-all]').forEach(button =>
  button.addEventListener('click', () => switchFlag(null, button.dataset.all)));

async function api(method, path, body) {
  const response = await fetch(path, {
    method,
    // X-Admin-Client: the audit record of each change says it came from this page.
    headers: { 'X-Admin-Key': adminKey, 'X-Admin-Client': 'admin-page', 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!response.ok) {
    const problem = await response.json().catch(() => ({ title: response.statusText }));
    throw new Error(`${response.status}: ${problem.title ?? response.statusText}`);
  }
  return response.status === 204 ? null : response.json();
}

async function load() {
  try {
    render(await api('GET', '/admin/flags'));
    show('');
  } catch (error) {
    show(error.message.startsWith('404') ? 'The admin API is off: the Gateway has no Admin:Key.' : error.message, true);
  }
}

function render(flags) {
  tableBody.replaceChildren(...flags.map(flag => {
    const row = document.createElement('tr');
    row.dataset.flag = flag.flag;
    row.append(
      cell(flag.flag, '', flag.variants.map(v => `${v.name}: ${v.does}`).join('\n')),
      cell(flag.service),
      cell(flag.variant, `variant file ${flag.variant}`),
      cell(flag.serving ?? 'not answering', `variant serving ${flag.serving ?? ''}`),
      switches(flag));
    return row;
  }));
  document.getElementById('flags').hidden = false;
  document.getElementById('all').hidden = false;
}

function cell(text, className = '', title = '') {
  const td = document.createElement('td');
  td.textContent = text;
  td.className = className;
  if (title) td.title = title;
  return td;
}

function switches(flag) {
  const td = document.createElement('td');
  for (const { name: variant, does } of flag.variants) {
    const button = document.createElement('button');
    button.type = 'button';
    button.textContent = variant;
    button.title = does;
    button.dataset.variant = variant;
    button.setAttribute('aria-pressed', String(flag.variant === variant));
    button.addEventListener('click', () => switchFlag(flag.flag, variant));
    td.append(button);
  }
  return td;
}

async function switchFlag(flag, variant) {
  try {
    await api('PUT', flag ? `/admin/flags/${encodeURIComponent(flag)}` : '/admin/flags', variant);
    show(`${flag ?? 'Every flag'} set to ${variant}; waiting for the services...`);
    for (let attempt = 0; attempt < 50; attempt++) {
      const flags = await api('GET', '/admin/flags');
      render(flags);
      if (flags.filter(f => flag === null || f.flag === flag).every(f => f.serving === servedFor(f, variant))) {
        show(`${flag ?? 'Every flag'} is now served ${variant}.`);
        return;
      }
      await new Promise(resolve => setTimeout(resolve, 200));
    }
    show(`${flag ?? 'Every flag'} was written, but a service has not switched yet.`, true);
  } catch (error) {
    show(error.message, true);
  }
}

// The rung a flag serves when asked for `variant`: that one, or optimized where the flag has no such rung.
function servedFor(flag, variant) {
  return flag.variants.some(v => v.name === variant) ? variant : 'optimized';
}

function show(message, isError = false) {
  statusLine.textContent = message;
  statusLine.classList.toggle('error', isError);
}

if (adminKey) load();
