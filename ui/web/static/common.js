// Shared by every page: shows what the background reindex and the vector channel are doing.
// Pages run inside the shell (shell.js), whose `cairn.fetch` sends the access token.
"use strict";

// Note pickers ("why isn't this note here?"): as a name is typed, the engine's choices
// (titles and aliases, then the nearest spellings) fill the field's datalist.
(() => {
  let latest = 0;
  document.addEventListener("input", async (event) => {
    const field = event.target;
    if (!(field instanceof HTMLInputElement) || field.getAttribute("list") !== "why-notes") return;
    const list = field.form && field.form.querySelector("datalist");
    const typed = field.value.trim();
    const sequence = ++latest;
    if (!list || !typed) return;
    try {
      const response = await cairn.fetch(`/api/notes?q=${encodeURIComponent(typed)}`, {
        headers: { Accept: "application/json" },
      });
      if (!response.ok || sequence !== latest) return;
      const { choices } = await response.json();
      const titles = choices.map((choice) => choice.title);
      list.replaceChildren(...choices.map((choice) => {
        const option = document.createElement("option");
        // A title two choices share is sent as the path, which names one note.
        const shared = titles.filter((title) => title === choice.title).length > 1;
        option.value = shared ? choice.path : choice.title;
        option.label = choice.how === "nearest" ? `${choice.path} · close spelling` : choice.path;
        return option;
      }));
    } catch (err) {
      // No choices this time; the form still takes what was typed.
    }
  });
})();

(() => {
  const badge = document.getElementById("index-status");
  if (!badge) return;

  function describe(status) {
    const indexing = status.indexing || {};
    if (indexing.error) return { text: indexing.error, state: "error" };
    if (indexing.running) {
      if (indexing.phase === "embed") {
        // The engine's own words: how far, in what order, how long the rest takes.
        return { text: indexing.text || `embedding ${indexing.done}/${indexing.total}`, state: "busy",
                 title: status.vectors_text || "" };
      }
      const count = indexing.total ? ` ${indexing.done}/${indexing.total}` : "";
      return { text: indexing.text || `indexing (${indexing.phase})${count}`, state: "busy" };
    }
    if (status.vectors.status === "unavailable") {
      return { text: "vectors unavailable", state: "warn", title: status.vectors.message };
    }
    if (status.vectors.status === "degraded") {
      const text = status.vectors_text || `embedding ${status.embedded_chunks}/${status.chunks}`;
      return { text, state: "busy" };
    }
    return { text: `${status.notes} notes`, state: "ok" };
  }

  async function poll() {
    let again = true;
    try {
      const response = await cairn.fetch("/api/status", { headers: { Accept: "application/json" } });
      if (response.status === 401) {
        badge.textContent = "token expired: open the URL cairn web printed";
        badge.dataset.state = "error";
        again = false;
      } else if (response.ok) {
        const view = describe(await response.json());
        badge.textContent = view.text;
        badge.dataset.state = view.state;
        badge.title = view.title || "";
        again = view.state === "busy";
      }
    } catch (err) {
      badge.textContent = "server unreachable";
      badge.dataset.state = "error";
    }
    if (again) setTimeout(poll, 1500);
  }

  poll();
})();
