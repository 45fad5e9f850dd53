// Cairn's web editor: CodeMirror 6 with Markdown highlighting and `[[` link completion.
// Built into ui/web/static/vendor/cairn-editor.min.js (see ui/web/static/vendor/README.md).
import { EditorView, keymap, drawSelection, highlightActiveLine, lineNumbers, placeholder } from "@codemirror/view";
import { EditorState } from "@codemirror/state";
import { defaultKeymap, history, historyKeymap, indentWithTab } from "@codemirror/commands";
import { searchKeymap, highlightSelectionMatches } from "@codemirror/search";
import { autocompletion, completionKeymap, closeBrackets, closeBracketsKeymap } from "@codemirror/autocomplete";
import { markdown, markdownLanguage } from "@codemirror/lang-markdown";
import { syntaxHighlighting, defaultHighlightStyle, HighlightStyle, bracketMatching } from "@codemirror/language";
import { tags } from "@lezer/highlight";

const markdownStyle = HighlightStyle.define([
  { tag: tags.heading1, fontWeight: "700", fontSize: "1.3em" },
  { tag: tags.heading2, fontWeight: "700", fontSize: "1.15em" },
  { tag: [tags.heading3, tags.heading4, tags.heading5, tags.heading6], fontWeight: "700" },
  { tag: tags.strong, fontWeight: "700" },
  { tag: tags.emphasis, fontStyle: "italic" },
  { tag: tags.strikethrough, textDecoration: "line-through" },
  { tag: tags.link, class: "cm-md-link" },
  { tag: tags.url, class: "cm-md-url" },
  { tag: tags.monospace, class: "cm-md-code" },
  { tag: tags.quote, class: "cm-md-quote" },
  { tag: [tags.processingInstruction, tags.meta], class: "cm-md-mark" },
]);

// `fetchCompletions(typed)` answers [{link, label, detail, kind}] for what follows `[[`.
function linkCompletion(fetchCompletions) {
  return async (context) => {
    const before = context.matchBefore(/\[\[[^\[\]|\n]*$/);
    if (!before) return null;
    const typed = before.text.slice(2);
    const items = await fetchCompletions(typed);
    if (!items || context.aborted) return null;
    const after = context.state.sliceDoc(context.pos, context.pos + 2);
    return {
      from: before.from + 2,
      filter: false,
      options: items.map((item) => ({
        label: item.label,
        detail: item.detail,
        type: item.kind,
        apply: (view, completion, from, to) => {
          const closing = after === "]]" ? "" : "]]";
          const insert = item.link + closing;
          // A note chosen: the cursor goes after `]]`; `#` typed next would need it before.
          view.dispatch({
            changes: { from, to, insert },
            selection: { anchor: from + item.link.length + (after === "]]" ? 2 : closing.length) },
          });
        },
      })),
    };
  };
}

// The page's Content-Security-Policy refuses <style> elements; CodeMirror's styles reach a
// shadow root as constructed style sheets instead, so the editor lives in one. Colours come
// from the page's CSS variables, which inherit into it.
const cairnTheme = EditorView.theme({
  "&": { minHeight: "60vh", maxHeight: "80vh", backgroundColor: "var(--panel)", color: "var(--fg)", borderRadius: "8px" },
  ".cm-scroller": { fontFamily: "ui-monospace, SFMono-Regular, Menlo, Consolas, monospace", fontSize: "0.9rem", lineHeight: "1.5" },
  ".cm-gutters": { backgroundColor: "var(--code)", color: "var(--muted)", borderRight: "1px solid var(--border)" },
  ".cm-activeLine, .cm-activeLineGutter": { backgroundColor: "var(--selected)" },
  ".cm-content": { caretColor: "var(--fg)" },
  ".cm-md-link, .cm-md-url": { color: "var(--accent)" },
  ".cm-md-code": { backgroundColor: "var(--code)" },
  ".cm-md-mark": { color: "var(--muted)" },
  ".cm-md-quote": { color: "var(--muted)", fontStyle: "italic" },
  ".cm-tooltip-autocomplete": { backgroundColor: "var(--panel)", border: "1px solid var(--border)" },
  ".cm-completionDetail": { color: "var(--muted)", marginLeft: "0.6em", fontStyle: "normal" },
  // The chosen suggestion in the page's accent; its detail (where the note is) readable on it too.
  ".cm-tooltip-autocomplete ul li[aria-selected]": { backgroundColor: "var(--accent)", color: "var(--accent-fg)" },
  ".cm-tooltip-autocomplete ul li[aria-selected] .cm-completionDetail": { color: "inherit", opacity: "0.8" },
});

function create({ parent, doc, onChange, fetchCompletions, onSave }) {
  const root = parent.attachShadow({ mode: "open" });
  const view = new EditorView({
    parent: root,
    root,
    state: EditorState.create({
      doc,
      extensions: [
        cairnTheme,
        lineNumbers(),
        history(),
        drawSelection(),
        highlightActiveLine(),
        highlightSelectionMatches(),
        bracketMatching(),
        closeBrackets(),
        EditorView.lineWrapping,
        markdown({ base: markdownLanguage }),
        syntaxHighlighting(markdownStyle),
        syntaxHighlighting(defaultHighlightStyle, { fallback: true }),
        autocompletion({ override: [linkCompletion(fetchCompletions)], activateOnTyping: true }),
        placeholder("Write Markdown…"),
        keymap.of([
          { key: "Mod-s", preventDefault: true, run: () => { onSave(); return true; } },
          ...closeBracketsKeymap,
          ...completionKeymap,
          ...searchKeymap,
          ...historyKeymap,
          ...defaultKeymap,
          indentWithTab,
        ]),
        EditorView.updateListener.of((update) => {
          if (update.docChanged) onChange(update.state.doc.toString());
        }),
        EditorView.contentAttributes.of({ "aria-label": "Note text", spellcheck: "false" }),
      ],
    }),
  });
  return {
    view,
    getText: () => view.state.doc.toString(),
    setText: (text) => view.dispatch({ changes: { from: 0, to: view.state.doc.length, insert: text } }),
    focus: () => view.focus(),
  };
}

window.CairnEditor = Object.freeze({ create });
