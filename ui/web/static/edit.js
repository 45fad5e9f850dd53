// The editor: save with the sha it loaded; a 409 opens the conflict dialog, never a silent overwrite.
// Saving (the button or Ctrl+S) keeps the editor open and says "Saved"; "Close" goes to the note.
// The text is edited in CodeMirror (vendor/cairn-editor.min.js: Markdown highlighting, `[[`
// completion from /api/complete), which keeps the textarea's value in step, so saving reads
// the textarea exactly as before; without the bundle the textarea itself is the editor.
"use strict";

(() => {
  const editor = document.getElementById("editor");
  const textarea = document.getElementById("text");
  const saveButton = document.getElementById("save");
  const saveState = document.getElementById("save-state");
  const dialog = document.getElementById("conflict");
  const detail = document.getElementById("conflict-detail");
  const path = editor.dataset.path;
  let sha = editor.dataset.sha;
  let conflict = null;
  let dirty = false;
  let busy = false;

  const encodePath = (p) => p.split("/").map(encodeURIComponent).join("/");
  const noteUrl = (p) => `/note/${encodePath(p)}`;
  const previewPane = document.getElementById("preview");
  const previewToggle = document.getElementById("preview-toggle");
  let code = null; // the CodeMirror editor, when its bundle loaded
  let previewTimer = null;

  function edited() {
    dirty = true;
    setState("Unsaved changes", "dirty");
    if (!previewPane.hidden) schedulePreview();
  }

  async function completions(typed) {
    const query = new URLSearchParams({ q: typed, path });
    try {
      const response = await cairn.fetch(`/api/complete?${query}`, { headers: { Accept: "application/json" } });
      if (!response.ok) return [];
      return (await response.json()).completions;
    } catch (err) {
      return [];
    }
  }

  if (window.CairnEditor) {
    const host = document.getElementById("code-editor");
    code = window.CairnEditor.create({
      parent: host,
      doc: textarea.value,
      fetchCompletions: completions,
      onSave: () => save(sha),
      onChange: (text) => {
        textarea.value = text;
        edited();
      },
    });
    host.hidden = false;
    textarea.hidden = true;
    window.cairnEditor = code; // for tests and the console: getText(), setText(text)
  }

  async function renderPreview() {
    previewTimer = null;
    try {
      const response = await cairn.fetch("/api/render", {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ path, text: textarea.value }),
      });
      if (!response.ok) return;
      previewPane.innerHTML = (await response.json()).html;
      for (const img of previewPane.querySelectorAll("img[src^='/file/']")) {
        img.dataset.fileSrc = new URL(img.getAttribute("src"), location.href).href;
        img.removeAttribute("src");
      }
      if (window.cairnNote) window.cairnNote.enhance(previewPane);
      previewPane.dataset.rendered = "1";
    } catch (err) {
      // The preview waits for the next edit.
    }
  }

  function schedulePreview() {
    if (previewTimer) clearTimeout(previewTimer);
    previewTimer = setTimeout(renderPreview, 250);
  }

  function togglePreview() {
    const shown = previewPane.hidden;
    previewPane.hidden = !shown;
    previewToggle.setAttribute("aria-pressed", String(shown));
    editor.classList.toggle("with-preview", shown);
    if (shown) renderPreview();
  }
  previewToggle.addEventListener("click", togglePreview);

  function setState(text, state) {
    saveState.textContent = text;
    saveState.dataset.state = state || "";
  }

  async function put(target, expectedSha, asUtf8 = false) {
    return cairn.fetch(`/api/notes/${encodePath(target)}`, {
      method: "PUT",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ text: textarea.value, expected_sha: expectedSha, as_utf8: asUtf8 }),
    });
  }

  async function problem(response) {
    try {
      const body = await response.json();
      return body.message || `HTTP ${response.status}`;
    } catch (err) {
      return `HTTP ${response.status}`;
    }
  }

  async function save(expectedSha, asUtf8 = false) {
    if (busy) return;
    busy = true;
    setState("Saving…", "busy");
    try {
      const response = await put(path, expectedSha, asUtf8);
      if (response.ok) {
        const answer = await response.json();
        sha = answer.sha;
        dirty = false;
        setState(answer.warning ? `Saved (${answer.warning})` : "Saved", "ok");
      } else if (response.status === 409) {
        conflict = await response.json();
        detail.textContent = conflict.current_sha
          ? "The version on disk is different from the one you started editing."
          : "The file was deleted on disk.";
        setState("Not saved: the note changed on disk", "error");
        dialog.showModal();
        // The safe answer has the focus: Enter never throws either version away.
        document.getElementById("conflict-cancel").focus();
      } else if (response.status === 422) {
        // The note's own encoding (cp1252, say) cannot hold a character of the text.
        const body = await response.json();
        setState(`Not saved: ${body.message}`, "error");
        if (window.confirm(`${body.message}\n\nSave the note as UTF-8 instead?`)) {
          busy = false;
          await save(expectedSha, true);
        }
      } else {
        setState(`Not saved: ${await problem(response)}`, "error");
      }
    } catch (err) {
      setState("Not saved: the server did not answer", "error");
    } finally {
      busy = false;
    }
  }

  saveButton.addEventListener("click", () => save(sha));
  textarea.addEventListener("input", edited);
  document.addEventListener("keydown", (event) => {
    if ((event.ctrlKey || event.metaKey) && event.key === "s") {
      event.preventDefault();
      save(sha);
    }
    if ((event.ctrlKey || event.metaKey) && event.key === "e") {
      event.preventDefault();
      togglePreview();
    }
  });
  window.addEventListener("beforeunload", (event) => {
    if (dirty) event.preventDefault();
  });

  document.getElementById("conflict-reload").addEventListener("click", () => {
    textarea.value = conflict.current_text;
    if (code) code.setText(conflict.current_text);
    sha = conflict.current_sha;
    dirty = false;
    dialog.close();
    setState("Reloaded the version on disk", "ok");
  });
  document.getElementById("conflict-overwrite").addEventListener("click", () => {
    dialog.close();
    save(conflict.current_sha);
  });
  document.getElementById("conflict-copy").addEventListener("click", async () => {
    dialog.close();
    setState("Saving a copy…", "busy");
    const response = await put(conflict.copy_path, null);
    if (response.ok) {
      dirty = false;
      window.location.href = noteUrl(conflict.copy_path);
    } else {
      setState(`Copy not saved: ${await problem(response)}`, "error");
    }
  });
  document.getElementById("conflict-cancel").addEventListener("click", () => dialog.close());

  if (code) code.focus();
  else textarea.focus();
})();
