// pagelens' listener hook: the one piece that lives in the page's own world (an init script,
// run in every document before the page's scripts). It notes the elements a script makes
// clickable (a click, mouse or pointer listener; an onclick property), the hosts of closed
// shadow roots and the ARIA semantics custom elements give themselves through ElementInternals
// (a role, a label, states: no other script can read them), and tells pagelens' isolated world
// about them when asked, by events whose names are secret to the run (__ASK__, __MARK__,
// __CLOSED__, __INTERNALS__ are replaced when it is installed). All it can change is which of
// the page's own elements count as clickable, and what its own custom elements say they are.
(() => {
  const ASK = "__ASK__", MARK = "__MARK__", CLOSED = "__CLOSED__", INTERNALS = "__INTERNALS__";
  const ET = EventTarget.prototype;
  const add = ET.addEventListener;
  const dispatch = ET.dispatchEvent;
  const Ev = Event;
  const CEv = CustomEvent;
  const stringify = JSON.stringify;
  const WR = WeakRef;
  const isElement = (t) => t instanceof Element;
  const CLICKY = new Set(["click", "mousedown", "mouseup", "pointerdown", "pointerup", "dblclick", "auxclick", "touchstart", "touchend"]);
  const seen = new WeakSet();
  const marked = [];
  const closed = [];
  const note = (el, list) => {
    if (!seen.has(el)) { seen.add(el); list[list.length] = new WR(el); }
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
      if (init && init.mode === "closed" && !closedSeen.has(this)) { closedSeen.add(this); closed[closed.length] = new WR(this); }
    } catch (e) { /* as above */ }
    return root;
  };
  // ElementInternals' ARIA reflection, as the attributes it stands in for (an attribute the
  // element also has wins, in pagelens' reading as in Chromium's).
  const REFLECTED = [
    ["role", "role"], ["ariaLabel", "aria-label"], ["ariaChecked", "aria-checked"], ["ariaPressed", "aria-pressed"],
    ["ariaSelected", "aria-selected"], ["ariaExpanded", "aria-expanded"], ["ariaDisabled", "aria-disabled"],
    ["ariaRequired", "aria-required"], ["ariaReadOnly", "aria-readonly"], ["ariaLevel", "aria-level"],
    ["ariaValueNow", "aria-valuenow"], ["ariaValueMin", "aria-valuemin"], ["ariaValueMax", "aria-valuemax"],
    ["ariaValueText", "aria-valuetext"], ["ariaHidden", "aria-hidden"], ["ariaHasPopup", "aria-haspopup"],
    ["ariaPlaceholder", "aria-placeholder"], ["ariaMultiSelectable", "aria-multiselectable"],
    ["ariaModal", "aria-modal"], ["ariaInvalid", "aria-invalid"], ["ariaDescription", "aria-description"],
  ];
  const withInternals = [];
  const attachInternals = HTMLElement.prototype.attachInternals;
  if (attachInternals) {
    HTMLElement.prototype.attachInternals = function () {
      const internals = attachInternals.call(this);
      try { withInternals[withInternals.length] = [new WR(this), internals]; } catch (e) { /* as above */ }
      return internals;
    };
  }
  const tellInternals = () => {
    let kept = 0;
    // Index loops, no destructuring: nothing here goes through an iterator a page can patch.
    for (let i = 0; i < withInternals.length; i++) {
      const entry = withInternals[i];
      const el = entry[0].deref();
      if (!el) continue;
      withInternals[kept++] = entry;
      if (!el.isConnected) continue;
      try {
        const said = {};
        let any = false;
        for (let j = 0; j < REFLECTED.length; j++) {
          const v = entry[1][REFLECTED[j][0]];
          if (typeof v === "string") { said[REFLECTED[j][1]] = v; any = true; }
        }
        if (any) dispatch.call(el, new CEv(INTERNALS, { bubbles: true, composed: true, detail: stringify(said) }));
      } catch (e) { /* as above */ }
    }
    withInternals.length = kept;
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
  const onAsk = () => {
    tell(marked, MARK, true);
    tell(closed, CLOSED, false);
    tellInternals(); // at every ask: a custom element's states change (a checkbox ticked)
  };
  const listen = () => add.call(document, ASK, onAsk, true); // added once, however often called
  listen();
  // document.open() (a page's document.write, Playwright's set_content) erases every listener
  // of the document; it also replaces the document's children, which a mutation observer sees:
  // the hook listens again.
  try { new MutationObserver(listen).observe(document, { childList: true }); } catch (e) { /* as above */ }
})();
