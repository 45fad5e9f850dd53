// The public shell every page URL answers when the request carries no token. It takes the
// token from the printed URL (`?token=` or `#token=`, then strips it from the address bar)
// or from this origin's localStorage, fetches the same URL again with
// `Authorization: Bearer`, and swaps the real page in. The token is never a cookie:
// cookies ignore ports, so every other server on 127.0.0.1 would be sent it.
"use strict";

(() => {
  const KEY = "cairn.token";
  const RASTER = /^image\/(png|jpeg|gif|webp|bmp|avif)\b/i;
  let remembered = null; // the token when storage is unavailable (this page only)

  function stored() {
    try {
      return localStorage.getItem(KEY) || remembered;
    } catch (err) {
      return remembered;
    }
  }

  function store(token) {
    remembered = token;
    try {
      localStorage.setItem(KEY, token);
    } catch (err) {
      // Storage is off: the token lasts until this page is left.
    }
  }

  function forget() {
    remembered = null;
    try {
      localStorage.removeItem(KEY);
    } catch (err) {
      // Nothing was stored.
    }
  }

  function decode(text) {
    try {
      return decodeURIComponent(text.replace(/\+/g, " "));
    } catch (err) {
      return text;
    }
  }

  // Splits `token=…` off a query string or fragment: "q=a&token=x" → {token: "x", rest: "q=a"}.
  function splitToken(part) {
    let token = null;
    const kept = part.split("&").filter((item) => {
      const eq = item.indexOf("=");
      if (decode(eq < 0 ? item : item.slice(0, eq)) !== "token") return item !== "";
      token = eq < 0 ? "" : decode(item.slice(eq + 1));
      return false;
    });
    return { token, rest: kept.join("&") };
  }

  function tokenFromAddress() {
    const url = new URL(location.href);
    const query = splitToken(url.search.slice(1));
    const fragment = splitToken(url.hash.slice(1));
    if (query.token === null && fragment.token === null) return null;
    url.search = query.rest ? `?${query.rest}` : "";
    url.hash = fragment.rest ? `#${fragment.rest}` : "";
    // Out of the address bar and history; `url` is this origin's, whatever the path looks like.
    history.replaceState(history.state, "", url.href);
    return fragment.token || query.token || null;
  }

  function ownUrl(input) {
    const url = new URL(String(input), location.href);
    if (url.origin !== location.origin) throw new TypeError(`Cairn sends its token only to ${location.origin}`);
    return url;
  }

  // fetch() for this origin with the token; every script of the web view calls this.
  async function authorizedFetch(input, options = {}) {
    const url = ownUrl(input);
    const headers = new Headers(options.headers || {});
    const token = stored();
    if (token) headers.set("Authorization", `Bearer ${token}`);
    return fetch(url.href, { ...options, headers, credentials: "omit", redirect: "error" });
  }

  // The vault file an href or src names on this origin, or null (other origins, unparsable URLs).
  function vaultFile(reference) {
    try {
      const url = new URL(reference, location.href);
      return url.origin === location.origin && url.pathname.startsWith("/file/") ? url : null;
    } catch (err) {
      return null;
    }
  }

  function notice(message) {
    const p = document.createElement("p");
    p.className = "notice notice-error";
    p.textContent = message;
    (document.querySelector("main") || document.body).prepend(p);
  }

  async function showImage(img) {
    const source = img.dataset.fileSrc;
    try {
      const response = await authorizedFetch(source);
      if (!response.ok) throw new Error(`HTTP ${response.status}`);
      const blobUrl = URL.createObjectURL(await response.blob());
      img.addEventListener("load", () => URL.revokeObjectURL(blobUrl), { once: true });
      img.src = blobUrl;
    } catch (err) {
      img.classList.add("broken");
      img.title = `Could not load ${decode(new URL(source).pathname)}: ${err.message}`;
    }
  }

  // A link to a vault file: raster images open in a tab, everything else downloads.
  async function openFile(url) {
    try {
      const response = await authorizedFetch(url.href);
      if (!response.ok) throw new Error(`HTTP ${response.status}`);
      const type = response.headers.get("content-type") || "";
      const blob = await response.blob();
      if (RASTER.test(type)) {
        window.open(URL.createObjectURL(blob), "_blank", "noopener");
        return;
      }
      // Typed as bytes, so the file can never run as a page of this origin (SVG and HTML included).
      const link = document.createElement("a");
      link.href = URL.createObjectURL(new Blob([blob], { type: "application/octet-stream" }));
      link.download = decode(url.pathname.split("/").pop() || "download");
      document.body.append(link);
      link.click();
      link.remove();
      setTimeout(() => URL.revokeObjectURL(link.href), 60_000);
    } catch (err) {
      notice(`Could not open ${decode(url.pathname)}: ${err.message}`);
    }
  }

  function onLinkClick(event) {
    const link = event.target instanceof Element ? event.target.closest("a[href]") : null;
    if (!link || event.defaultPrevented) return;
    const url = vaultFile(link.getAttribute("href"));
    if (!url) return;
    // A plain navigation would carry no token: fetch the file with it instead.
    event.preventDefault();
    openFile(url);
  }

  function loadScripts(sources) {
    return Promise.all(
      sources.map(
        (src) =>
          new Promise((resolve) => {
            const script = document.createElement("script");
            script.src = src;
            script.async = false; // in document order, as the deferred originals would run
            script.addEventListener("load", resolve);
            script.addEventListener("error", resolve);
            document.head.append(script);
          }),
      ),
    );
  }

  function stylesLoaded() {
    return Promise.all(
      Array.from(document.querySelectorAll('link[rel="stylesheet"]'), (link) =>
        link.sheet
          ? Promise.resolve()
          : new Promise((resolve) => {
              link.addEventListener("load", resolve, { once: true });
              link.addEventListener("error", resolve, { once: true });
            }),
      ),
    );
  }

  async function swap(html) {
    const next = new DOMParser().parseFromString(html, "text/html");
    // A parsed document's scripts never run and its images have not loaded: both are redone here.
    const sources = Array.from(next.querySelectorAll("script[src]"), (script) => {
      script.remove();
      return script.getAttribute("src");
    });
    for (const img of next.querySelectorAll("img[src]")) {
      const url = vaultFile(img.getAttribute("src"));
      if (!url) continue;
      img.dataset.fileSrc = url.href;
      img.removeAttribute("src");
    }
    document.replaceChild(document.adoptNode(next.documentElement), document.documentElement);
    document.querySelectorAll("img[data-file-src]").forEach(showImage);
    // The page's scripts measure and scroll (note.js scrolls to `#L12`): styled first.
    await stylesLoaded();
    await loadScripts(sources);
    const focus = document.querySelector("[autofocus]");
    if (focus) focus.focus();
    document.documentElement.dataset.ready = "1";
  }

  function show(id, detail) {
    document.getElementById("shell-opening").hidden = true;
    document.getElementById(id).hidden = false;
    if (detail) document.getElementById("shell-problem-detail").textContent = detail;
    document.documentElement.dataset.ready = "1";
  }

  async function open() {
    const offered = tokenFromAddress();
    const candidates = [offered, stored()].filter((token, i, all) => token && all.indexOf(token) === i);
    const target = new URL(location.href);
    target.hash = "";
    for (const token of candidates) {
      let response;
      try {
        response = await fetch(target.href, {
          headers: { Authorization: `Bearer ${token}`, Accept: "text/html" },
          credentials: "omit",
          redirect: "error",
          cache: "no-store",
        });
      } catch (err) {
        show("shell-problem", "The server did not answer: is `cairn web` still running?");
        return;
      }
      if (response.status === 401) continue; // a token from before a restart; try the next
      store(token);
      const type = response.headers.get("content-type") || "";
      if (!type.startsWith("text/html")) {
        show("shell-problem", `HTTP ${response.status}: ${(await response.text()).slice(0, 300)}`);
        return;
      }
      await swap(await response.text());
      return;
    }
    forget();
    show("shell-token");
  }

  window.cairn = Object.freeze({ fetch: authorizedFetch });
  document.addEventListener("click", onLinkClick);
  document.addEventListener("auxclick", (event) => {
    if (event.button === 1) onLinkClick(event);
  });
  open();
})();
