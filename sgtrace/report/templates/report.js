// sgtrace report: a click on a node shows its details; zoom, pan and search on the graphs.
// Data from the analysed tree is only ever set as text (textContent), never as markup.
(function () {
  "use strict";

  function data(id) {
    var element = document.getElementById(id);
    return element ? JSON.parse(element.textContent) : {};
  }

  var details = { f: data("focus-data"), s: data("slice-data") };
  var panel = document.getElementById("node-details");

  function add(parent, tag, text, className) {
    var element = document.createElement(tag);
    if (text !== undefined) element.textContent = text;
    if (className) element.className = className;
    parent.appendChild(element);
    return element;
  }

  function place(parent, where, link) {
    if (!link) return add(parent, "code", where);
    var anchor = add(parent, "a", where);
    anchor.href = link;
    return anchor;
  }

  function show(node) {
    var info = (details[node.id.charAt(0)] || {})[node.id];
    if (!info || !panel) return;
    document.querySelectorAll(".node.selected").forEach(function (n) { n.classList.remove("selected"); });
    node.classList.add("selected");
    panel.textContent = "";
    add(panel, "h3", info.label);
    var line = add(panel, "p");
    add(line, "strong", info.role + ": ");
    place(line, info.where, info.link);
    if (info.function) add(line, "span", " in " + info.function, "function");
    add(panel, "p", info.why, "why");
    if (info.status) add(panel, "p", "status for this run: " + info.status, "status");
    if (info.guard) add(panel, "p", "when " + info.guard, "why");
    if (info.code) add(add(panel, "pre", undefined, "code"), "code", info.code);
    (info.members || []).forEach(function (member) {
      var row = add(panel, "div", undefined, "member");
      place(row, member.where, member.link);
      add(add(row, "pre", undefined, "code"), "code", member.code);
    });
    highlight(node);
  }

  function highlight(node) {
    var svg = node.ownerSVGElement;
    svg.querySelectorAll(".edge").forEach(function (edge) {
      var touches = edge.getAttribute("data-from") === node.id || edge.getAttribute("data-to") === node.id;
      edge.classList.toggle("lit", touches);
      edge.classList.toggle("dim", !touches);
    });
  }

  document.querySelectorAll("svg.graph .node").forEach(function (node) {
    node.addEventListener("click", function () { show(node); });
    node.addEventListener("keydown", function (event) {
      if (event.key === "Enter" || event.key === " ") { event.preventDefault(); show(node); }
    });
  });

  function zoomable(frame, controls) {
    var svg = frame.querySelector("svg.graph");
    if (!svg) return null;
    var width = parseFloat(svg.getAttribute("width"));
    var height = parseFloat(svg.getAttribute("height"));
    var scale = 1;
    function apply() {
      svg.setAttribute("width", String(width * scale));
      svg.setAttribute("height", String(height * scale));
    }
    function zoom(factor, cx, cy) {
      var before = scale;
      scale = Math.min(4, Math.max(0.05, scale * factor));
      apply();
      if (cx !== undefined) {
        frame.scrollLeft = (frame.scrollLeft + cx) * (scale / before) - cx;
        frame.scrollTop = (frame.scrollTop + cy) * (scale / before) - cy;
      }
    }
    function fit() {
      scale = Math.min(1, (frame.clientWidth - 4) / width, Math.max(frame.clientHeight - 4, 200) / height);
      apply();
    }
    frame.addEventListener("wheel", function (event) {
      if (!event.ctrlKey && !event.metaKey && !event.altKey) return;
      event.preventDefault();
      var box = frame.getBoundingClientRect();
      zoom(event.deltaY < 0 ? 1.2 : 1 / 1.2, event.clientX - box.left, event.clientY - box.top);
    }, { passive: false });
    var drag = null;
    frame.addEventListener("mousedown", function (event) {
      if (event.target.closest && event.target.closest(".node")) return;
      drag = { x: event.clientX, y: event.clientY, left: frame.scrollLeft, top: frame.scrollTop };
    });
    window.addEventListener("mousemove", function (event) {
      if (!drag) return;
      frame.scrollLeft = drag.left - (event.clientX - drag.x);
      frame.scrollTop = drag.top - (event.clientY - drag.y);
    });
    window.addEventListener("mouseup", function () { drag = null; });
    if (controls) {
      controls.hidden = false;
      controls.querySelectorAll("button[data-zoom]").forEach(function (button) {
        button.addEventListener("click", function () {
          var how = button.getAttribute("data-zoom");
          if (how === "fit") fit(); else zoom(how === "in" ? 1.25 : 0.8);
        });
      });
    }
    return { fit: fit };
  }

  var focusFrame = document.getElementById("focus-frame");
  if (focusFrame) zoomable(focusFrame, document.getElementById("focus-controls"));

  var slice = document.getElementById("slice");
  var sliceFrame = document.getElementById("slice-frame");
  if (slice && sliceFrame) {
    var controls = slice.querySelector(".controls");
    zoomable(sliceFrame, controls);
    var shown = false;
    slice.addEventListener("toggle", function () {
      // at full size, on the first write of the attribute ("fit" shows it all, too small to read)
      var write = sliceFrame.querySelector(".node.seed-write");
      if (slice.open && !shown && write) { shown = true; centre(write); }
    });
    var search = document.getElementById("slice-search");
    var found = document.getElementById("slice-found");
    if (search) {
      search.addEventListener("input", function () {
        var wanted = search.value.trim().toLowerCase();
        var first = null;
        var count = 0;
        sliceFrame.querySelectorAll(".node").forEach(function (node) {
          var title = node.querySelector("title").textContent.toLowerCase();
          var hit = wanted.length > 0 && title.indexOf(wanted) >= 0;
          node.classList.toggle("match", hit);
          if (hit) { count += 1; first = first || node; }
        });
        found.textContent = wanted ? count + " found" : "";
        if (first) centre(first);
      });
    }
  }

  function centre(node) {
    var box = node.getBoundingClientRect();
    var frame = sliceFrame.getBoundingClientRect();
    sliceFrame.scrollLeft += box.left - frame.left - frame.width / 2;
    sliceFrame.scrollTop += box.top - frame.top - frame.height / 2;
  }
})();
