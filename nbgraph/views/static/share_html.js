// nbgraph's shared run (views/share_html.py): a kernel-less inspector in plain JavaScript.
// It reads the run from the page's JSON data and puts every text on the page with
// textContent (never as HTML); it fetches nothing.
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("nbgraph-data").textContent);
  var S = data.strings;
  var FAILED = 1, PAUSED = 2, CACHED = 3;
  var CHANGED = 1, NOT_APPLIED = 2, CONFLICT = 4;
  var MAX_TASK_ROWS = 60;
  var steps = data.steps;
  var $ = function (id) { return document.getElementById(id); };
  var text = function (i) { return i < 0 ? "" : S[i]; };

  // the state after each step, as field -> string index, folded once from the changes
  var states = [];
  var fieldOrder = [];
  (function fold() {
    var state = {};
    var add = function (field) { if (fieldOrder.indexOf(field) < 0) fieldOrder.push(field); };
    data.initial.forEach(function (pair) { state[pair[0]] = pair[1]; add(pair[0]); });
    steps.forEach(function (step) {
      if (step[4]) {
        state = Object.assign({}, state);
        step[3].forEach(function (pair) {
          add(pair[0]);
          if (pair[1] < 0) delete state[pair[0]]; else state[pair[0]] = pair[1];
        });
      }
      states.push(state);
    });
  })();

  // node name (string index) -> the positions of the steps it ran at
  var runsOf = {};
  steps.forEach(function (step, position) {
    step[1].forEach(function (task) {
      var runs = runsOf[task[0]] || (runsOf[task[0]] = []);
      if (runs[runs.length - 1] !== position) runs.push(position);
    });
  });

  // the picture's node boxes: DOT id (its <title>) -> element, and name -> DOT ids
  var boxes = {};
  var idsOfName = {};
  var edges = [];
  var svg = document.querySelector("#nbg-picture svg");
  if (svg) {
    svg.querySelectorAll("g.node").forEach(function (g) {
      var title = g.querySelector("title");
      if (!title) return;
      var id = title.textContent;
      boxes[id] = g;
      if (Object.prototype.hasOwnProperty.call(data.ids, id)) {
        var name = data.ids[id];
        (idsOfName[name] || (idsOfName[name] = [])).push(id);
        g.classList.add("nbg-clickable");
        g.addEventListener("click", function () { clicked(name); });
      }
    });
    svg.querySelectorAll("g.edge").forEach(function (g) {
      var title = g.querySelector("title");
      if (!title) return;
      var ends = title.textContent.split("->");
      if (ends.length === 2) edges.push([ends[0].split(":")[0], ends[1].split(":")[0], g]);
    });
  }
  $("nbg-problem").textContent = data.problem || "";

  var slider = $("nbg-slider");
  slider.max = String(steps.length - 1);
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
    var counts = {};
    var order = [];
    tasks.forEach(function (task) {
      var name = text(task[0]);
      if (!(name in counts)) { counts[name] = 0; order.push(name); }
      counts[name] += 1;
    });
    return order.map(function (name) {
      return counts[name] > 1 ? name + " ×" + counts[name] : name;
    }).join(", ");
  }

  var STATUS = ["ran", "failed", "paused (interrupt)", "cached"];

  function showTasks(step) {
    var tasks = step[1];
    if (!tasks.length) return fill("nbg-tasks", step[0] === 0 ? "the input" : "no tasks");
    var shown = tasks.slice(0, MAX_TASK_ROWS);
    var nested = shown.some(function (task) { return task[3] >= 0; });
    var rows = shown.map(function (task) {
      var tr = document.createElement("tr");
      cell(tr, text(task[0]));
      cell(tr, STATUS[task[1]], task[1] === FAILED ? "nbg-bad" : "");
      cell(tr, text(task[2]));
      if (nested) cell(tr, text(task[3]));
      return tr;
    });
    var headings = ["node", "status", "triggered by"];
    var t = table(nested ? headings.concat(["ran inside"]) : headings, rows);
    fill("nbg-tasks", t);
    if (tasks.length > MAX_TASK_ROWS) {
      var more = document.createElement("p");
      more.className = "nbg-quiet";
      more.textContent = "… and " + (tasks.length - MAX_TASK_ROWS) + " more tasks (" +
        summary(tasks) + ")";
      $("nbg-tasks").appendChild(more);
    }
  }

  function showEffects(step) {
    if (!step[2].length) return fill("nbg-effects", "this step wrote nothing");
    var notesOf = function (flags) {
      var notes = [];
      if (flags & NOT_APPLIED) notes.push("not applied");
      if (flags & CONFLICT) notes.push("conflict");
      return notes.join(", ");
    };
    var anyNotes = step[2].some(function (e) { return notesOf(e[5]) !== ""; });
    var rows = step[2].map(function (e) {
      var tr = document.createElement("tr");
      cell(tr, text(e[0]));
      cell(tr, text(e[1]));
      cell(tr, text(e[2]));
      cell(tr, text(e[3]));
      cell(tr, text(e[4]), e[5] & CHANGED ? "nbg-changed" : "");
      if (anyNotes) cell(tr, notesOf(e[5]), "nbg-bad");
      return tr;
    });
    var headings = ["field", "reducer", "before", "writes", "after"];
    fill("nbg-effects", table(anyNotes ? headings.concat(["note"]) : headings, rows));
  }

  function showState(here) {
    var state = states[here];
    var changed = {};
    steps[here][2].forEach(function (e) { if (e[5] & CHANGED) changed[e[0]] = true; });
    var rows = fieldOrder.filter(function (f) { return f in state; }).map(function (f) {
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
    var lines = [];
    if (!step[4] && step[0] > 0) lines.push("This step failed: its writes never reached the state.");
    if (asked.length) lines.push("Paused here, waiting for an answer: " + summary(asked) + ".");
    lines.forEach(function (line) {
      var p = document.createElement("p");
      p.className = "nbg-bad";
      p.textContent = line;
      box.appendChild(p);
    });
    if (last && data.error >= 0) {
      var pre = document.createElement("pre");
      pre.className = "nbg-error";
      pre.textContent = text(data.error);
      box.appendChild(pre);
    }
  }

  function paint(step, previous) {
    var ran = {}, failed = {}, before = {};
    step[1].forEach(function (t) {
      (idsOfName[t[0]] || []).forEach(function (id) {
        ran[id] = true;
        if (t[1] === FAILED) failed[id] = true;
      });
    });
    (previous ? previous[1] : []).forEach(function (t) {
      (idsOfName[t[0]] || []).forEach(function (id) { before[id] = true; });
    });
    Object.keys(boxes).forEach(function (id) {
      var g = boxes[id];
      var clickable = g.classList.contains("nbg-clickable");
      g.classList.toggle("nbg-ran", !!ran[id]);
      g.classList.toggle("nbg-failed", !!failed[id]);
      g.classList.toggle("nbg-faded", clickable && step[0] > 0 && !ran[id]);
    });
    edges.forEach(function (edge) {
      edge[2].classList.toggle("nbg-taken", !!(before[edge[0]] && ran[edge[1]]));
    });
  }

  function show(here, note) {
    position = Math.max(0, Math.min(steps.length - 1, here));
    var step = steps[position];
    var last = position === steps.length - 1;
    slider.value = String(position);
    var what = step[0] === 0 ? "the input" : summary(step[1]) || "no tasks";
    var status = step[4] ? "" : " — failed";
    $("nbg-label").textContent = "step " + step[0] + " of " + steps[steps.length - 1][0] +
      ": " + what + status;
    $("nbg-note").textContent = note || "";
    paint(step, position > 0 ? steps[position - 1] : null);
    showStopped(step, last);
    showTasks(step);
    showEffects(step);
    showState(position);
  }

  function clicked(name) {
    var runs = runsOf[name] || [];
    var label = JSON.stringify(text(name));
    if (!runs.length) return show(position, label + " did not run in this run.");
    var next = runs.filter(function (p) { return p > position; })[0];
    if (next === undefined) next = runs[0];
    if (next === position) {
      var only = runs.length === 1 ? " ran only at this step." : " runs at no later step.";
      return show(position, label + only);
    }
    var wrapped = next < position ? " (its first run: no later one)" : "";
    show(next, label + " run " + (runs.indexOf(next) + 1) + " of " + runs.length + wrapped);
  }

  function stop() {
    if (timer !== null) clearInterval(timer);
    timer = null;
    $("nbg-play").textContent = "▶ play";
  }

  function play() {
    if (timer !== null) return stop();
    if (position >= steps.length - 1) show(0);
    $("nbg-play").textContent = "⏸ pause";
    timer = setInterval(function () {
      if (position >= steps.length - 1) return stop();
      show(position + 1);
    }, 700);
  }

  $("nbg-first").addEventListener("click", function () { stop(); show(0); });
  $("nbg-prev").addEventListener("click", function () { stop(); show(position - 1); });
  $("nbg-next").addEventListener("click", function () { stop(); show(position + 1); });
  $("nbg-last").addEventListener("click", function () { stop(); show(steps.length - 1); });
  $("nbg-play").addEventListener("click", play);
  slider.addEventListener("input", function () { stop(); show(Number(slider.value)); });
  document.addEventListener("keydown", function (event) {
    var target = event.target;
    if (target && target.closest && target.closest("input, textarea, select")) return;
    var moves = { ArrowLeft: position - 1, ArrowRight: position + 1, Home: 0,
                  End: steps.length - 1 };
    if (!(event.key in moves)) return;
    event.preventDefault();
    stop();
    show(moves[event.key]);
  });

  $("nbg-title").textContent = data.title;
  $("nbg-facts").textContent = data.facts.map(text).join(" · ");
  var failedAt = steps.findIndex(function (s) { return !s[4] && s[0] > 0; });
  show(failedAt >= 0 ? failedAt : Math.min(1, steps.length - 1));
})();
