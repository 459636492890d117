// The menu buttons (☰ and "Contents") of the pinned theme pair (pydata-sphinx-theme 0.20, sphinx-book-theme 1.4)
// do nothing: both themes bind their handlers to the first .primary-toggle / .secondary-toggle in the page, a
// header button that sphinx-book-theme hides, and none to the visible one in the article's header
// (pydata-sphinx-theme #2451, sphinx-book-theme #988). Forward a click on any later toggle to the first, so the
// themes' own handlers run: a dialog with the navigation on a narrow screen, the sidebar collapsed on a wide one.
document.addEventListener("DOMContentLoaded", () => {
  for (const kind of [".primary-toggle", ".secondary-toggle"]) {
    const [bound, ...unbound] = document.querySelectorAll(kind);
    for (const button of unbound) {
      button.addEventListener("click", (event) => {
        event.preventDefault();
        event.stopPropagation();
        bound.click();
      });
    }
  }
});
