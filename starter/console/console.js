// The console's little script: log in from the URL's #token, refresh a
// session's conversation, and reload a page when the waiting calls change
// (but not while a person is typing feedback). Every page works without
// it, only without the live parts.
(function () {
  "use strict";

  const login = document.getElementById("login-form");
  if (login && location.hash.startsWith("#token=")) {
    const token = decodeURIComponent(location.hash.slice("#token=".length));
    // Out of the address bar and the history before anything else.
    history.replaceState(null, "", location.pathname);
    login.elements.token.value = token;
    login.submit();
    return;
  }

  // typing: a person has unsent text in a form, which a reload would lose.
  function typing() {
    return [...document.querySelectorAll("textarea, input[name=pattern]")].some((el) => el.value.trim() !== "" || el === document.activeElement);
  }

  function changed(keysEl, now) {
    return keysEl && now !== null && now !== keysEl.dataset.keys;
  }

  async function get(url) {
    const r = await fetch(url, { credentials: "same-origin", cache: "no-store" });
    if (r.redirected || !r.ok) throw new Error("HTTP " + r.status);
    return r;
  }

  const live = document.getElementById("live");
  const pending = document.getElementById("pending");
  if (live) {
    const every = Number(live.dataset.every) || 2000;
    let last = live.innerHTML;
    const tick = async () => {
      try {
        const r = await get(live.dataset.live);
        const html = await r.text();
        if (html !== last) {
          // Our own server-rendered, escaped HTML.
          live.innerHTML = html;
          last = html;
        }
        if (changed(pending, r.headers.get("X-Longrun-Pending")) && !typing()) {
          location.reload();
          return;
        }
        if (r.headers.get("X-Longrun-Done") === "1" && !pending.dataset.keys) {
          // Ended since the page loaded: load it again for its changes
          // and the buttons that apply or discard them.
          if (!live.dataset.done && !typing()) location.reload();
          return;
        }
      } catch (e) {
        // A restarting console or server: try again on the next tick.
      }
      setTimeout(tick, every);
    };
    setTimeout(tick, every);
  }

  const inbox = document.getElementById("inbox");
  if (inbox) {
    const tick = async () => {
      try {
        const r = await get(inbox.dataset.poll);
        const keys = await r.text();
        if (keys !== inbox.dataset.keys && !typing()) {
          location.reload();
          return;
        }
      } catch (e) {}
      setTimeout(tick, 3000);
    };
    setTimeout(tick, 3000);
  }
})();
