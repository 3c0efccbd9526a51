// Keyboard navigation: j/k or the arrows move through the list, Enter opens, / goes to the search box, Escape leaves it.

/**
 * `page.ids()` gives the shown rows' ids, top to bottom; `page.cursor()` / `page.setCursor(id)` the
 * highlighted row; `page.open(id)` opens one; `page.search` is the search box.
 */
export function installKeys(page) {
  document.addEventListener("keydown", (event) => {
    if (event.ctrlKey || event.metaKey || event.altKey || event.defaultPrevented) return;
    const target = event.target;
    if (target instanceof Element && target.closest("input, textarea, select")) {
      if (event.key === "Escape") target.blur();
      return;
    }
    // Enter on a focused button or link is that button's.
    if (event.key === "Enter" && target instanceof Element && target.closest("button, a, summary")) return;
    const handled = act(event.key, page);
    if (handled) event.preventDefault();
  });
}

function act(key, page) {
  switch (key) {
    case "/":
      page.search.focus();
      page.search.select();
      return true;
    case "j":
    case "ArrowDown":
      return move(page, 1);
    case "k":
    case "ArrowUp":
      return move(page, -1);
    case "Enter": {
      const cursor = page.cursor();
      if (cursor === null) return false;
      page.open(cursor);
      return true;
    }
    default:
      return false;
  }
}

function move(page, step) {
  const ids = page.ids();
  if (ids.length === 0) return false;
  const at = ids.indexOf(page.cursor());
  const next = at === -1 ? (step > 0 ? 0 : ids.length - 1) : Math.min(ids.length - 1, Math.max(0, at + step));
  page.setCursor(ids[next]);
  document.querySelector(`#rows tr[data-id="${ids[next]}"]`)?.scrollIntoView({ block: "nearest" });
  return true;
}
