// nbgraph's shared run (views/share_html.py): a kernel-less inspector in plain JavaScript.
// It reads the run (and its subruns) from the page's JSON data and puts every text on the
// page with textContent (never as HTML); it fetches nothing.
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("nbgraph-data").textContent);
  var S = data.strings;
  var FAILED = 1, PAUSED = 2, CACHED = 3;
  var WHOLE = "\n\nthe whole traceback:\n";  // (share_html.py `_error_text` puts it there)
  var CHANGED = 1, NOT_APPLIED = 2, CONFLICT = 4;
  var MAX_TASK_ROWS = 60;
  var $ = function (id) { return document.getElementById(id); };
  var text = function (i) { return i < 0 ? "" : S[i]; };
  var own = function (object, key) { return Object.prototype.hasOwnProperty.call(object, key); };

  function columnReader(names) {
    // a row's cell by column name, through the names the data gives once (`effectColumns`):
    // a column added or moved in share_html.py is still read right, a missing one is an error
    var at = Object.create(null);
    names.forEach(function (name, index) { at[name] = index; });
    return function (row, name) {
      if (!(name in at)) throw new Error("the page's data has no column " + name);
      return row[at[name]];
    };
  }
  var effect = columnReader(data.effectColumns);  // effect(e, "field"): an effect row's cell

  // the runs: 0 is the run itself, k the subrun data.subruns[k - 1]
  var runs = [{ name: -1, label: -1, parent: -1, at: null, status: data.status, error: data.error,
                picture: data.picture, initial: data.initial, steps: data.steps }]
    .concat(data.subruns);
  var childrenOf = Object.create(null);  // "run:step position:task position" -> the runs that task started
  runs.forEach(function (r, index) {
    if (r.parent < 0) return;
    var key = r.parent + ":" + r.at[0] + ":" + r.at[1];
    (childrenOf[key] || (childrenOf[key] = [])).push(index);
  });

  function prepare(r) {
    // the state after each step, as field -> string index, folded once from the changes;
    // and node name (string index) -> the positions of the steps it ran at
    if (r.states) return r;
    var state = {};
    r.states = [];
    r.fieldOrder = [];
    var add = function (field) { if (r.fieldOrder.indexOf(field) < 0) r.fieldOrder.push(field); };
    r.initial.forEach(function (pair) { state[pair[0]] = pair[1]; add(pair[0]); });
    r.steps.forEach(function (step) {
      if (step[4]) {
        state = Object.assign({}, state);
        step[3].forEach(function (pair) {
          add(pair[0]);
          if (pair[1] < 0) delete state[pair[0]]; else state[pair[0]] = pair[1];
        });
      }
      r.states.push(state);
    });
    r.runsOf = {};
    r.steps.forEach(function (step, position) {
      step[1].forEach(function (task) {
        var list = r.runsOf[task[0]] || (r.runsOf[task[0]] = []);
        if (list[list.length - 1] !== position) list.push(position);
      });
    });
    return r;
  }

  // a graph's picture: DOT id (its <title>) -> element, and node name -> DOT ids
  var pictures = data.pictures.map(function (info, index) {
    var holder = document.querySelector('.nbg-graph[data-picture="' + index + '"]');
    var p = { holder: holder, info: info, boxes: Object.create(null), idsOfName: Object.create(null), edges: [] };
    var svg = holder && holder.querySelector("svg");
    if (!svg) return p;
    svg.querySelectorAll("g.node").forEach(function (g) {
      var title = g.querySelector("title");
      if (!title) return;
      var id = title.textContent;
      p.boxes[id] = g;
      if (own(info.ids, id)) {
        var name = info.ids[id];
        (p.idsOfName[name] || (p.idsOfName[name] = [])).push(id);
        g.classList.add("nbg-clickable");
        g.addEventListener("click", function () { clicked(name); });
      }
    });
    svg.querySelectorAll("g.edge").forEach(function (g) {
      var title = g.querySelector("title");
      if (!title) return;
      var ends = title.textContent.split("->");
      if (ends.length === 2) p.edges.push([ends[0].split(":")[0], ends[1].split(":")[0], g]);
    });
    return p;
  });

  // the state tree: "run:step" -> its boxes; a click opens that run at that step
  var treeBoxes = Object.create(null);
  var marked = [];
  var treeSvg = document.querySelector("#nbg-tree svg");
  if (treeSvg) {
    treeSvg.querySelectorAll("g.node").forEach(function (g) {
      var title = g.querySelector("title");
      if (!title || !own(data.tree.ids, title.textContent)) return;
      var target = data.tree.ids[title.textContent];
      var key = target[0] + ":" + target[1];
      (treeBoxes[key] || (treeBoxes[key] = [])).push(g);
      g.classList.add("nbg-clickable");
      g.addEventListener("click", function () {
        stop();
        openRun(target[0], target[1], "opened from the state tree");
      });
    });
  }
  $("nbg-tree-problem").textContent = data.tree.problem || "";

  var slider = $("nbg-slider");
  var R = null;       // the run shown
  var current = 0;    // its index
  var P = null;       // its picture
  var position = 0;
  var timer = null;

  function cell(row, value, className) {
    var td = document.createElement("td");
    td.textContent = value;
    if (className) td.className = className;
    row.appendChild(td);
    return td;
  }

  function table(headings, rows) {
    var t = document.createElement("table");
    var head = document.createElement("tr");
    headings.forEach(function (h) {
      var th = document.createElement("th");
      th.textContent = h;
      head.appendChild(th);
    });
    t.appendChild(head);
    rows.forEach(function (r) { t.appendChild(r); });
    return t;
  }

  // "1 more task", "2 more tasks": a count and its words, plural unless the count is 1
  function plural(count, words) {
    return count + " " + words + (count === 1 ? "" : "s");
  }

  function fill(id, node) {
    var box = $(id);
    box.textContent = "";
    if (typeof node === "string") {
      var p = document.createElement("p");
      p.className = "nbg-quiet";
      p.textContent = node;
      box.appendChild(p);
    } else {
      box.appendChild(node);
    }
  }

  function summary(tasks) {
    var counts = new Map();  // (not a plain object: a node may be named "constructor")
    tasks.forEach(function (task) {
      var name = text(task[0]);
      counts.set(name, (counts.get(name) || 0) + 1);
    });
    return Array.from(counts, function (pair) {
      return pair[1] > 1 ? pair[0] + " ×" + pair[1] : pair[0];
    }).join(", ");
  }

  function paused(step) {
    // a step whose writes never reached the state because a task asked (none failed)
    return !step[4] && step[1].some(function (t) { return t[1] === PAUSED; }) &&
      !step[1].some(function (t) { return t[1] === FAILED; });
  }

  var STATUS = ["ran", "failed", "paused (interrupt)", "cached"];

  function insideCell(tr, task, taskPosition) {
    var td = cell(tr, text(task[3]));
    (childrenOf[current + ":" + position + ":" + taskPosition] || []).forEach(function (k) {
      var open = document.createElement("button");
      open.type = "button";
      open.className = "nbg-open";
      open.textContent = "open ▸ " + text(runs[k].label);
      open.addEventListener("click", function () { stop(); openRun(k, null); });
      td.appendChild(document.createElement("br"));
      td.appendChild(open);
    });
  }

  function showTasks(step) {
    var tasks = step[1];
    if (!tasks.length) return fill("nbg-tasks", step[0] === 0 ? "the input" : "no tasks");
    var shown = tasks.slice(0, MAX_TASK_ROWS);
    var nested = shown.some(function (task) { return task[3] >= 0; });
    var rows = shown.map(function (task, taskPosition) {
      var tr = document.createElement("tr");
      cell(tr, text(task[0]));
      cell(tr, STATUS[task[1]], task[1] === FAILED ? "nbg-bad" : "");
      cell(tr, text(task[2]));
      if (nested) insideCell(tr, task, taskPosition);
      return tr;
    });
    var headings = ["node", "status", "triggered by"];
    var t = table(nested ? headings.concat(["ran inside"]) : headings, rows);
    fill("nbg-tasks", t);
    if (tasks.length > MAX_TASK_ROWS) {
      var more = document.createElement("p");
      more.className = "nbg-quiet";
      more.textContent = "… and " + plural(tasks.length - MAX_TASK_ROWS, "more task") + " (" +
        summary(tasks) + ")";
      $("nbg-tasks").appendChild(more);
    }
  }

  function showEffects(step) {
    if (!step[2].length) return fill("nbg-effects", "this step wrote nothing");
    var notesOf = function (flags) {
      var notes = [];
      if (flags & NOT_APPLIED) notes.push(paused(step) ? "paused (waiting for an answer)" : "not applied");
      if (flags & CONFLICT) notes.push("conflict");
      return notes.join(", ");
    };
    var anyNotes = step[2].some(function (e) { return notesOf(effect(e, "flags")) !== ""; });
    var rows = step[2].map(function (e) {
      var tr = document.createElement("tr");
      var flags = effect(e, "flags");
      cell(tr, text(effect(e, "field")));
      cell(tr, text(effect(e, "reducer")));
      cell(tr, text(effect(e, "before")));
      cell(tr, text(effect(e, "writes")));
      cell(tr, text(effect(e, "after")), flags & CHANGED ? "nbg-changed" : "");
      if (anyNotes) cell(tr, notesOf(flags), paused(step) ? "nbg-paused" : "nbg-bad");
      return tr;
    });
    var headings = ["field", "reducer", "before", "writes", "after"];
    fill("nbg-effects", table(anyNotes ? headings.concat(["note"]) : headings, rows));
  }

  function showState(here) {
    var state = R.states[here];
    var changed = {};
    R.steps[here][2].forEach(function (e) {
      if (effect(e, "flags") & CHANGED) changed[effect(e, "field")] = true;
    });
    var rows = R.fieldOrder.filter(function (f) { return f in state; }).map(function (f) {
      var tr = document.createElement("tr");
      cell(tr, text(f));
      cell(tr, text(state[f]), changed[f] ? "nbg-changed" : "");
      return tr;
    });
    if (!rows.length) return fill("nbg-state", "empty");
    fill("nbg-state", table(["field", "value"], rows));
  }

  function showStopped(step, last) {
    var box = $("nbg-stopped");
    box.textContent = "";
    var asked = step[1].filter(function (t) { return t[1] === PAUSED; });
    var lines = [];  // [text, class]: a failure in red, a pause not (it waits, it did not fail)
    if (!step[4] && step[0] > 0 && !paused(step)) {
      lines.push(["This step failed: its writes never reached the state.", "nbg-bad"]);
    }
    if (asked.length) {
      lines.push(["Paused here, waiting for an answer: " + summary(asked) + ".", "nbg-paused"]);
    }
    lines.forEach(function (line) {
      var p = document.createElement("p");
      p.className = line[1];
      p.textContent = line[0];
      box.appendChild(p);
    });
    if (last && R.error >= 0) showError(box, text(R.error));
  }

  // The error where the node's own code raised it, as the inspector shows it; Python's whole
  // traceback (the engine's frames first) folded under it (share_html.py `_error_text`).
  function showError(box, error) {
    var cut = error.indexOf(WHOLE);
    var pre = document.createElement("pre");
    pre.className = "nbg-error";
    pre.textContent = cut < 0 ? error : error.slice(0, cut);
    box.appendChild(pre);
    if (cut < 0) return;
    var more = document.createElement("details");
    more.className = "nbg-traceback";
    var head = document.createElement("summary");
    head.textContent = "the whole traceback";
    var whole = document.createElement("pre");
    whole.className = "nbg-error";
    whole.textContent = error.slice(cut + WHOLE.length);
    more.appendChild(head);
    more.appendChild(whole);
    box.appendChild(more);
  }

  function paint(step, previous) {
    if (!P) return;
    var ran = Object.create(null), failed = Object.create(null), before = Object.create(null);
    step[1].forEach(function (t) {
      (P.idsOfName[t[0]] || []).forEach(function (id) {
        ran[id] = true;
        if (t[1] === FAILED) failed[id] = true;
      });
    });
    (previous ? previous[1] : []).forEach(function (t) {
      (P.idsOfName[t[0]] || []).forEach(function (id) { before[id] = true; });
    });
    Object.keys(P.boxes).forEach(function (id) {
      var g = P.boxes[id];
      var clickable = g.classList.contains("nbg-clickable");
      g.classList.toggle("nbg-ran", !!ran[id]);
      g.classList.toggle("nbg-failed", !!failed[id]);
      g.classList.toggle("nbg-faded", clickable && step[0] > 0 && !ran[id]);
    });
    P.edges.forEach(function (edge) {
      edge[2].classList.toggle("nbg-taken", !!(before[edge[0]] && ran[edge[1]]));
    });
  }

  function markTree(step) {
    marked.forEach(function (g) { g.classList.remove("nbg-current"); });
    marked = treeBoxes[current + ":" + step[0]] || [];
    marked.forEach(function (g) { g.classList.add("nbg-current"); });
  }

  function show(here, note) {
    var steps = R.steps;
    position = Math.max(0, Math.min(steps.length - 1, here));
    var step = steps[position];
    var last = position === steps.length - 1;
    slider.value = String(position);
    var what = step[0] === 0 ? "the input" : summary(step[1]) || "no tasks";
    var status = step[4] ? "" : paused(step) ? " — paused" : " — failed";
    var where = current === 0 ? "" : text(R.name) + ", ";
    $("nbg-label").textContent = where + "step " + step[0] + " of " +
      steps[steps.length - 1][0] + ": " + what + status;
    $("nbg-note").textContent = note || "";
    paint(step, position > 0 ? steps[position - 1] : null);
    markTree(step);
    showStopped(step, last);
    showTasks(step);
    showEffects(step);
    showState(position);
  }

  function firstShown(r) {
    var failedAt = r.steps.findIndex(function (s) { return !s[4] && s[0] > 0 && !paused(s); });
    return failedAt >= 0 ? failedAt : Math.min(1, r.steps.length - 1);
  }

  function openRun(index, stepNumber, note) {
    current = index;
    R = prepare(runs[index]);
    var picture = pictures[R.picture] || null;
    pictures.forEach(function (p) { if (p.holder) p.holder.hidden = p !== picture; });
    P = picture;
    $("nbg-problem").textContent = picture ? picture.info.problem || "" : "";
    slider.max = String(R.steps.length - 1);
    $("nbg-run").value = String(index);
    $("nbg-back").disabled = R.parent < 0;
    var here = stepNumber === null ? firstShown(R) :
      R.steps.findIndex(function (s) { return s[0] === stepNumber; });
    show(here < 0 ? 0 : here, note);
  }

  function clicked(name) {
    var list = R.runsOf[name] || [];
    var label = JSON.stringify(text(name));
    if (!list.length) return show(position, label + " did not run in this run.");
    var next = list.filter(function (p) { return p > position; })[0];
    if (next === undefined) next = list[0];
    if (next === position) {
      var only = list.length === 1 ? " ran only at this step." : " runs at no later step.";
      return show(position, label + only);
    }
    var wrapped = next < position ? " (its first run: no later one)" : "";
    show(next, label + " run " + (list.indexOf(next) + 1) + " of " + list.length + wrapped);
  }

  function stop() {
    if (timer !== null) clearInterval(timer);
    timer = null;
    $("nbg-play").textContent = "▶ play";
  }

  function play() {
    if (timer !== null) return stop();
    if (position >= R.steps.length - 1) show(0);
    $("nbg-play").textContent = "⏸ pause";
    timer = setInterval(function () {
      if (position >= R.steps.length - 1) return stop();
      show(position + 1);
    }, 700);
  }

  // the list of runs, shown only when there are subruns
  var picker = $("nbg-run");
  runs.forEach(function (r, index) {
    var option = document.createElement("option");
    option.value = String(index);
    option.textContent = index === 0 ? "the run" : text(r.label);
    picker.appendChild(option);
  });
  if (runs.length > 1 || data.left_out) $("nbg-runs").hidden = false;
  if (data.left_out) {
    $("nbg-left-out").textContent = plural(data.left_out, "more subrun") + " ran, not in this file";
  }
  picker.addEventListener("change", function () { stop(); openRun(Number(picker.value), null); });
  $("nbg-back").addEventListener("click", function () {
    if (R.parent < 0) return;
    stop();
    var at = R.at;
    openRun(R.parent, runs[R.parent].steps[at[0]][0], "back where that run started");
  });

  $("nbg-first").addEventListener("click", function () { stop(); show(0); });
  $("nbg-prev").addEventListener("click", function () { stop(); show(position - 1); });
  $("nbg-next").addEventListener("click", function () { stop(); show(position + 1); });
  $("nbg-last").addEventListener("click", function () { stop(); show(R.steps.length - 1); });
  $("nbg-play").addEventListener("click", play);
  slider.addEventListener("input", function () { stop(); show(Number(slider.value)); });
  document.addEventListener("keydown", function (event) {
    var target = event.target;
    if (target && target.closest && target.closest("input, textarea, select")) return;
    var moves = { ArrowLeft: position - 1, ArrowRight: position + 1, Home: 0,
                  End: R.steps.length - 1 };
    if (!(event.key in moves)) return;
    event.preventDefault();
    stop();
    show(moves[event.key]);
  });

  $("nbg-title").textContent = data.title;
  $("nbg-facts").textContent = data.facts.map(text).join(" · ");
  openRun(0, null);
})();
