// The search page: results on every keystroke, newest request wins, keyboard navigation.
"use strict";

(() => {
  const input = document.getElementById("q");
  const results = document.getElementById("results");
  const explain = document.getElementById("explain");
  const form = input.form;
  let controller = null;
  let latest = 0;

  function hits() {
    return Array.from(results.querySelectorAll("li.hit"));
  }

  function select(index) {
    const items = hits();
    if (!items.length) return;
    const clamped = Math.max(0, Math.min(items.length - 1, index));
    items.forEach((item, i) => item.classList.toggle("selected", i === clamped));
    items[clamped].scrollIntoView({ block: "nearest" });
  }

  function selectedIndex() {
    return hits().findIndex((item) => item.classList.contains("selected"));
  }

  function showError(message) {
    const p = document.createElement("p");
    p.className = "notice notice-error";
    p.textContent = message;
    results.replaceChildren(p);
  }

  async function search() {
    const query = input.value;
    const sequence = ++latest;
    if (controller) controller.abort();
    controller = new AbortController();
    history.replaceState(null, "", query ? `/?q=${encodeURIComponent(query)}` : "/");
    document.title = `${query || "Search"} · Cairn`;
    if (!query.trim()) {
      results.innerHTML = '<p class="empty">Type to search the vault.</p>';
      return;
    }
    try {
      const response = await cairn.fetch(`/search/results?q=${encodeURIComponent(query)}`, {
        signal: controller.signal,
      });
      const body = await response.text();
      if (sequence !== latest) return; // a newer keystroke already owns the results
      if (response.status === 401) {
        showError("Search failed: the access token expired. Open the URL that `cairn web` printed.");
        return;
      }
      if (!response.ok) {
        showError(`Search failed (${response.status}).`);
        return;
      }
      results.innerHTML = body; // server-rendered, every value escaped
    } catch (err) {
      if (err.name === "AbortError" || sequence !== latest) return;
      showError("Search failed: the server did not answer.");
    }
  }

  input.addEventListener("input", search);

  // A chip says how a part of the query was read; clicking it removes that part.
  results.addEventListener("click", (event) => {
    const chip = event.target.closest("button.chip");
    if (!chip || chip.dataset.without === undefined) return;
    input.value = chip.dataset.without; // the engine's reading of the query without this part
    input.focus();
    search();
  });

  input.addEventListener("keydown", (event) => {
    if (event.key === "ArrowDown") {
      event.preventDefault();
      select(selectedIndex() + 1);
    } else if (event.key === "ArrowUp") {
      event.preventDefault();
      select(selectedIndex() - 1);
    }
  });

  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const items = hits();
    const chosen = items[Math.max(0, selectedIndex())];
    if (chosen) window.location.href = chosen.dataset.href;
  });

  results.addEventListener("click", (event) => {
    const item = event.target.closest("li.hit");
    if (!item || event.target.closest("a, table, details, .explain-hit")) return;
    window.location.href = item.dataset.href;
  });

  function applyExplain() {
    document.body.classList.toggle("explain-on", explain.checked);
    localStorage.setItem("cairn.explain", explain.checked ? "1" : "0");
  }
  explain.checked = localStorage.getItem("cairn.explain") === "1";
  explain.addEventListener("change", applyExplain);
  applyExplain();

  // Put the caret at the end of a prefilled query.
  input.setSelectionRange(input.value.length, input.value.length);
})();
