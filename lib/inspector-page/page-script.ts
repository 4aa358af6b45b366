/**
 * The inspector page's script (inline in the page, allowed by its hash): it fetches the API every
 * 1.5 s, counts leases down between fetches, and writes every value as text (`textContent`).
 */
export const SCRIPT = `
(function () {
  'use strict';
  var body = document.body;
  var unlockAllowed = body.getAttribute('data-allow-unlock') === 'true';
  var base = location.pathname.replace(/\\/+$/, '') + '/api/';
  var REFRESH = 1500;
  var matchInput = document.getElementById('match');
  var status = document.getElementById('status');
  var locksBody = document.querySelector('#locks tbody');
  var clientsBody = document.querySelector('#clients tbody');
  var timer = 0;
  var countdowns = [];
  var fetchedAt = 0;

  function el(tag, className, text) {
    var node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  }

  function cell(row, className, content) {
    var td = el('td', className);
    if (content instanceof Node) td.appendChild(content);
    else if (content !== undefined && content !== null) td.textContent = String(content);
    row.appendChild(td);
    return td;
  }

  function pattern() {
    var text = matchInput.value.trim();
    if (text === '') return '*';
    return /[*?[]/.test(text) ? text : '*' + text + '*';
  }

  function formatTtl(ms) {
    if (ms === 'Infinity') return 'no lease';
    if (ms === null || ms === undefined) return '';
    if (ms <= 0) return '0.0 s';
    if (ms < 60000) return (ms / 1000).toFixed(1) + ' s';
    var s = Math.floor(ms / 1000);
    if (s < 3600) return Math.floor(s / 60) + ' min ' + (s % 60) + ' s';
    return Math.floor(s / 3600) + ' h ' + Math.floor((s % 3600) / 60) + ' min';
  }

  function describeClient(client, clientId) {
    if (!client) return el('span', 'unknown', 'unknown client ' + String(clientId).slice(0, 8));
    var span = el('span', 'client', client.app + ' on ' + client.host + ', pid ' + client.pid);
    span.title = 'client ' + clientId + ', version ' + client.version;
    return span;
  }

  function holdersOf(lock) {
    var box = document.createDocumentFragment();
    if (lock.holders.length === 0) box.appendChild(el('span', 'muted', 'none'));
    lock.holders.forEach(function (holder) {
      var line = el('div', 'holder');
      line.appendChild(describeClient(holder.client, holder.clientId));
      var notes = [];
      if (holder.mode) notes.push(holder.mode);
      if (holder.holdCount > 1) notes.push('x' + holder.holdCount);
      if (holder.kept) notes.push('kept');
      if (notes.length) line.appendChild(el('span', 'mode', notes.join(', ')));
      box.appendChild(line);
    });
    return box;
  }

  function permitsOf(lock) {
    if (!lock.permits) return '';
    return lock.permits.used + ' used / ' + lock.permits.free + ' free';
  }

  function unlock(key, button) {
    if (!window.confirm('Force unlock "' + key + '"? Its holders lose it.')) return;
    button.disabled = true;
    fetch(base + 'locks/' + encodeURIComponent(key), {
      method: 'DELETE',
      headers: { 'X-Lock-Inspector': 'unlock' },
      credentials: 'same-origin',
    })
      .then(function (response) {
        return response.json().then(function (answer) {
          if (!response.ok) throw new Error(answer.message || response.status);
          say((answer.unlocked ? 'Unlocked ' : 'Nothing held under ') + key, false);
        });
      })
      .catch(function (error) {
        say('Unlock failed: ' + error.message, true);
      })
      .then(refreshSoon);
  }

  function renderLocks(answer) {
    var rows = document.createDocumentFragment();
    countdowns = [];
    answer.locks.forEach(function (lock) {
      var row = el('tr');
      row.setAttribute('data-key', lock.key);
      cell(row, 'key', lock.key);
      cell(row, 'kind-cell', el('span', 'kind', lock.kind));
      cell(row, 'holders', holdersOf(lock));
      var ttl = cell(row, 'ttl num', formatTtl(lock.ttl));
      if (typeof lock.ttl === 'number') countdowns.push({ node: ttl, ttl: lock.ttl });
      cell(row, 'waiting num', lock.waiting);
      cell(row, 'queue num', lock.kind === 'fair' ? lock.queue.length : '');
      cell(row, 'permits num', permitsOf(lock));
      if (unlockAllowed) {
        var button = el('button', 'unlock', 'Unlock');
        button.type = 'button';
        button.addEventListener('click', function () {
          unlock(lock.key, button);
        });
        cell(row, 'action', button);
      }
      rows.appendChild(row);
    });
    if (answer.locks.length === 0) {
      var none = el('tr');
      var td = cell(none, 'empty', 'No lock held' + (pattern() === '*' ? '.' : ' matches ' + pattern() + '.'));
      td.colSpan = unlockAllowed ? 8 : 7;
      rows.appendChild(none);
    }
    locksBody.replaceChildren(rows);
    fetchedAt = performance.now();
  }

  function renderClients(clients) {
    var rows = document.createDocumentFragment();
    clients.forEach(function (entry) {
      var row = el('tr');
      var client = entry.client;
      cell(row, 'app', client ? client.app : el('span', 'unknown', 'unknown client'));
      cell(row, 'host', client ? client.host : '');
      cell(row, 'pid num', client ? client.pid : '');
      cell(row, 'version', client ? client.version : '');
      cell(row, 'uptime num', client ? formatTtl(Date.now() - client.startedAt) : '');
      cell(row, 'locks num', entry.locks);
      cell(row, 'id', entry.clientId);
      rows.appendChild(row);
    });
    if (clients.length === 0) {
      var none = el('tr');
      cell(none, 'empty', 'No client registered.').colSpan = 7;
      rows.appendChild(none);
    }
    clientsBody.replaceChildren(rows);
  }

  function tick() {
    var elapsed = performance.now() - fetchedAt;
    countdowns.forEach(function (countdown) {
      countdown.node.textContent = formatTtl(Math.max(0, countdown.ttl - elapsed));
    });
  }

  function say(text, bad) {
    status.textContent = text;
    status.className = bad ? 'error' : '';
  }

  function get(path) {
    return fetch(base + path, { credentials: 'same-origin', cache: 'no-store' }).then(
      function (response) {
        return response.json().then(function (answer) {
          if (!response.ok) throw new Error(response.status + ': ' + (answer.message || ''));
          return answer;
        });
      },
    );
  }

  function refresh() {
    clearTimeout(timer);
    var query = 'locks?match=' + encodeURIComponent(pattern());
    // Both tables in one refresh: the clients' lock counts match the locks shown.
    Promise.all([get(query), get('clients')])
      .then(function (answers) {
        renderLocks(answers[0]);
        renderClients(answers[1].clients);
        document.getElementById('locks').classList.remove('stale');
        say(answers[0].locks.length + ' held, updated ' + new Date().toLocaleTimeString(), false);
      })
      .catch(function (error) {
        document.getElementById('locks').classList.add('stale');
        say('Cannot refresh: ' + error.message, true);
      })
      .then(function () {
        timer = setTimeout(refresh, REFRESH);
      });
  }

  function refreshSoon() {
    clearTimeout(timer);
    timer = setTimeout(refresh, 0);
  }

  var initial = new URLSearchParams(location.search).get('match');
  if (initial) matchInput.value = initial;
  var typing = 0;
  matchInput.addEventListener('input', function () {
    clearTimeout(typing);
    typing = setTimeout(function () {
      var url = new URL(location.href);
      if (matchInput.value.trim()) url.searchParams.set('match', matchInput.value.trim());
      else url.searchParams.delete('match');
      history.replaceState(null, '', url);
      refreshSoon();
    }, 250);
  });
  document.getElementById('filter').addEventListener('submit', function (event) {
    event.preventDefault();
    refreshSoon();
  });
  setInterval(tick, 200);
  refresh();
})();
`;
