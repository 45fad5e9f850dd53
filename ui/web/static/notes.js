// The notes page (and the tags page): the list filtered as you type, and a new note created through the engine.
"use strict";

(() => {
  const filter = document.getElementById("tree-filter");
  const tree = document.getElementById("note-tree");
  const form = document.getElementById("new-note-form");
  const state = document.getElementById("new-state");
  const encodePath = (p) => p.split("/").map(encodeURIComponent).join("/");

  function applyFilter() {
    const words = filter.value.toLowerCase().split(/\s+/).filter(Boolean);
    for (const item of tree.querySelectorAll("li.note, li.file, li.tag-row")) {
      const text = item.dataset.search || "";
      item.hidden = !words.every((word) => text.includes(word));
    }
    // Folders open while filtering (and hide when nothing in them matches), close again after.
    const folders = Array.from(tree.querySelectorAll("li.folder")).reverse();
    for (const folder of folders) {
      const shown = folder.querySelector("li.note:not([hidden]), li.file:not([hidden])") !== null;
      folder.hidden = words.length > 0 && !shown;
      folder.querySelector("details").open = words.length > 0 && shown;
    }
  }

  filter.addEventListener("input", applyFilter);
  filter.addEventListener("keydown", (event) => {
    if (event.key !== "Enter") return;
    const first = tree.querySelector("li.note:not([hidden]) a, li.tag-row:not([hidden]) a");
    if (first) window.location.href = first.getAttribute("href");
  });

  if (!form) return;
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const title = document.getElementById("new-title").value.trim();
    const folder = document.getElementById("new-folder").value.trim();
    if (!title) return;
    state.textContent = "Creating…";
    state.dataset.state = "busy";
    try {
      const response = await cairn.fetch("/api/notes", {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ title, folder }),
      });
      const body = await response.json();
      if (response.ok) {
        window.location.href = `/edit/${encodePath(body.path)}`;
        return;
      }
      state.textContent = `Not created: ${body.message || response.status}`;
      state.dataset.state = "error";
    } catch (err) {
      state.textContent = "Not created: the server did not answer";
      state.dataset.state = "error";
    }
  });

  if (window.location.hash === "#new-note") document.getElementById("new-title").focus();
  else filter.focus();
})();
