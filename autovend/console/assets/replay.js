// autovend console, replay: the day slider fetches each run's day (server-rendered HTML), moves the chart markers
// and keeps the address on ?day=N, so the address links to the day shown (the server opens a page on it).
(function () {
  var slider = document.getElementById('day');
  var label = document.getElementById('day-label');
  if (!slider) return;
  var pending = 0;
  function show(day) {
    label.textContent = day;
    var ticket = ++pending;
    if (window.history && history.replaceState) history.replaceState(null, '', '?day=' + day);
    document.querySelectorAll('section.run').forEach(function (run) {
      var days = parseInt(run.dataset.days, 10);
      var d = Math.min(day, days);
      var marker = run.querySelector('.marker');
      if (marker) {
        var x = parseFloat(marker.dataset.x0) + (d - 1) * parseFloat(marker.dataset.dx);
        marker.setAttribute('x1', x); marker.setAttribute('x2', x);
      }
      fetch('runs/' + run.dataset.run + '/days/' + d).then(function (r) {
        if (!r.ok) throw new Error('HTTP ' + r.status);
        return r.text();
      }).then(function (html) {
        if (ticket !== pending) return;  // a later move of the slider wins
        run.querySelector('.day').innerHTML = html;
        document.body.dataset.day = day;
      }).catch(function (e) { run.querySelector('.day').textContent = 'could not load day ' + d + ': ' + e; });
    });
  }
  slider.addEventListener('input', function () { show(parseInt(slider.value, 10)); });
  document.addEventListener('keydown', function (e) {
    if (e.target.tagName === 'INPUT' && e.target !== slider) return;
    var step = e.key === 'ArrowRight' ? 1 : e.key === 'ArrowLeft' ? -1 : 0;
    if (!step || e.target === slider) return;
    slider.value = Math.max(1, Math.min(parseInt(slider.max, 10), parseInt(slider.value, 10) + step));
    show(parseInt(slider.value, 10));
  });
})();
