// Typeset the maths of every page with the vendored KaTeX: $...$ and \(...\) inline,
// $$...$$ and \[...\] displayed, in the pages (pymdownx.arithmatex, generic mode) and in the
// lesson notebooks. Code and pre blocks are left alone.
function typesetMaths() {
  if (typeof renderMathInElement !== "function") return;
  renderMathInElement(document.body, {
    delimiters: [
      { left: "$$", right: "$$", display: true },
      { left: "\\[", right: "\\]", display: true },
      { left: "\\(", right: "\\)", display: false },
      { left: "$", right: "$", display: false },
    ],
    ignoredClasses: ["tge-player", "highlight-ipynb", "jp-OutputArea-output"],
    throwOnError: false,
  });
}

if (typeof document$ !== "undefined") {
  document$.subscribe(typesetMaths);
} else {
  document.addEventListener("DOMContentLoaded", typesetMaths);
}
