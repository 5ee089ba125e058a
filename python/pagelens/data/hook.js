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
  // Every built-in the hook calls later is taken now, before any script of the page runs, and
  // called through Reflect.apply as taken: a page may patch any prototype of its world afterwards
  // (a polyfill of WeakRef, Set, Function.prototype.call, an index setter on Array.prototype)
  // and change nothing here. Records and events' options have no prototype to read through.
  const apply = Reflect.apply;
  const defineOwn = Reflect.defineProperty;
  const describe = Object.getOwnPropertyDescriptor;
  const ET = EventTarget.prototype;
  const add = ET.addEventListener;
  const dispatch = ET.dispatchEvent;
  const Ev = Event;
  const CEv = CustomEvent;
  const stringify = JSON.stringify;
  const WR = WeakRef;
  const deref = WeakRef.prototype.deref;
  const setHas = Set.prototype.has;
  const weakHas = WeakSet.prototype.has;
  const weakAdd = WeakSet.prototype.add;
  const nodeType = describe(Node.prototype, "nodeType").get;
  const connected = describe(Node.prototype, "isConnected").get;
  const MO = MutationObserver;
  const observe = MutationObserver.prototype.observe;
  const isElement = (t) => {
    try { return apply(nodeType, t, []) === 1; } catch (e) { return false; } // not a node
  };
  const isConnected = (el) => apply(connected, el, []);
  const append = (list, value) => {
    defineOwn(list, list.length, { __proto__: null, value, writable: true, enumerable: true, configurable: true });
  };
  const told = (name, detail) => {
    const init = { __proto__: null, bubbles: true, composed: true };
    if (detail !== undefined) init.detail = detail;
    return detail === undefined ? new Ev(name, init) : new CEv(name, init);
  };
  const CLICKY = new Set(["click", "mousedown", "mouseup", "pointerdown", "pointerup", "dblclick", "auxclick", "touchstart", "touchend"]);
  const seen = new WeakSet();
  const marked = [];
  const closed = [];
  const note = (el, list, kept) => {
    if (!apply(weakHas, kept, [el])) { apply(weakAdd, kept, [el]); append(list, new WR(el)); }
  };
  ET.addEventListener = function (type, listener, options) {
    try {
      if (listener && apply(setHas, CLICKY, [type]) && isElement(this)) note(this, marked, seen);
    } catch (e) { /* never in the page's way */ }
    return apply(add, this, [type, listener, options]);
  };
  const onclick = describe(HTMLElement.prototype, "onclick");
  if (onclick && onclick.set) {
    const setOnclick = onclick.set;
    Object.defineProperty(HTMLElement.prototype, "onclick", {
      __proto__: null,
      get: onclick.get,
      enumerable: onclick.enumerable,
      configurable: onclick.configurable,
      set(v) {
        try { if (v) note(this, marked, seen); } catch (e) { /* as above */ }
        return apply(setOnclick, this, [v]);
      },
    });
  }
  const attach = Element.prototype.attachShadow;
  const closedSeen = new WeakSet();
  Element.prototype.attachShadow = function (init) {
    const root = apply(attach, this, [init]);
    try {
      if (init && init.mode === "closed") note(this, closed, closedSeen);
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
      const internals = apply(attachInternals, this, []);
      try { append(withInternals, [new WR(this), internals]); } catch (e) { /* as above */ }
      return internals;
    };
  }
  const tellInternals = () => {
    let kept = 0;
    // Index loops, no destructuring: nothing here goes through an iterator a page can patch.
    for (let i = 0; i < withInternals.length; i++) {
      const entry = withInternals[i];
      const el = apply(deref, entry[0], []);
      if (!el) continue;
      withInternals[kept++] = entry;
      if (!isConnected(el)) continue;
      try {
        const said = { __proto__: null };
        let any = false;
        for (let j = 0; j < REFLECTED.length; j++) {
          const v = entry[1][REFLECTED[j][0]];
          if (typeof v === "string") { said[REFLECTED[j][1]] = v; any = true; }
        }
        if (any) apply(dispatch, el, [told(INTERNALS, stringify(said))]);
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
      const el = apply(deref, list[i], []);
      if (!el) continue;
      const inDocument = isConnected(el);
      if (inDocument) apply(dispatch, el, [told(name)]);
      if (!once || !inDocument) list[kept++] = list[i];
    }
    list.length = kept;
  };
  const onAsk = () => {
    tell(marked, MARK, true);
    tell(closed, CLOSED, false);
    tellInternals(); // at every ask: a custom element's states change (a checkbox ticked)
  };
  const listen = () => apply(add, document, [ASK, onAsk, true]); // added once, however often called
  listen();
  // document.open() (a page's document.write, Playwright's set_content) erases every listener
  // of the document; it also replaces the document's children, which a mutation observer sees:
  // the hook listens again.
  try { apply(observe, new MO(listen), [document, { __proto__: null, childList: true }]); } catch (e) { /* as above */ }
})();
