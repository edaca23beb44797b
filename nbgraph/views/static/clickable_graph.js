// nbgraph's clickable picture (an anywidget module, shipped in the package: no CDN).
// The SVG comes from graphviz with synthetic node ids in each <g class="node"><title>; a click
// sends that id to the kernel, which knows what it stands for. Left/right arrows, Home and End,
// while the inspector around this picture has focus, send a step request.

function isTyping(target) {
  if (!target || !target.closest) return false;
  return Boolean(
    target.closest("input, textarea, select, [contenteditable=''], [contenteditable='true']") ||
      target.closest(".widget-slider, .widget-hslider, .noUi-target")
  );
}

const STEP_KEYS = ["ArrowLeft", "ArrowRight", "Home", "End"];

function attachKeys(model, el, tries) {
  const host = el.closest(".nbgraph-inspector");
  if (!host) {
    if (tries < 50) setTimeout(() => attachKeys(model, el, tries + 1), 100);
    return;
  }
  // the latest picture drawn in this inspector's box takes the keys (after a later cell,
  // a twin's picture takes the box: views/earlier_views.py)
  host._nbgraphSend = (message) => model.send(message);
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
    if (!STEP_KEYS.includes(event.key)) return; // (Home must not scroll the notebook)
    if (!host.contains(event.target)) return;
    if (event.altKey || event.ctrlKey || event.metaKey || isTyping(event.target)) return;
    event.preventDefault();
    event.stopPropagation();
    host._nbgraphSend({ event: "key", key: event.key });
  };
  window.addEventListener("keydown", onKey, true);
  // a click on the inspector's background gives it the focus (buttons keep their own)
  host.addEventListener("mousedown", (event) => {
    if (!isTyping(event.target) && !event.target.closest("button")) {
      setTimeout(() => host.focus({ preventScroll: true }), 0);
    }
  });
  // the focus leaving the inspector: the kernel keeps the shown step in the saved notebook
  host.addEventListener("focusout", (event) => {
    if (!host.contains(event.relatedTarget)) host._nbgraphSend({ event: "left" });
  });
}

const PT = 4 / 3; // graphviz sizes its SVG in points; the screen counts pixels
const READABLE_PX = 10; // the smallest label, in pixels, at the default zoom
const ZOOMS = [0.25, 0.35, 0.5, 0.67, 0.8, 0.9, 1, 1.25, 1.5, 2, 3];

function naturalSize(svg) {
  const points = (name) => parseFloat(svg.getAttribute(name) || "0");
  return { width: points("width") * PT, height: points("height") * PT };
}

