// The note page: `#L12` scrolls to and highlights the block that holds source line 12.
"use strict";

(() => {
  const markdown = document.getElementById("markdown");
  if (!markdown) return;

  function blockFor(line) {
    let best = null;
    let bestLine = 0;
    for (const element of markdown.querySelectorAll("[data-line]")) {
      const start = Number(element.dataset.line);
      // Ties go to the later (inner) element: a list item over its list.
      if (start <= line && start >= bestLine) {
        best = element;
        bestLine = start;
      }
    }
    return best;
  }

  // `#L12` is a source line; any other fragment is an element id: a heading (`#h-…`), a block (`#^b15695`).
  function targetOf(hash) {
    const match = /^#L(\d+)$/.exec(hash);
    if (match) return blockFor(Number(match[1]));
    if (hash.length < 2) return null;
    let id = hash.slice(1);
    try {
      id = decodeURIComponent(id);
    } catch (err) {
      // Not percent-encoded text: the id as written.
    }
    const found = document.getElementById(id);
    return found && markdown.contains(found) ? found : null;
  }

  function showTarget() {
    for (const old of markdown.querySelectorAll(".target-line")) old.classList.remove("target-line");
    const block = targetOf(window.location.hash);
    if (!block) return;
    block.classList.add("target-line");
    block.scrollIntoView({ block: "center" });
  }

  window.addEventListener("hashchange", showTarget);
  showTarget();

  document.addEventListener("keydown", (event) => {
    if (event.target.closest("input, textarea")) return;
    if (event.key === "e") document.getElementById("edit").click();
    if (event.key === "/") {
      event.preventDefault();
      window.location.href = "/";
    }
  });
})();
