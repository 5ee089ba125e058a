// pagelens' listener hook: the one piece that lives in the page's own world (an init script,
// run in every document before the page's scripts). It notes the elements a script makes
// clickable (a click, mouse or pointer listener; an onclick property) and the hosts of closed
// shadow roots, and tells pagelens' isolated world about them when asked, by events whose
// names are secret to the run (__ASK__, __MARK__, __CLOSED__ are replaced when it is
// installed). All it can change is which of the page's own elements count as clickable.
(() => {
  const ASK = "__ASK__", MARK = "__MARK__", CLOSED = "__CLOSED__";
  const ET = EventTarget.prototype;
  const add = ET.addEventListener;
  const dispatch = ET.dispatchEvent;
  const Ev = Event;
  const WR = WeakRef;
  const isElement = (t) => t instanceof Element;
  const CLICKY = new Set(["click", "mousedown", "mouseup", "pointerdown", "pointerup", "dblclick", "auxclick", "touchstart", "touchend"]);
  const seen = new WeakSet();
  const marked = [];
  const closed = [];
  const note = (el, list) => {
    if (!seen.has(el)) { seen.add(el); list.push(new WR(el)); }
  };
  ET.addEventListener = function (type, listener, options) {
    try {
      if (listener && CLICKY.has(type) && isElement(this)) note(this, marked);
    } catch (e) { /* never in the page's way */ }
    return add.call(this, type, listener, options);
  };
  const onclick = Object.getOwnPropertyDescriptor(HTMLElement.prototype, "onclick");
  if (onclick && onclick.set) {
    Object.defineProperty(HTMLElement.prototype, "onclick", {
      ...onclick,
      set(v) {
        try { if (v) note(this, marked); } catch (e) { /* as above */ }
        return onclick.set.call(this, v);
      },
    });
  }
  const attach = Element.prototype.attachShadow;
  const closedSeen = new WeakSet();
  Element.prototype.attachShadow = function (init) {
    const root = attach.call(this, init);
    try {
      if (init && init.mode === "closed" && !closedSeen.has(this)) { closedSeen.add(this); closed.push(new WR(this)); }
    } catch (e) { /* as above */ }
    return root;
  };
  // Each noted element is told once it is in the document (the capture keeps what it was
  // told); one not yet inserted waits for a later ask. A closed host is told at every ask
  // while it is connected (the capture forgets hosts that left).
  const tell = (list, name, once) => {
    let kept = 0;
    for (let i = 0; i < list.length; i++) {
      const el = list[i].deref();
      if (!el) continue;
      const connected = el.isConnected;
      if (connected) dispatch.call(el, new Ev(name, { bubbles: true, composed: true }));
      if (!once || !connected) list[kept++] = list[i];
    }
    list.length = kept;
  };
  add.call(document, ASK, () => {
    tell(marked, MARK, true);
    tell(closed, CLOSED, false);
  }, true);
})();
