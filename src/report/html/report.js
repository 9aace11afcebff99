// Renders each task's conversation from its embedded JSON, a page at a
// time (a transcript can hold 10,000 calls). Text only ever goes through
// textContent: the model's words and tool results never become markup.
(function () {
  "use strict";
  var PAGE = 200;
  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }
  function call(c) {
    var status = c.status || "not-run";
    var d = el("details", "call " + status);
    var s = el("summary", null,
      c.tool + " " + c.args + "  \u2192 " + status +
      (c.rule ? " (" + c.rule + (c.policy ? ", " + c.policy : "") + ")" : ""));
    d.appendChild(s);
    if (c.reason) d.appendChild(el("div", "muted", c.reason));
    d.appendChild(el("pre", null, c.content));
    return d;
  }
  function message(m) {
    var box = el("div", "msg " + m.role);
    box.appendChild(el("div", "muted", m.role === "user" ? "user" : "model"));
    if (m.text) box.appendChild(el("pre", null, m.text));
    (m.calls || []).forEach(function (c) { box.appendChild(call(c)); });
    return box;
  }
  document.querySelectorAll("div.conversation").forEach(function (host) {
    var data = JSON.parse(document.getElementById(host.dataset.src).textContent);
    var shown = 0;
    var more = el("button", null, "");
    function page() {
      var end = Math.min(shown + PAGE, data.length);
      var frag = document.createDocumentFragment();
      for (; shown < end; shown++) frag.appendChild(message(data[shown]));
      host.insertBefore(frag, more);
      more.textContent = "Show " + Math.min(PAGE, data.length - shown) + " more of " + (data.length - shown) + " messages";
      more.hidden = shown >= data.length;
    }
    more.addEventListener("click", page);
    host.appendChild(more);
    page();
  });
})();
