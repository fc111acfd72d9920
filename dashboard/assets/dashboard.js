// Geneva dashboard: the "live" switch (remembered in this browser), which
// holds back the live regions' htmx polling while off or while the tab is
// hidden, and the CSRF token on htmx requests. No eval: the pages' Content
// Security Policy allows only scripts from the dashboard itself.
(function () {
  "use strict";
  var key = "geneva-dashboard-live";
  window.genevaLive = function () {
    var toggle = document.getElementById("live-toggle");
    return document.visibilityState === "visible" && (!toggle || toggle.checked);
  };
  document.addEventListener("DOMContentLoaded", function () {
    var toggle = document.getElementById("live-toggle");
    if (!toggle) return;
    try {
      toggle.checked = window.localStorage.getItem(key) !== "off";
      toggle.addEventListener("change", function () {
        window.localStorage.setItem(key, toggle.checked ? "on" : "off");
      });
    } catch (e) { /* storage disabled: stay live */ }
  });
  document.addEventListener("htmx:beforeRequest", function (event) {
    var elt = event.detail && event.detail.elt;
    if (elt && elt.id === "live" && !window.genevaLive()) event.preventDefault();
  });
  document.addEventListener("htmx:configRequest", function (event) {
    var meta = document.querySelector('meta[name="csrf-token"]');
    if (meta) event.detail.headers["X-CSRF-Token"] = meta.content;
  });
})();
