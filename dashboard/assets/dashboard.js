// Geneva dashboard: the "live" switch (remembered in this browser) that the
// live regions' htmx polling checks, and the CSRF token on htmx requests.
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
  document.addEventListener("htmx:configRequest", function (event) {
    var meta = document.querySelector('meta[name="csrf-token"]');
    if (meta) event.detail.headers["X-CSRF-Token"] = meta.content;
  });
})();
