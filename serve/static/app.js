// Live updates: the server sends the rendered list of requests as a
// server-sent event whenever it changes. Without this script the page
// still works; it is only not live.
'use strict';
(function () {
  var live = document.getElementById('live');
  var status = document.getElementById('live-status');
  if (!live || !window.EventSource) {
    return;
  }
  var es = new EventSource('/events');
  es.addEventListener('cards', function (e) {
    // The server rendered and escaped the fragment with html/template.
    live.innerHTML = e.data;
    status.textContent = 'live';
    status.className = 'status on';
  });
  es.onerror = function () {
    status.textContent = 'reconnecting…';
    status.className = 'status off';
  };
})();
