// MathJax settings: $...$ / \(...\) inline and $$...$$ / \[...\] display math, in the pages
// (pymdownx.arithmatex, generic mode) and in the rendered lesson notebooks.
window.MathJax = {
  tex: {
    inlineMath: [["\\(", "\\)"], ["$", "$"]],
    displayMath: [["\\[", "\\]"], ["$$", "$$"]],
    processEscapes: true,
    processEnvironments: true,
  },
};

document$.subscribe(() => {
  if (window.MathJax && MathJax.typesetPromise) {
    MathJax.typesetPromise();
  }
});
