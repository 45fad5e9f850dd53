// The note page: `#L12` scrolls to and highlights the block that holds source line 12; Ctrl+F
// finds in the note (Enter next, Shift+Enter previous, Escape closes), the matches marked with
// the CSS Custom Highlight API (the note's HTML is never changed).
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
  if (window.cairnNote) window.cairnNote.enhance(markdown).then(showTarget);

  const bar = document.getElementById("find-bar");
  const input = document.getElementById("find-input");
  const count = document.getElementById("find-count");
  let matches = [];
  let current = -1;
  const highlights = window.CSS && CSS.highlights;

  function findAll() {
    matches = [];
    const needle = input.value.toLocaleLowerCase();
    if (needle) {
      const walker = document.createTreeWalker(markdown, NodeFilter.SHOW_TEXT);
      for (let node = walker.nextNode(); node; node = walker.nextNode()) {
        const text = node.data.toLocaleLowerCase();
        if (text.length !== node.data.length) continue; // a case change altered offsets
        for (let at = text.indexOf(needle); at >= 0; at = text.indexOf(needle, at + needle.length)) {
          const range = new Range();
          range.setStart(node, at);
          range.setEnd(node, at + needle.length);
          matches.push(range);
        }
      }
    }
    current = matches.length ? 0 : -1;
    if (highlights) highlights.set("cairn-find", new Highlight(...matches));
    showCurrent();
  }

  function showCurrent() {
    count.textContent = !input.value ? "" : matches.length ? `${current + 1} of ${matches.length}` : "no match";
    bar.dataset.matches = String(matches.length);
    if (current < 0) {
      if (highlights) highlights.delete("cairn-find-current");
      return;
    }
    const range = matches[current];
    const element = range.startContainer.parentElement;
    const folded = element.closest("details:not([open])");
    if (folded) folded.open = true;
    if (highlights) highlights.set("cairn-find-current", new Highlight(range));
    element.scrollIntoView({ block: "center" });
  }

  function step(by) {
    if (!matches.length) return;
    current = (current + by + matches.length) % matches.length;
    showCurrent();
  }

  function openFind() {
    bar.hidden = false;
    input.focus();
    input.select();
  }

  function closeFind() {
    bar.hidden = true;
    if (highlights) {
      highlights.delete("cairn-find");
      highlights.delete("cairn-find-current");
    }
  }

  input.addEventListener("input", findAll);
  input.addEventListener("keydown", (event) => {
    if (event.key === "Enter") {
      event.preventDefault();
      step(event.shiftKey ? -1 : 1);
    } else if (event.key === "Escape") {
      closeFind();
    }
  });
  document.getElementById("find-open").addEventListener("click", openFind);
  document.getElementById("find-next").addEventListener("click", () => step(1));
  document.getElementById("find-prev").addEventListener("click", () => step(-1));
  document.getElementById("find-close").addEventListener("click", closeFind);

  document.addEventListener("keydown", (event) => {
    if ((event.ctrlKey || event.metaKey) && event.key === "f") {
      event.preventDefault();
      openFind();
      return;
    }
    if (event.target.closest("input, textarea")) return;
    if (event.key === "e") document.getElementById("edit").click();
    if (event.key === "/") {
      event.preventDefault();
      window.location.href = "/";
    }
  });
})();
