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
const MARGIN = 12; // pixels kept around the followed boxes when they are scrolled into view

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

// The room the picture may take: the width its box may grow to (its max-width within its
// parent: half the inspector beside the panels, all of it stacked), and its box's max-height.
function room(el, picture) {
  const parent = el.parentElement;
  let width = picture.clientWidth || el.clientWidth;
  if (parent && parent.clientWidth > 0) {
    const style = getComputedStyle(el);
    const own = ["paddingLeft", "paddingRight", "borderLeftWidth", "borderRightWidth"];
    const spent = own.reduce((sum, name) => sum + (parseFloat(style[name]) || 0), 0);
    const max = style.maxWidth;
    let cap = parent.clientWidth;
    if (max.endsWith("%")) cap = (parent.clientWidth * parseFloat(max)) / 100;
    else if (max.endsWith("px")) cap = Math.min(cap, parseFloat(max));
    width = cap - spent;
  }
  const most = parseFloat(getComputedStyle(picture).maxHeight);
  const height = Number.isFinite(most) && most > 0 ? most : window.innerHeight * 0.7;
  return { width: Math.max(0, width), height };
}

// Where `rect` (a box on the screen) lies in `frame`'s scrolled content, in pixels.
function inContent(frame, rect) {
  const at = frame.getBoundingClientRect();
  const left = rect.left - at.left - frame.clientLeft + frame.scrollLeft;
  const top = rect.top - at.top - frame.clientTop + frame.scrollTop;
  return { left, top, right: left + rect.width, bottom: top + rect.height };
}

// The scroll offset along one axis that shows [start, end] (centred when it fits), else
// shows [first, firstEnd] (the first marked box) with as much of the rest as fits after it.
function offset(view, start, end, first, firstEnd) {
  if (end - start <= view) return (start + end) / 2 - view / 2; // (margins as room allows)
  if (firstEnd - first + 2 * MARGIN > view) return (first + firstEnd) / 2 - view / 2;
  return Math.min(Math.max(start - MARGIN, firstEnd + MARGIN - view), first - MARGIN);
}

// Scroll `frame` so that the boxes marked as the shown step are in view: all of them,
// centred, when they fit; else the first one (in the drawing's order) and what fits after it.
function follow(frame) {
  const boxes = [...frame.querySelectorAll("g.node.nbgraph-current")];
  if (!boxes.length || !frame.clientWidth) return;
  const rects = boxes.map((box) => inContent(frame, box.getBoundingClientRect()));
  const all = rects.reduce((a, r) => ({
    left: Math.min(a.left, r.left),
    top: Math.min(a.top, r.top),
    right: Math.max(a.right, r.right),
    bottom: Math.max(a.bottom, r.bottom),
  }));
  const first = rects[0];
  frame.scrollLeft = offset(frame.clientWidth, all.left, all.right, first.left, first.right);
  frame.scrollTop = offset(frame.clientHeight, all.top, all.bottom, first.top, first.bottom);
}

