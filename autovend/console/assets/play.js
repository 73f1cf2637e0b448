// autovend console, play: each tool form becomes a JSON object posted to /api/tools/<name>; the call's result, as
// tables (fragment/calls/last), appears at the top of the left column, and the state panel reloads. After the last
// end_day the state panel says the run is being scored and polls until the report is written, then the page
// reloads as the finished page (which has no tool forms, hence no schemas).
(function () {
  var schemasEl = document.getElementById('tool-schemas');
  var schemas = schemasEl ? JSON.parse(schemasEl.textContent) : {};
  var csrfEl = document.querySelector('meta[name="autovend-csrf"]');
  var csrf = csrfEl ? csrfEl.content : '';  // every POST carries it
  var out = document.getElementById('result');
  var panel = document.getElementById('result-panel');
  var status = document.getElementById('result-status');

  function scalar(input, schema) {
    var raw = input.type === 'checkbox' ? (input.checked ? 'true' : '') : input.value;
    if (raw === '') return undefined;
    if (schema.type === 'integer' || schema.type === 'number') {
      var n = Number(raw);
      return isNaN(n) ? raw : n;  // the tool's own check explains a bad number
    }
    if (schema.type === 'boolean') return raw === 'true';
    return raw;
  }

  function collect(form, schema) {
    var args = {};
    Object.keys(schema.properties || {}).forEach(function (key) {
      var prop = schema.properties[key];
      if (prop.type === 'array' && prop.items && prop.items.type === 'object') {
        var rows = [];
        form.querySelectorAll('[data-array="' + key + '"] tr.row').forEach(function (tr) {
          var item = {};
          Object.keys(prop.items.properties).forEach(function (sub) {
            var input = tr.querySelector('[data-key="' + sub + '"]');
            var v = input ? scalar(input, prop.items.properties[sub]) : undefined;
            if (v !== undefined) item[sub] = v;
          });
          if (Object.keys(item).length) rows.push(item);
        });
        if (rows.length) args[key] = rows;
        return;
      }
      var input = form.querySelector('[data-key="' + key + '"]');
      var v = input ? scalar(input, prop) : undefined;
      if (v !== undefined) args[key] = v;
    });
    return args;
  }

  function show(text, css) {
    if (!status) return;
    status.textContent = text;
    status.className = 'status ' + css;
  }

  function playStatus() { return document.getElementById('play-status'); }

  function isLastDay() {
    var s = playStatus();
    return !!s && s.dataset.day === s.dataset.days && s.dataset.finished !== 'true';
  }

  var watching = null;
  function watchScoring() {  // poll the state until the run folder is complete, then show the finished page
    if (watching) return;
    watching = setInterval(function () {
      refresh().then(function () {
        var s = playStatus();
        if (s && s.dataset.finished === 'true') {
          clearInterval(watching);
          location.reload();
        }
      });
    }, 1000);
  }

  function refresh() {
    return fetch('fragment/state').then(function (r) { return r.text(); }).then(function (html) {
      document.getElementById('state').innerHTML = html;
      var head = document.getElementById('state-head');
      if (head) document.getElementById('head-line').innerHTML = head.innerHTML;
    });
  }

  document.querySelectorAll('form.tool-form').forEach(function (form) {
    form.addEventListener('submit', function (e) {
      e.preventDefault();
      var name = form.dataset.tool;
      var args = collect(form, schemas[name]);
      var button = form.querySelector('button[type=submit]');
      button.disabled = true;
      var last = name === 'end_day' && isLastDay();
      show(last ? 'end_day: the last day, scoring the run and writing the report …' : name + ' …', '');
      if (last) setTimeout(watchScoring, 500);  // the end_day answer comes once the report is written
      fetch('api/tools/' + name, {
        method: 'POST', headers: {'Content-Type': 'application/json', 'X-AutoVend-CSRF': csrf},
        body: JSON.stringify(args)
      }).then(function (r) {
        panel.hidden = false;
        if (!r.ok) {  // refused at the door (409 over, 413 too large, ...): nothing was run or recorded
          return r.json().then(function (body) {
            show(name + ': not sent (HTTP ' + r.status + ')', 'error');
            out.innerHTML = '';
            var p = document.createElement('p');
            p.className = 'error refusal';
            p.textContent = body.error || ('HTTP ' + r.status);
            out.appendChild(p);
            panel.scrollIntoView({block: 'start'});
          });
        }
        return fetch('fragment/calls/last').then(function (f) { return f.text(); }).then(function (html) {
          out.innerHTML = html;
          var last = out.querySelector('.last-call');
          var css = last ? last.dataset.status : 'error';
          var text = last ? last.querySelector('.status-line span').textContent : '?';
          show(name + ': ' + text, css);
          panel.scrollIntoView({block: 'start'});
        });
      }).catch(function (err) {
        show(name + ': ' + err, 'error');
      }).then(refresh).then(function () {
        button.disabled = false;
        document.body.dataset.lastTool = name;  // set once the page has caught up with the call
        document.body.dataset.calls = (parseInt(document.body.dataset.calls || '0', 10) + 1).toString();
      });
    });
  });

  var s0 = playStatus();
  if (s0 && s0.dataset.scoring === 'true') watchScoring();

  document.addEventListener('click', function (e) {
    var t = e.target;
    if (t.matches('button.add-row')) {
      var body = t.closest('.field').querySelector('table.rows tbody');
      var row = body.querySelector('tr.row').cloneNode(true);
      row.querySelectorAll('input, select').forEach(function (i) { i.value = ''; });
      body.appendChild(row);
    } else if (t.matches('button.drop-row')) {
      var tbody = t.closest('tbody');
      if (tbody.querySelectorAll('tr.row').length > 1) t.closest('tr').remove();
      else t.closest('tr').querySelectorAll('input, select').forEach(function (i) { i.value = ''; });
    }
  });
})();
