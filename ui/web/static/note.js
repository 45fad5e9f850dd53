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

  function showTarget() {
    const match = /^#L(\d+)$/.exec(window.location.hash);
    for (const old of markdown.querySelectorAll(".target-line")) old.classList.remove("target-line");
    if (!match) return;
    const block = blockFor(Number(match[1]));
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
