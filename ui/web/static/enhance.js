// What a note shows besides its HTML, drawn in the page from the vendored libraries (served
// from /static/vendor/, never another site): math with KaTeX, mermaid diagrams, and the
// sound, video and PDF files it embeds (fetched with the token, played or shown from blob: URLs).
"use strict";

(() => {
  const scripts = new Map();
  const MEDIA_TYPES = {
    mp3: "audio/mpeg", ogg: "audio/ogg", oga: "audio/ogg", opus: "audio/ogg", wav: "audio/wav", m4a: "audio/mp4",
    flac: "audio/flac", webm: "audio/webm", "3gp": "audio/3gpp", mp4: "video/mp4", ogv: "video/ogg",
    mov: "video/quicktime", mkv: "video/x-matroska", pdf: "application/pdf",
  };

  function loadScript(src) {
    if (!scripts.has(src)) {
      scripts.set(src, new Promise((resolve, reject) => {
        const script = document.createElement("script");
        script.src = src;
        script.addEventListener("load", resolve);
        script.addEventListener("error", () => reject(new Error(`could not load ${src}`)));
        document.head.append(script);
      }));
    }
    return scripts.get(src);
  }

  function loadStyle(href) {
    if (document.querySelector(`link[href="${href}"]`)) return;
    const link = document.createElement("link");
    link.rel = "stylesheet";
    link.href = href;
    document.head.append(link);
  }

  function keepLine(from, to) {
    if (from.dataset.line) to.dataset.line = from.dataset.line;
  }

  async function math(root) {
    const items = root.querySelectorAll("code.math, pre.math");
    if (!items.length) return;
    loadStyle("/static/vendor/katex.min.css");
    await loadScript("/static/vendor/katex.min.js");
    for (const element of items) {
      const display = element.tagName === "PRE";
      const shown = document.createElement(display ? "div" : "span");
      shown.className = display ? "math math-display" : "math math-inline";
      shown.dataset.source = element.textContent;
      keepLine(element, shown);
      // katex.render builds DOM nodes and sets their styles through the CSSOM, which the
      // page's Content-Security-Policy allows (inline style attributes it refuses).
      window.katex.render(element.textContent, shown, { displayMode: display, throwOnError: false });
      element.replaceWith(shown);
    }
  }

  // An SVG string as nodes whose styles take effect under the page's CSP: `style` attributes
  // go through the CSSOM, `<style>` elements become constructed style sheets.
  function svgNode(markup) {
    const parsed = new DOMParser().parseFromString(markup, "image/svg+xml");
    const svg = document.importNode(parsed.documentElement, true);
    for (const element of [svg, ...svg.querySelectorAll("[style]")]) {
      const text = element.getAttribute("style");
      if (!text) continue;
      element.removeAttribute("style");
      element.style.cssText = text;
    }
    for (const style of svg.querySelectorAll("style")) {
      const sheet = new CSSStyleSheet();
      sheet.replaceSync(style.textContent);
      document.adoptedStyleSheets = [...document.adoptedStyleSheets, sheet];
      style.remove();
    }
    return svg;
  }

  let diagramCount = 0;
  async function diagrams(root) {
    const items = root.querySelectorAll("pre.mermaid-source");
    if (!items.length) return;
    await loadScript("/static/vendor/mermaid.min.js");
    const dark = window.matchMedia("(prefers-color-scheme: dark)").matches;
    window.mermaid.initialize({ startOnLoad: false, securityLevel: "strict", theme: dark ? "dark" : "default" });
    for (const element of items) {
      diagramCount += 1;
      try {
        const { svg } = await window.mermaid.render(`cairn-mermaid-${diagramCount}`, element.textContent);
        const figure = document.createElement("div");
        figure.className = "mermaid";
        keepLine(element, figure);
        figure.append(svgNode(svg));
        element.replaceWith(figure);
      } catch (err) {
        element.classList.add("mermaid-error");
        element.title = `Not drawn: ${err.message || err}`;
      }
    }
  }

  async function images(root) {
    for (const img of root.querySelectorAll("img[data-file-src]:not([src])")) {
      try {
        const response = await cairn.fetch(img.dataset.fileSrc);
        if (!response.ok) throw new Error(`HTTP ${response.status}`);
        img.src = URL.createObjectURL(await response.blob());
      } catch (err) {
        img.classList.add("broken");
      }
    }
  }

  async function media(root) {
    for (const slot of root.querySelectorAll(".embed-file[data-file-src]:not([data-loaded])")) {
      slot.dataset.loaded = "1";
      const source = slot.dataset.fileSrc;
      const name = decodeURIComponent(source.split("/").pop() || "");
      const type = MEDIA_TYPES[name.split(".").pop().toLowerCase()] || "application/octet-stream";
      try {
        const response = await cairn.fetch(source);
        if (!response.ok) throw new Error(`HTTP ${response.status}`);
        // Typed from the file's extension only, so a vault file is never read as a page.
        const url = URL.createObjectURL(new Blob([await response.blob()], { type }));
        let shown;
        if (slot.dataset.kind === "pdf") {
          shown = document.createElement("iframe");
          shown.className = "pdf";
          const page = /^page=\d+$/.test(slot.dataset.fragment || "") ? `#${slot.dataset.fragment}` : "";
          shown.src = url + page;
          shown.title = name;
        } else {
          shown = document.createElement(slot.dataset.kind === "video" ? "video" : "audio");
          shown.controls = true;
          shown.preload = "metadata";
          shown.src = url;
          shown.title = name;
        }
        slot.append(shown);
        slot.classList.add("loaded");
      } catch (err) {
        slot.textContent = `Could not load ${name}: ${err.message}`;
      }
    }
  }

  async function enhance(root) {
    await Promise.all([math(root), media(root), images(root), diagrams(root)].map((p) => p.catch((err) => console.warn(err))));
    root.dataset.enhanced = "1";
  }

  window.cairnNote = Object.freeze({ enhance });
})();