// The zoom that keeps the smallest label READABLE_PX tall: graphviz's font sizes are in points.
function readableZoom(svg) {
  let smallest = Infinity;
  for (const text of svg.querySelectorAll("text[font-size]")) {
    const size = parseFloat(text.getAttribute("font-size"));
    if (size > 0 && size < smallest) smallest = size;
  }
  return Number.isFinite(smallest) ? READABLE_PX / (smallest * PT) : 1;
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
  // zoom: out, readable (the default: the room it has, never below readable labels), in
  let zoom = null; // null: the default zoom, worked out for each drawing
  const zoomButton = (text, title, action) => {
    const button = document.createElement("button");
    button.type = "button";
    button.textContent = text;
    button.title = title;
    button.className = "nbgraph-picture-kind nbgraph-zoom";
    button.addEventListener("click", () => {
      action();
      size();
    });
    bar.appendChild(button);
    return button;
  };
  const zoomLabel = document.createElement("span");
  zoomLabel.className = "nbgraph-zoom-label";
  const shown = () => picture.querySelector("svg");
  const current = () => (zoom === null ? defaultZoom() : zoom);
  const step = (direction) => {
    const now = current();
    const next = direction > 0 ? ZOOMS.find((z) => z > now + 1e-6) : [...ZOOMS].reverse().find((z) => z < now - 1e-6);
    zoom = next === undefined ? now : next;
  };
  zoomButton("−", "zoom out", () => step(-1));
  zoomButton("fit", "the default zoom: as much as fits, labels still readable", () => {
    zoom = null;
  });
  zoomButton("+", "zoom in", () => step(+1));
  bar.appendChild(zoomLabel);
  const caption = document.createElement("div");
  caption.className = "nbgraph-picture-caption";
  const note = document.createElement("div");
  note.className = "nbgraph-picture-note";
  const picture = document.createElement("div");
  picture.className = "nbgraph-picture-svg";
  el.append(bar, caption, note, picture);

  const defaultZoom = () => {
    const svg = shown();
    if (!svg) return 1;
    const natural = naturalSize(svg);
    const room = picture.clientWidth || el.clientWidth || natural.width;
    const fit = natural.width > 0 ? Math.min(1, (room - 4) / natural.width) : 1;
    return Math.min(1, Math.max(fit, readableZoom(svg)));
  };
  const size = () => {
    const svg = shown();
    if (!svg) return;
    const natural = naturalSize(svg);
    const z = current();
    svg.style.maxWidth = "none";
    svg.style.width = `${natural.width * z}px`;
    svg.style.height = `${natural.height * z}px`;
    zoomLabel.textContent = `${Math.round(z * 100)}%`;
    el.dataset.zoom = String(z);
  };
  // drag the picture to pan it (it scrolls inside its box)
  let drag = null;
  picture.addEventListener("mousedown", (event) => {
    if (event.button !== 0 || event.target.closest("g.node.nbgraph-clickable")) return;
    drag = { x: event.clientX, y: event.clientY, left: picture.scrollLeft, top: picture.scrollTop };
    picture.classList.add("nbgraph-panning");
  });
  const onMove = (event) => {
    if (!drag) return;
    picture.scrollLeft = drag.left - (event.clientX - drag.x);
    picture.scrollTop = drag.top - (event.clientY - drag.y);
  };
  const onUp = () => {
    drag = null;
    picture.classList.remove("nbgraph-panning");
  };
  window.addEventListener("mousemove", onMove);
  window.addEventListener("mouseup", onUp);
  picture.addEventListener(
    "wheel",
    (event) => {
      if (!event.ctrlKey) return; // ctrl + wheel zooms; the wheel alone scrolls
      event.preventDefault();
      step(event.deltaY < 0 ? +1 : -1);
      size();
    },
    { passive: false }
  );
  const resized = new ResizeObserver(() => {
    if (zoom === null) size();
  });
  resized.observe(picture);

  const mark = () => {
    const clickable = new Set(model.get("clickable"));
    const current = new Set(model.get("current"));
    const faded = new Set(model.get("faded"));
    for (const g of picture.querySelectorAll("g.node")) {
      const title = g.querySelector(":scope > title");
      const id = title ? title.textContent : "";
      g.classList.toggle("nbgraph-clickable", clickable.has(id));
      g.classList.toggle("nbgraph-current", current.has(id));
      g.classList.toggle("nbgraph-faded", faded.has(id));
    }
  };
  const draw = () => {
    // graphviz's SVG: every label was escaped when the DOT was built (views.dot.label)
    picture.innerHTML = model.get("value");
    size();
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
  const showCaption = () => {
    caption.textContent = model.get("caption");
  };
  model.on("change:value", draw);
  model.on("change:clickable", mark);
  model.on("change:current", mark);
  model.on("change:faded", mark);
  model.on("change:kind", showKind);
  model.on("change:note", showNote);
  model.on("change:caption", showCaption);
  draw();
  showKind();
  showNote();
  showCaption();
  requestAnimationFrame(size); // the room is known once the view is on the page

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
    model.off("change:faded", mark);
    model.off("change:kind", showKind);
    model.off("change:note", showNote);
    model.off("change:caption", showCaption);
    window.removeEventListener("mousemove", onMove);
    window.removeEventListener("mouseup", onUp);
    resized.disconnect();
  };
}

export default { render };
