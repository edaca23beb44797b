// nbgraph's clickable picture (an anywidget module, shipped in the package: no CDN).
// The SVG comes from graphviz with synthetic node ids in each <g class="node"><title>; a click
// sends that id to the kernel, which knows what it stands for. Left/right arrows, while the
// inspector around this picture has focus, send a step request.

function isTyping(target) {
  if (!target || !target.closest) return false;
  return Boolean(
    target.closest("input, textarea, select, [contenteditable=''], [contenteditable='true']") ||
      target.closest(".widget-slider, .widget-hslider, .noUi-target")
  );
}

function attachKeys(model, el, tries) {
  const host = el.closest(".nbgraph-inspector");
  if (!host) {
    if (tries < 50) setTimeout(() => attachKeys(model, el, tries + 1), 100);
    return;
  }
  if (host.dataset.nbgraphKeys) return; // one listener per inspector, however many views
  host.dataset.nbgraphKeys = "1";
  if (!host.hasAttribute("tabindex")) host.setAttribute("tabindex", "0");
  // On the window, in the capture phase: before the front-end's own shortcuts (Lumino's,
  // on the document) can take the key. Only while the focus is inside this inspector.
  const onKey = (event) => {
    if (!host.isConnected) {
      window.removeEventListener("keydown", onKey, true);
      return;
    }
    if (event.key !== "ArrowLeft" && event.key !== "ArrowRight") return;
    if (!host.contains(event.target)) return;
    if (event.altKey || event.ctrlKey || event.metaKey || isTyping(event.target)) return;
    event.preventDefault();
    event.stopPropagation();
    model.send({ event: "key", key: event.key });
  };
  window.addEventListener("keydown", onKey, true);
  // a click on the inspector's background gives it the focus (buttons keep their own)
  host.addEventListener("mousedown", (event) => {
    if (!isTyping(event.target) && !event.target.closest("button")) {
      setTimeout(() => host.focus({ preventScroll: true }), 0);
    }
  });
}

function render({ model, el }) {
  el.classList.add("nbgraph-picture");
  const bar = document.createElement("div");
  bar.className = "nbgraph-picture-kinds";
  const kinds = [
    ["graph", "graph"],
    ["tree", "state tree"],
  ];
  const buttons = kinds.map(([kind, text]) => {
    const button = document.createElement("button");
    button.type = "button";
    button.textContent = text;
    button.dataset.kind = kind;
    button.className = "nbgraph-picture-kind";
    button.addEventListener("click", () => {
      model.set("kind", kind);
      model.save_changes();
    });
    bar.appendChild(button);
    return button;
  });
  const note = document.createElement("div");
  note.className = "nbgraph-picture-note";
  const picture = document.createElement("div");
  picture.className = "nbgraph-picture-svg";
  el.append(bar, note, picture);

  const mark = () => {
    const clickable = new Set(model.get("clickable"));
    const current = new Set(model.get("current"));
    for (const g of picture.querySelectorAll("g.node")) {
      const title = g.querySelector(":scope > title");
      const id = title ? title.textContent : "";
      g.classList.toggle("nbgraph-clickable", clickable.has(id));
      g.classList.toggle("nbgraph-current", current.has(id));
    }
  };
  const draw = () => {
    // graphviz's SVG: every label was escaped when the DOT was built (views.dot.label)
    picture.innerHTML = model.get("value");
    mark();
  };
  const showKind = () => {
    for (const button of buttons) {
      button.classList.toggle("nbgraph-picked", button.dataset.kind === model.get("kind"));
    }
  };
  const showNote = () => {
    note.textContent = model.get("note");
  };
  model.on("change:value", draw);
  model.on("change:clickable", mark);
  model.on("change:current", mark);
  model.on("change:kind", showKind);
  model.on("change:note", showNote);
  draw();
  showKind();
  showNote();

  picture.addEventListener("click", (event) => {
    const g = event.target.closest ? event.target.closest("g.node") : null;
    if (!g || !picture.contains(g)) return;
    const title = g.querySelector(":scope > title");
    if (!title) return;
    model.send({ event: "click", id: title.textContent });
  });
  attachKeys(model, el, 0);
  return () => {
    model.off("change:value", draw);
    model.off("change:clickable", mark);
    model.off("change:current", mark);
    model.off("change:kind", showKind);
    model.off("change:note", showNote);
  };
}

export default { render };
