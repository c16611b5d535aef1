// venturi dashboard: live refresh and confirmations. No framework, no inline script
// (the Content-Security-Policy allows only this file).
"use strict";

// An element with data-refresh="URL" is replaced every data-interval ms by the HTML
// fragment the server renders at URL (escaped there, like every page). A hidden tab
// does not poll; a failed poll keeps what is shown and tries again later.
function startRefresh(element) {
  const url = element.getAttribute("data-refresh");
  const interval = Math.max(1000, parseInt(element.getAttribute("data-interval") || "2000", 10));
  async function refresh() {
    if (!document.hidden && !element.contains(document.activeElement)) {
      try {
        const response = await fetch(url, { credentials: "same-origin", headers: { "Accept": "text/html" } });
        if (response.ok && (response.headers.get("content-type") || "").startsWith("text/html")) {
          element.innerHTML = await response.text();
          element.setAttribute("data-refreshed", String(Date.now()));
        }
      } catch (error) {
        // the server restarts, the network blinks: the next poll tries again
      }
    }
    window.setTimeout(refresh, interval);
  }
  window.setTimeout(refresh, interval);
}

// A form with data-confirm="question" asks before it is sent.
function guard(event) {
  const form = event.target.closest("form[data-confirm]");
  if (form && !window.confirm(form.getAttribute("data-confirm"))) {
    event.preventDefault();
  }
}

document.addEventListener("DOMContentLoaded", function () {
  document.querySelectorAll("[data-refresh]").forEach(startRefresh);
  document.addEventListener("submit", guard, true);
});