// Keep each step list's chosen row (an ipywidgets Select: a <select size=N>) in view.
// Chromium scrolls a list box to a row chosen while it is shown, not to one chosen while it
// was hidden (display: none; seen with Chromium 156): this scrolls it at each step change.
function showChosenRows(host) {
  if (!host) return;
  for (const list of host.querySelectorAll(".nbgraph-steps select")) {
    const row = list.options[list.selectedIndex];
    if (!row || !list.clientHeight) continue;
    const top = row.getBoundingClientRect().top - list.getBoundingClientRect().top
      - list.clientTop + list.scrollTop;
    const rowHeight = row.getBoundingClientRect().height || 16;
    if (top < list.scrollTop) list.scrollTop = Math.max(0, top - rowHeight);
    else if (top + rowHeight > list.scrollTop + list.clientHeight) {
      list.scrollTop = top + 2 * rowHeight - list.clientHeight;
    }
  }
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
  // zoom: out, fit (the default: the whole drawing in its box, never below readable
  // labels), in
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
      follow(picture); // the shown step stays in view at the new zoom
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
  zoomButton("fit", "fit the drawing to its box (labels never under 10 px)", () => {
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

  // the default zoom: the drawing fitted to its box, width and height (never above its own
  // size), but never with a label under READABLE_PX: a large drawing then scrolls, and
  // each step change scrolls the shown step into view (follow)
  const defaultZoom = () => {
    const svg = shown();
    if (!svg) return 1;
    const natural = naturalSize(svg);
    if (!(natural.width > 0 && natural.height > 0)) return 1;
    const box = room(el, picture);
    if (!(box.width > 0)) return Math.max(1, readableZoom(svg)); // (not on the page yet)
    const fit = Math.min(1, (box.width - 4) / natural.width, (box.height - 4) / natural.height);
    return Math.max(fit, readableZoom(svg));
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
      const before = current();
      const at = picture.getBoundingClientRect();
      const x = event.clientX - at.left, y = event.clientY - at.top;
      step(event.deltaY < 0 ? +1 : -1);
      size();
      const ratio = current() / before; // the point under the pointer stays there
      picture.scrollLeft = (picture.scrollLeft + x) * ratio - x;
      picture.scrollTop = (picture.scrollTop + y) * ratio - y;
    },
    { passive: false }
  );
  // Follow the shown step: once per step change (the drawing, or which boxes are marked,
  // changed), after the browser has laid the new drawing out. Never on a pan or a scroll.
  let following = 0;
  const followSoon = () => {
    cancelAnimationFrame(following);
    following = requestAnimationFrame(() => {
      observeParent();
      size();
      follow(picture);
      // the list is another widget: its row may be chosen, or its view put on the page, a
      // moment after this picture's (a <select> chosen while off the page stays unscrolled)
      for (const wait of [0, 150, 600]) {
        setTimeout(() => showChosenRows(el.closest(".nbgraph-inspector")), wait);
      }
    });
  };
  // a new room (the window, the layout): the default zoom is worked out again and the shown
  // step followed, outside the observer's callback (a size set inside it would be a resize
  // loop). Only when the room changed: a panel growing beside the picture is no reason to
  // undo a pan.
  let refit = 0;
  let roomSeen = "";
  const resized = new ResizeObserver(() => {
    if (zoom !== null) return;
    cancelAnimationFrame(refit);
    refit = requestAnimationFrame(() => {
      const box = room(el, picture);
      const seen = [box.width, box.height, picture.clientWidth, picture.clientHeight].join();
      if (seen === roomSeen) return;
      roomSeen = seen;
      size();
      follow(picture);
    });
  });
  resized.observe(picture);
  let parentSeen = null; // the box the picture's room is measured in, once on the page
  const observeParent = () => {
    if (el.parentElement && el.parentElement !== parentSeen) {
      parentSeen = el.parentElement;
      resized.observe(parentSeen);
    }
  };

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
    followSoon();
  };
  const marked = () => {
    mark();
    followSoon();
  };
  const showKind = () => {
    el.dataset.kind = model.get("kind");
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
  model.on("change:current", marked);
  model.on("change:faded", mark);
  model.on("change:kind", showKind);
  model.on("change:note", showNote);
  model.on("change:caption", showCaption);
  draw();
  showKind();
  showNote();
  showCaption();
  followSoon(); // the room is known once the view is on the page

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
    model.off("change:current", marked);
    model.off("change:faded", mark);
    model.off("change:kind", showKind);
    model.off("change:note", showNote);
    model.off("change:caption", showCaption);
    window.removeEventListener("mousemove", onMove);
    window.removeEventListener("mouseup", onUp);
    resized.disconnect();
    cancelAnimationFrame(following);
    cancelAnimationFrame(refit);
  };
}

// --- a saved notebook keeps the widget state its outputs show (issue 37: "model not found") ---
// JupyterLab's and Notebook 7's widget manager saves only models with a live comm
// (`get_state_sync`). A notebook reopened with a kernel that did not make its widgets
// (restarted, shut down, a new server) shows them from the state saved in the file, as models
// with no comm; the next save (yours, or the 2-minute autosave: restoring them marks the
// notebook changed) wrote an empty state, and the reopen after that showed "Error displaying
// widget: model not found". Once per manager, the saved state also keeps those comm-less
// models that an output of the notebook still shows (and the models inside them).
const KEEPS_SHOWN = Symbol.for("nbgraph.keepsShownWidgetState");
const VIEW = "application/vnd.jupyter.widget-view+json";

function shownModelIds(manager) {
  const context = manager._context || manager.context;
  const notebook = context && context.model ? context.model.toJSON() : null;
  const ids = [];
  for (const cell of (notebook && notebook.cells) || []) {
    for (const output of cell.outputs || []) {
      const view = output.data && output.data[VIEW];
      if (view && view.model_id) ids.push(view.model_id);
    }
  }
  return ids;
}

function modelsInside(value, models, found, depth) {
  if (!value || typeof value !== "object" || depth > 4) return;
  if (typeof value.model_id === "string" && models.get(value.model_id) === value) {
    found.push(value);
    return;
  }
  for (const item of Array.isArray(value) ? value : Object.values(value)) {
    modelsInside(item, models, found, depth + 1);
  }
}

function deadButShown(manager) {
  const models = manager._modelsSync;
  const seen = new Set();
  const dead = [];
  const todo = shownModelIds(manager).map((id) => models.get(id)).filter(Boolean);
  while (todo.length) {
    const model = todo.pop();
    if (seen.has(model)) continue;
    seen.add(model);
    if (!model.comm_live) dead.push(model);
    modelsInside(model.attributes, models, todo, 0);
  }
  return dead;
}

function keepShownWidgetState(manager) {
  if (!manager || manager[KEEPS_SHOWN] || typeof manager.get_state_sync !== "function") return;
  if (!(manager._modelsSync instanceof Map)) return; // (another manager: leave it as it is)
  const save = manager.get_state_sync;
  manager.get_state_sync = function (options) {
    let dead = [];
    try {
      dead = deadButShown(this);
    } catch (error) {
      console.warn("nbgraph: could not list the widgets the notebook shows", error);
    }
    for (const model of dead) model._comm_live = true; // (the field: no event, no redraw)
    try {
      return save.call(this, options);
    } finally {
      for (const model of dead) model._comm_live = false;
    }
  };
  manager[KEEPS_SHOWN] = true;
}

function initialize({ model }) {
  keepShownWidgetState(model.widget_manager);
}

export default { initialize, render };
