'use strict';
// The Sluice console: reads policies (JSON) every refreshSeconds, renders them, and sends the
// operator's resets and overrides. Served from the console's own path: no inline script, no
// external asset, so that Content-Security-Policy default-src 'self' passes.
(function () {
  const SVG = 'http://www.w3.org/2000/svg';
  const main = document.getElementById('policies');
  const status = document.getElementById('status');
  const raw = document.getElementById('raw');
  const sections = new Map();
  let refresh = 2;

  function text(node, value) { node.textContent = value == null ? '' : String(value); }

  function describe(limit) {
    return limit.limit + (limit.algorithm === 'token-bucket' || limit.algorithm === 'gcra'
      ? ' burst ' + limit.burst : '') + ' (' + limit.algorithm + ')';
  }

  async function send(method, path, fields) {
    const body = new URLSearchParams(fields || {});
    const response = await fetch(path, {
      method: method, body: method === 'DELETE' ? null : body, credentials: 'same-origin',
      headers: method === 'DELETE' ? {} : { 'Content-Type': 'application/x-www-form-urlencoded' }
    });
    const json = await response.json();
    if (!response.ok) { throw new Error(json.error || response.statusText); }
    return json;
  }

  function chart(svg, allowed, refused) {
    while (svg.firstChild) { svg.removeChild(svg.firstChild); }
    const n = allowed.length;
    let max = 1;
    for (let i = 0; i < n; i++) { max = Math.max(max, allowed[i] + refused[i]); }
    for (let i = 0; i < n; i++) {
      const x = i * 240 / n;
      const a = allowed[i] * 58 / max;
      const r = refused[i] * 58 / max;
      for (const [height, y, colour] of [[a, 60 - a, '#2a2'], [r, 60 - a - r, '#d22']]) {
        if (height <= 0) { continue; }
        const bar = document.createElementNS(SVG, 'rect');
        bar.setAttribute('x', x.toFixed(2));
        bar.setAttribute('y', y.toFixed(2));
        bar.setAttribute('width', (240 / n).toFixed(2));
        bar.setAttribute('height', height.toFixed(2));
        bar.setAttribute('fill', colour);
        svg.appendChild(bar);
      }
    }
    const label = document.createElementNS(SVG, 'text');
    label.setAttribute('x', '2');
    label.setAttribute('y', '9');
    label.setAttribute('font-size', '8');
    label.textContent = 'max ' + max + '/s';
    svg.appendChild(label);
  }

  function section(policy) {
    let node = sections.get(policy.name);
    if (node) { return node; }
    node = document.getElementById('policy').content.firstElementChild.cloneNode(true);
    node.dataset.policy = policy.name;
    // A tier's policy (api/gold) is two path segments: containers refuse an encoded slash (%2F).
    const path = 'policies/' + policy.name.split('/').map(encodeURIComponent).join('/');
    const message = node.querySelector('.message');
    const report = (ok, what) => { message.className = ok ? 'message' : 'message error'; text(message, what); };
    node.querySelector('form.reset').addEventListener('submit', async (event) => {
      event.preventDefault();
      try {
        const done = await send('POST', path + '/reset', { caller: event.target.caller.value });
        report(true, 'Reset ' + done.reset.join(', '));
      } catch (e) { report(false, e.message); }
      load();
    });
    node.querySelector('form.set-override').addEventListener('submit', async (event) => {
      event.preventDefault();
      const fields = { limit: event.target.limit.value };
      if (event.target.burst.value) { fields.burst = event.target.burst.value; }
      try {
        const view = await send('PUT', path + '/override', fields);
        report(true, 'Override set: ' + describe(view.effective));
      } catch (e) { report(false, e.message); }
      load();
    });
    node.querySelector('.clear-override').addEventListener('click', async () => {
      try {
        const view = await send('DELETE', path + '/override');
        report(true, 'Override cleared: ' + describe(view.effective));
      } catch (e) { report(false, e.message); }
      load();
    });
    main.appendChild(node);
    sections.set(policy.name, node);
    return node;
  }

  function render(policy) {
    const node = section(policy);
    text(node.querySelector('.name'), policy.name);
    const limit = node.querySelector('.limit');
    text(limit, describe(policy.effective));
    const override = policy.override;
    // An override the application cannot apply is not in force: the configured limit decides.
    const inForce = override && override.applied !== false;
    limit.className = inForce ? 'limit overridden' : 'limit';
    text(node.querySelector('.configured'), describe(policy.configured));
    const shown = node.querySelector('.override');
    text(shown, override
      ? override.limit + (override.burst ? ' burst ' + override.burst : '')
        + ' by ' + override.by + ' at ' + override.at
        + (override.applied === false ? ' (NOT APPLIED: ' + override.notApplied + ')' : '')
        + (override.configuredChanged ? ' (set when ' + override.configuredWhenSet.limit + ' burst '
          + override.configuredWhenSet.burst + ' was configured; the configuration changed since)' : '')
      : 'none');
    shown.className = override && (override.applied === false || override.configuredChanged)
      ? 'override attention' : 'override';
    text(node.querySelector('.routes'), policy.routes.join(', '));
    text(node.querySelector('.key'), policy.key);
    const store = node.querySelector('.store');
    text(store, policy.store + ', failure mode ' + policy.failureMode + ', circuit ' + policy.circuit);
    store.className = policy.circuit === 'open' ? 'store circuit-open' : 'store';
    text(node.querySelector('.counts'), Object.entries(policy.counts).filter(([, n]) => n > 0)
      .map(([outcome, n]) => outcome + ' ' + n).join(', ') || 'none yet');
    chart(node.querySelector('.chart'), policy.allowedPerSecond, policy.refusedPerSecond);
    const top = node.querySelector('.top');
    while (top.firstChild) { top.removeChild(top.firstChild); }
    for (const refused of policy.topRefused) {
      const item = document.createElement('li');
      text(item, (refused.identity || refused.partition) + ': ' + refused.count);
      top.appendChild(item);
    }
  }

  async function load() {
    try {
      const response = await fetch('policies' + (raw.checked ? '?raw=true' : ''), { credentials: 'same-origin' });
      const json = await response.json();
      if (!response.ok) { throw new Error(json.error || response.statusText); }
      refresh = json.refreshSeconds || refresh;
      json.policies.forEach(render);
      text(status, json.policies.length + ' policies, updated ' + new Date().toLocaleTimeString());
      status.className = '';
    } catch (e) {
      text(status, 'Cannot read the policies: ' + e.message);
      status.className = 'error';
    }
  }

  raw.addEventListener('change', load);
  load();
  setInterval(load, refresh * 1000);
}());
