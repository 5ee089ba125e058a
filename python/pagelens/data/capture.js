// pagelens' capture: run in an isolated world of a frame (Page.createIsolatedWorld), where
// nothing the page defines or patches is visible: prototypes, getters, WeakMap and
// checkVisibility are the browser's own. One flat, iterative pass over the document (open
// shadow roots through their slots, same-origin frames in the same pass), producing rows the
// Rust core reads directly (pagelens/docs/spec/observation.md section 1b):
//
//   {x: [ids of <iframe>s whose document was not read], next: the next id, frames: how many
//    frame documents the pass read, origin: the document's performance.timeOrigin, v: 2,
//    s: [strings], r: "rows", closed: [ids of closed shadow hosts], truncated: bool}
//
// r holds one row per node, in document order (parents first), as numbers written in 64 ASCII
// characters (zigzag, five bits a character, see emit()):
//   id (minus the previous row's), parent (how many rows back; 0: none), role, name (-1: none),
//   flags, then value if flags & 16, hint if flags & 32, and if flags & 64 a count of
//   properties and that many triples: name, kind (0 bool, 1 int, 2 string, 3 number as a
//   string), value. Roles, names, values, hints and property names are indices into s.
// flags: 1 name from contents, 2 clickable (a script listens for clicks, or an unnamed link or
// button with a hint), 4 ignored (a block container that only separates text), 8 a document root.
//
// Ids: one per node for as long as it lives (a WeakMap), from one counter per registry (per
// world: per frame document) that never runs below options.base (the caller's highest id
// so far: no id is ever given twice in a run, across documents and frames); `lookup(id)`
// gives the live node back to an action.
(() => {
  "use strict";
  if (globalThis.__pagelens) return;

  const ids = new WeakMap();
  const byId = new Map();
  let next = 1;
  // Elements the page's world reported as listening for clicks, or as hosts of closed shadow
  // roots (see hook.js). The hook reports each element once it is in the document, so both
  // are kept for the document's life: a capture costs what is new, not every listener.
  const clickable = new WeakSet();
  const closedHosts = new Set();
  // What custom elements said of themselves through ElementInternals (see hook.js): element ->
  // { "role": ..., "aria-checked": ... }, told again at every pass.
  const internalsOf = new WeakMap();
  let anyInternals = false;
  const parseJSON = JSON.parse;
  let lastUnread = [];

  function idOf(node) {
    let id = ids.get(node);
    if (id === undefined) {
      id = next++;
      ids.set(node, id);
      byId.set(id, new WeakRef(node));
    }
    return id;
  }

  // A node Chromium has and the DOM has not as such (a list item's marker, a select's popup):
  // an id of its own, stable as the element's, that an action takes to the element.
  const aux = new WeakMap();
  function auxId(el, slot) {
    let held = aux.get(el);
    if (!held) aux.set(el, (held = []));
    if (held[slot] === undefined) {
      held[slot] = next++;
      byId.set(held[slot], new WeakRef(el));
    }
    return held[slot];
  }

  function lookup(id) {
    const ref = byId.get(id);
    const node = ref && ref.deref();
    if (!node) return null;
    return node.isConnected ? node : null;
  }

  // The ids of a document that replaced one as it was (a failed navigation went back to it,
  // a reload gave the same page): each [id here, id it had there] pair names the node by the
  // old id from now on, so that what the agent read still names the same thing. All or none:
  // a pair whose node is gone, or whose old id names something here, leaves every id as it was.
  // The next pass reads whole (the last one's rows carry the ids given here).
  function adopt(pairs) {
    const moves = [], taken = new Set();
    for (const [now, was] of pairs) {
      const ref = byId.get(now);
      const node = ref && ref.deref();
      if (!node || byId.has(was) || taken.has(was) || taken.has(now)) return false;
      taken.add(was).add(now);
      moves.push([now, was, ref, node]);
    }
    for (const [now, was, ref, node] of moves) {
      byId.delete(now);
      byId.set(was, ref);
      if (ids.get(node) === now) ids.set(node, was);
      const held = aux.get(node);
      if (held) for (let i = 0; i < held.length; i++) if (held[i] === now) held[i] = was;
    }
    last = null;
    return true;
  }

  // Entries whose node is gone (a long-lived app replaces its lists all day).
  function prune() {
    if (byId.size < 4096) return;
    for (const [id, ref] of byId) if (!ref.deref()) byId.delete(id);
  }

  const XHTML = "http://www.w3.org/1999/xhtml";
  const SKIP = new Set([
    "script", "style", "template", "head", "noscript", "meta", "link", "title", "base",
    "param", "source", "track", "datalist",
  ]);
  // Elements that start a block: their text never runs into a neighbour's (no computed style
  // is asked for this; a span styled as a block is the rare miss).
  const BLOCK = new Set([
    "address", "article", "aside", "blockquote", "body", "center", "dd", "details", "dialog",
    "dir", "div", "dl", "dt", "fieldset", "figcaption", "figure", "footer", "form", "h1", "h2",
    "h3", "h4", "h5", "h6", "header", "hgroup", "hr", "html", "legend", "li", "main", "menu",
    "nav", "ol", "p", "pre", "section", "summary", "table", "tbody", "td", "tfoot", "th",
    "thead", "tr", "ul", "caption", "search", "option", "optgroup", "select", "textarea",
    "iframe", "video", "audio", "canvas", "img", "input", "button",
  ]);
  const COLLAPSE = 0, PRESERVE_BREAKS = 1, PRESERVE = 2, WS_MASK = 3;
  // The rows' 64 characters (none needs escaping in JSON), and the flags that say which
  // optional fields a row has.
  const DIGITS = Uint8Array.from("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_", (c) => c.charCodeAt(0));
  const DIGIT_OF = new Uint8Array(128); // a character's digit, for reading rows back
  DIGITS.forEach((c, d) => { DIGIT_OF[c] = d; });
  const HAS_VALUE = 16, HAS_HINT = 32, HAS_PROPS = 64;
  // Allocated once: the walk asks these of every node.
  const NO_PROPS = Object.freeze([]);
  const VISIBILITY = Object.freeze({ visibilityProperty: true });
  const UPPER = 4, LOWER = 8, CAPITALIZE = 12, CASE_MASK = 12;
  // Its contents are not rendered (content-visibility: hidden; hidden="until-found"): its own
  // text is not read (an element inside says so itself through checkVisibility).
  const CONTENTS_HIDDEN = 32;

  // How an element shows its text: white space (CSS white-space-collapse) and case
  // (text-transform), and whether its contents are rendered, as Chromium's text reads them. One
  // style read per parent of text, once.
  let textStyleOf = new Map();
  function textStyle(el) {
    if (!el || el.nodeType !== 1) return COLLAPSE;
    let mode = textStyleOf.get(el);
    if (mode === undefined) {
      const st = getComputedStyle(el);
      const c = st.whiteSpaceCollapse || st.whiteSpace;
      mode = c === "preserve" || c === "break-spaces" || c === "pre" || c === "pre-wrap" ? PRESERVE
        : c === "preserve-breaks" || c === "pre-line" ? PRESERVE_BREAKS : COLLAPSE;
      const t = st.textTransform;
      if (t === "uppercase") mode |= UPPER;
      else if (t === "lowercase") mode |= LOWER;
      else if (t === "capitalize") mode |= CAPITALIZE;
      if (st.contentVisibility === "hidden") mode |= CONTENTS_HIDDEN;
      textStyleOf.set(el, mode);
    }
    return mode;
  }
  // Laid out in a box of its own: asked only where a name's words meet at its edge.
  let ownBoxOf = new Map();
  function ownBox(el) {
    let own = ownBoxOf.get(el);
    if (own === undefined) {
      const d = getComputedStyle(el).display;
      own = d !== "inline" && d !== "contents" && d !== "none";
      ownBoxOf.set(el, own);
    }
    return own;
  }

  function transform(text, how) {
    if (how === UPPER) return text.toUpperCase();
    if (how === LOWER) return text.toLowerCase();
    return text.replace(/(^|[^\p{L}\p{N}'’])(\p{L})/gu, (m, a, b) => a + b.toUpperCase());
  }
  const SECTIONING = new Set(["article", "aside", "main", "nav", "section"]);
  const LIST_TAGS = new Set(["ul", "ol", "menu", "dir"]);
  const ASIDE_SCOPES = new Set(["article", "aside", "nav", "section"]);
  // The roles that scope as those elements do. Not `region`: only a <section> scopes (named or
  // not), a div given role=region does not (Chromium's reading).
  const ROLE_SCOPE = { article: "article", complementary: "aside", main: "main", navigation: "nav" };
  // Roles whose name comes from their contents (accname 1.2, WAI-ARIA's "name from: contents").
  const FROM_CONTENTS = new Set([
    "button", "cell", "checkbox", "columnheader", "gridcell", "heading", "link", "menuitem",
    "menuitemcheckbox", "menuitemradio", "option", "radio", "rowheader", "switch", "tab",
    "tooltip", "treeitem", "DisclosureTriangle", "DisclosureTriangleGrouped", "term",
  ]);
  // Roles that never lend their contents to a name they sit in (Chromium's reading of
  // accname's "name from contents": containers of many things).
  const NO_CONTENTS = new Set([
    "alert", "alertdialog", "application", "Audio", "article", "banner", "blockquote",
    "ColorWell", "complementary", "contentinfo", "dialog", "document", "EmbeddedObject", "feed",
    "figure", "form", "grid", "group", "Iframe", "listbox", "log", "main", "marquee", "math",
    "MenuListPopup", "menu", "menubar", "navigation", "note", "radiogroup", "region", "RootWebArea",
    "search", "SvgRoot", "table", "tablist", "tabpanel", "timer", "toolbar", "tree", "treegrid",
    "Video",
  ]);
  // Roles WAI-ARIA forbids naming but by aria-label: a title is only their description.
  const NAME_PROHIBITED = new Set([
    "generic", "caption", "code", "deletion", "emphasis", "insertion", "paragraph", "strong",
    "subscript", "superscript", "time", "mark", "none",
  ]);
  // Roles that take a name from their contents only when focusable.
  const CONDITIONAL = new Set([
    "generic", "Abbr", "Canvas", "caption", "code", "deletion", "insertion", "definition",
    "DescriptionList", "emphasis", "Figcaption", "LabelText", "Legend", "mark",
    "paragraph", "strong", "subscript", "superscript", "time", "row",
  ]);
  // ARIA roles taken as they are written (Chromium's names for them are the same).
  const ARIA = new Set([
    "alert", "alertdialog", "application", "article", "banner", "blockquote", "button", "caption",
    "cell", "checkbox", "code", "columnheader", "combobox", "comment", "complementary",
    "contentinfo", "definition", "deletion", "dialog", "document", "emphasis", "feed", "figure",
    "form", "generic", "grid", "gridcell", "group", "heading", "insertion", "link", "list",
    "listbox", "listitem", "log", "main", "mark", "marquee", "math", "menu", "menubar",
    "menuitem", "menuitemcheckbox", "menuitemradio", "meter", "navigation", "note", "option",
    "paragraph", "progressbar", "radio", "radiogroup", "region", "row", "rowgroup", "rowheader",
    "scrollbar", "search", "searchbox", "separator", "slider", "spinbutton", "status", "strong",
    "subscript", "superscript", "switch", "tab", "table", "tablist", "tabpanel", "term",
    "textbox", "time", "timer", "toolbar", "tooltip", "tree", "treegrid", "treeitem",
    "sectionheader", "sectionfooter",
  ]);
  const ARIA_ALIAS = { img: "image", image: "image", directory: "list", presentation: "none", none: "none" };
  const WIDGET = new Set([
    "button", "checkbox", "combobox", "link", "listbox", "menuitem", "menuitemcheckbox",
    "menuitemradio", "option", "radio", "searchbox", "slider", "spinbutton", "switch", "tab",
    "textbox", "treeitem", "gridcell", "Date", "DateTime", "InputTime",
  ]);
  // Chromium's roles for the date and time fields: text fields whose value is a date or time.
  const DATE_FIELD = new Set(["Date", "DateTime", "InputTime"]);
  const TEXT_INPUT = new Set(["text", "email", "tel", "url", "password", ""]);

  function block(el) {
    return BLOCK.has(el.localName);
  }

  function collapse(s) {
    return s.replace(/[\t\n\f\r ]+/g, " ").trim();
  }

  // An ARIA attribute (or the role) as the element says it: its own attribute, else what its
  // ElementInternals say (a custom element's default semantics).
  function aria(el, name) {
    const v = el.getAttribute(name);
    if (v !== null || !anyInternals) return v;
    const said = internalsOf.get(el);
    return said !== undefined && Object.prototype.hasOwnProperty.call(said, name) ? said[name] : null;
  }

  function nonEmpty(v) {
    return v !== null && v !== undefined && v.trim() !== "";
  }

  // Whether an element is scoped to sectioning content (HTML-AAM's header, footer, aside): an
  // ancestor in the flat tree (across shadow roots, through the slot a node is assigned to) that
  // is a sectioning element under its own role, or any element given a sectioning role. A
  // sectioning element given another role (`<section role="generic">`) scopes nothing.
  function inSectioning(el, scopes) {
    scopes = scopes || SECTIONING;
    for (let p = flatParent(el); p; p = flatParent(p)) {
      if (p.nodeType !== 1) continue; // a shadow root or the document
      const stated = statedRole(p);
      if (stated !== null ? scopes.has(ROLE_SCOPE[stated]) : scopes.has(p.localName)) return true;
    }
    return false;
  }

  // Any aria-* attribute makes an element a node of its own (a live region, a labelled group).
  function hasAria(el) {
    if (anyInternals && internalsOf.has(el)) return true;
    // Names only (no Attr object made per attribute).
    if (!el.hasAttributes()) return false;
    const names = el.getAttributeNames();
    for (let i = 0; i < names.length; i++) if (names[i].startsWith("aria-")) return true;
    return false;
  }
  // WAI-ARIA's global states and properties: one of them on an element overrides a
  // presentational role.
  const GLOBAL_ARIA = [
    "aria-atomic", "aria-braillelabel", "aria-brailleroledescription", "aria-busy", "aria-controls",
    "aria-current", "aria-describedby", "aria-description", "aria-details", "aria-disabled",
    "aria-dropeffect", "aria-errormessage", "aria-flowto", "aria-grabbed", "aria-haspopup",
    "aria-hidden", "aria-invalid", "aria-keyshortcuts", "aria-label", "aria-labelledby",
    "aria-labeledby", "aria-live", "aria-owns", "aria-relevant", "aria-roledescription",
  ];
  function hasGlobalAria(el) {
    if (!hasAria(el)) return false;
    for (const name of GLOBAL_ARIA) if (el.hasAttribute(name)) return true;
    return false;
  }

  function named(el) {
    return aria(el, "aria-label") !== null || labelledBy(el) !== null || el.hasAttribute("title");
  }

  // aria-labelledby, or its common misspelling aria-labeledby, which Chromium reads as well
  // (the WPT's accname/comp_labelledby); the right spelling wins when both are written.
  function labelledBy(el) {
    const list = el.getAttribute("aria-labelledby");
    return list !== null ? list : el.getAttribute("aria-labeledby");
  }

  // What the table around a cell is, per pass (a table's many cells ask once): 0 none,
  // LAYOUT_TABLE (presentational: its cells are no cells), GRID_TABLE (role grid or treegrid:
  // its cells are grid cells), DATA_TABLE.
  let layoutTables = new Map();
  const LAYOUT_TABLE = 1, GRID_TABLE = 2, DATA_TABLE = 3;
  function tableKind(el) {
    const table = el.closest("table");
    if (table === null) return 0;
    let kind = layoutTables.get(table);
    if (kind === undefined) {
      const role = roleOf(table);
      kind = role === "none" ? LAYOUT_TABLE : role === "grid" || role === "treegrid" ? GRID_TABLE : DATA_TABLE;
      layoutTables.set(table, kind);
    }
    return kind;
  }
  function inLayoutTable(el) {
    return tableKind(el) === LAYOUT_TABLE;
  }

  function headerCellRole(th) {
    const scope = (th.getAttribute("scope") || "").toLowerCase();
    if (scope === "row" || scope === "rowgroup") return "rowheader";
    if (scope === "col" || scope === "colgroup") return "columnheader";
    const row = th.parentElement;
    if (row && row.parentElement && row.parentElement.localName === "thead") return "columnheader";
    // A header cell in a row that also holds data cells heads that row; in a row of headers
    // it heads a column.
    if (row) {
      for (const c of row.children) if (c.localName === "td") return "rowheader";
    }
    return "columnheader";
  }

  function inputRole(el) {
    const type = (el.getAttribute("type") || "").toLowerCase();
    switch (type) {
      case "hidden": return null;
      case "checkbox": return el.hasAttribute("switch") ? "switch" : "checkbox";
      case "radio": return "radio";
      case "range": return "slider";
      case "number": return "spinbutton";
      case "search": return el.hasAttribute("list") ? "combobox" : "searchbox";
      case "button": case "submit": case "reset": case "image": return "button";
      case "file": return "button";
      case "color": return "ColorWell";
      // Chromium's roles for its date and time fields (a model reads what the field takes).
      case "date": return "Date";
      case "datetime-local": case "month": case "week": return "DateTime";
      case "time": return "InputTime";
      default:
        if (!TEXT_INPUT.has(type) && type !== "text") return "textbox";
        return el.hasAttribute("list") ? "combobox" : "textbox";
    }
  }

  // The role by WAI-ARIA (an explicit role) or HTML-AAM (the element's own), in Chromium's
  // names, or null for an element that is not a node of its own (an inline span).
  function nativeRole(el, tag) {
    switch (tag) {
      // An anchor without href is a link still when a script listens for its clicks or it
      // takes focus (Chromium's reading); else a plain node.
      case "a": return el.hasAttribute("href") || el.hasAttribute("tabindex") || clickable.has(el) || el.hasAttribute("onclick") ? "link" : "generic";
      case "area": return el.hasAttribute("href") ? "link" : null;
      case "article": return "article";
      case "address": case "hgroup": return "group"; // HTML-AAM
      case "dfn": return "term";
      case "aside": return inSectioning(el, ASIDE_SCOPES) && !named(el) ? "generic" : "complementary";
      case "nav": return "navigation";
      case "main": return "main";
      case "search": return "search";
      case "header": return inSectioning(el) ? "sectionheader" : "banner";
      case "footer": return inSectioning(el) ? "sectionfooter" : "contentinfo";
      case "section": return "region";
      case "form": return "form";
      case "h1": case "h2": case "h3": case "h4": case "h5": case "h6": return "heading";
      case "p": return "paragraph";
      case "blockquote": return "blockquote";
      case "ul": case "ol": case "menu": case "dir": return "list";
      case "li": {
        // A list item only in a list: a ul given another role (a menu, a tab list) makes its
        // items plain containers.
        const p = el.parentElement;
        if (!p || !LIST_TAGS.has(p.localName)) return "generic";
        const pr = explicitRole(p);
        return pr === null || pr === "list" ? "listitem" : "generic";
      }
      case "dl": return "DescriptionList";
      case "dt": return "term";
      case "dd": return "definition";
      case "table": return "table";
      case "caption": return "caption";
      // A row group of its own only when something makes it one (Chromium leaves a plain one
      // out: its rows are the table's): it takes focus, carries a global aria-* or is clicked.
      case "thead": case "tbody": case "tfoot":
        if (!focusable(el) && !hasGlobalAria(el) && !clickable.has(el) && !el.hasAttribute("onclick")) return undefined;
        return inLayoutTable(el) ? "generic" : "rowgroup";
      // A table made presentational passes that on to its rows and cells (WAI-ARIA: required
      // owned elements); they stay boxes that part their text.
      case "tr": return inLayoutTable(el) ? "generic" : "row";
      case "td": {
        const kind = tableKind(el);
        return kind === LAYOUT_TABLE ? "generic" : kind === GRID_TABLE ? "gridcell" : "cell";
      }
      case "th": return inLayoutTable(el) ? "generic" : headerCellRole(el);
      case "img": {
        const alt = el.getAttribute("alt");
        if (alt !== null && alt === "" && !el.hasAttribute("title") && !el.hasAttribute("aria-label")
            && labelledBy(el) === null) return "none";
        return "image";
      }
      case "svg": return "SvgRoot";
      case "button": return "button";
      case "input": return inputRole(el);
      case "textarea": return "textbox";
      case "select": return el.multiple || el.size > 1 ? "listbox" : "combobox";
      case "option": return "option";
      case "optgroup": return "group";
      case "label": return "LabelText";
      case "fieldset": return "group";
      case "legend": return "Legend";
      case "figure": return "figure";
      case "figcaption": return "Figcaption";
      case "details": return "group";
      case "summary": {
        // Only a details element's first summary is its disclosure (HTML-AAM); any other is a
        // plain container.
        const details = el.parentElement;
        if (!details || details.localName !== "details" || details.querySelector(":scope > summary") !== el) return "generic";
        // One of an exclusive accordion's (details sharing a name): Chromium's own role for it.
        return details.hasAttribute("name") && details.getAttribute("name") !== "" ? "DisclosureTriangleGrouped" : "DisclosureTriangle";
      }
      case "dialog": return "dialog";
      case "hr": return "separator";
      case "iframe": case "frame": return "Iframe";
      case "video": return "Video";
      case "audio": return "Audio";
      case "canvas": return el.firstElementChild ? "Canvas" : "none";
      case "strong": return "strong";
      case "em": return "emphasis";
      case "code": return "code";
      case "sup": return "superscript";
      case "sub": return "subscript";
      case "mark": return "mark";
      case "time": return "time";
      case "ins": return "insertion";
      case "del": case "s": return "deletion";
      case "abbr": return "Abbr";
      case "meter": return "meter";
      case "progress": return "progressbar";
      case "output": return "status";
      case "pre": return "generic";
      case "math": return "math";
      case "object": case "embed": return "PluginObject";
      case "br": return "LineBreak";
      default: return undefined; // generic: a block container, or nothing of its own
    }
  }

  // Focusable, tabbable or not (tabindex="-1" counts): a role of none or presentation does
  // not hide such an element (WAI-ARIA's conflict resolution).
  function focusable(el) {
    return el.hasAttribute("tabindex") || el.matches("a[href],button:enabled,input:enabled,select:enabled,textarea:enabled,summary,[contenteditable]:not([contenteditable=false]),iframe");
  }

  // ---- names (accname 1.2) -------------------------------------------------------------

  // Hidden from a name: GONE (aria-hidden, hidden, no box) or INVISIBLE (laid out, hidden by
  // CSS visibility: a descendant made visible again still counts); 0 when shown.
  const GONE = 1, INVISIBLE = 2;
  function hiddenForName(el) {
    if (aria(el, "aria-hidden") === "true") return GONE;
    if (el.hidden) return GONE;
    if (!el.checkVisibility(VISIBILITY)) {
      const st = getComputedStyle(el);
      if (st.visibility !== "visible") return el.checkVisibility() ? INVISIBLE : GONE;
      return st.display !== "contents" ? GONE : 0;
    }
    return 0;
  }

  // Inert for a name (as Chromium reads one): an element in a subtree an `inert` attribute
  // makes inert, in its own tree or across a shadow host, and laid out (Chromium's inertness
  // lives in the layout: a part with no box is read as any hidden part). A text node by its
  // parent element, except that a shadow tree's top-level text and a slotted text count
  // wherever they are (Chromium 156). Asked only where a tree met on the way up has one (a
  // selector sees no further than its tree, so a shadow tree is asked of its own), each
  // element once a pass.
  let inertOf = new Map();
  const inertRoots = new Map();
  const inTree = new Map(); // element -> an inert attribute on it or above it in its own tree
  function treeHasInert(root) {
    let any = inertRoots.get(root);
    if (any === undefined) inertRoots.set(root, (any = root.querySelector("[inert]") !== null));
    return any;
  }
  function inertInTree(el) {
    const path = [];
    let n = el, found;
    while (n && (found = inTree.get(n)) === undefined) {
      if (n.hasAttribute("inert")) { found = true; break; }
      path.push(n);
      n = n.parentElement;
    }
    if (found === undefined) found = false;
    if (n && found) inTree.set(n, true);
    for (const p of path) inTree.set(p, found);
    return found;
  }
  function inertForName(el) {
    let inert = inertOf.get(el);
    if (inert !== undefined) return inert;
    let asked = false;
    inert = false;
    for (let n = el; n && !inert; ) {
      const root = n.getRootNode();
      if (treeHasInert(root)) {
        asked = true;
        inert = inertInTree(n);
      }
      n = root.host || null;
    }
    if (!asked) return false; // no tree on the way up has one (most pages): nothing to keep
    inertOf.set(el, (inert = inert && el.checkVisibility()));
    return inert;
  }
  function textInert(t) {
    if (t.assignedSlot) return false;
    const parent = t.parentNode;
    return parent.nodeType === 1 && inertForName(parent);
  }

  function optionText(select) {
    const o = select.selectedOptions && select.selectedOptions[0];
    return o ? collapse(o.label || o.text) : "";
  }

  // What a text field shows: a password field its dots (as Chromium's tree: the secret itself
  // is never read into what a model sees).
  function shownValue(el) {
    return el.type === "password" ? "\u2022".repeat(el.value.length) : el.value;
  }

  // The value an embedded control contributes to a name it sits in (accname step 2C/2E).
  function embeddedValue(el, tag, role) {
    if (tag === "select") return role === "combobox" ? optionText(el) : (el.selectedOptions[0] ? collapse(el.selectedOptions[0].text) : "");
    if (tag === "input" || tag === "textarea") {
      if (role === "textbox" || role === "searchbox" || role === "combobox" || DATE_FIELD.has(role)) return shownValue(el);
      if (role === "slider" || role === "spinbutton") return el.value;
    }
    if (role === "slider" || role === "spinbutton" || role === "progressbar" || role === "scrollbar" || role === "meter")
      return aria(el, "aria-valuetext") || aria(el, "aria-valuenow") || "";
    if (role === "textbox" || role === "searchbox") return el.textContent || "";
    if (role === "combobox" || role === "listbox") {
      const sel = el.querySelector('[aria-selected="true"]');
      if (sel) return collapse(sel.textContent);
      // A select-only combobox shows its choice as its own text (its popup elsewhere).
      return role === "combobox" && !el.querySelector('[role="listbox"]') ? collapse(el.textContent) : "";
    }
    return null;
  }

  function explicitRole(el) {
    const r = aria(el, "role");
    if (!r) return null;
    for (const token of r.trim().toLowerCase().split(/\s+/)) {
      if (ARIA.has(token)) return token;
      if (token in ARIA_ALIAS) return ARIA_ALIAS[token];
    }
    return null;
  }

  // The explicit role that holds, or null: a presentational role is ignored on an element that
  // can take focus or carries a global ARIA attribute (WAI-ARIA's conflict resolution).
  function statedRole(el) {
    const explicit = explicitRole(el);
    return explicit === "none" && (focusable(el) || hasGlobalAria(el)) ? null : explicit;
  }

  function roleOf(el) {
    const tag = el.localName;
    const stated = statedRole(el);
    if (stated !== null) return stated;
    const native = nativeRole(el, tag);
    return native === undefined ? "generic" : native;
  }

  // CSS generated content of an element's ::before or ::after, as text: its strings, or its
  // alternative text (after a "/"), which Chromium sets apart with a space; less the
  // private-use characters of an icon font (a glyph, no words).
  const QUOTED = /"((?:[^"\\]|\\.)*)"/g;
  const PRIVATE_USE = /[\uE000-\uF8FF]|[\u{F0000}-\u{10FFFD}]/gu;
  // A CSS string's escapes as CSSOM writes them: a code point in hex and an optional space
  // after it (a line break is "\a "), else the character itself.
  const CSS_ESCAPE = /\\(?:([0-9a-fA-F]{1,6})[ \t\n\r\f]?|([\s\S]))/g;
  function unescaped(m, hex, ch) {
    if (hex === undefined) return ch;
    const cp = parseInt(hex, 16);
    return cp === 0 || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff) ? "\ufffd" : String.fromCodePoint(cp);
  }
  // The words of a content value's strings (an icon font's glyphs are none).
  function contentWords(value) {
    let text = "";
    for (const m of value.matchAll(QUOTED)) text += m[1].replace(CSS_ESCAPE, unescaped);
    return text.replace(PRIVATE_USE, "");
  }
  function pseudoContent(el, which) {
    const st = getComputedStyle(el, which);
    const c = st.content;
    if (!c || c === "none" || c === "normal") return "";
    const slash = c.lastIndexOf(" / ");
    const alt = slash >= 0 && c.slice(slash).includes('"');
    const text = contentWords(alt ? c.slice(slash) : c);
    if (!/[^\s]/.test(text)) return "";
    // Set apart where it is alternative text, or laid out in a box of its own (a block or an
    // inline-block pseudo-element, as Chromium reads it); inline, it runs into the words.
    const d = st.display;
    const apart = alt || (d !== "inline" && d !== "contents");
    return apart ? (which === "::before" ? text + " " : " " + text) : text;
  }

  // The roles whose name a model reads as the element's label (not a table cell's or an
  // option's, whose words are printed as text): their own generated content is read.
  const PSEUDO_NAMED = new Set([
    "button", "checkbox", "heading", "link", "menuitem", "menuitemcheckbox", "menuitemradio",
    "radio", "switch", "tab", "treeitem", "DisclosureTriangle", "DisclosureTriangleGrouped",
  ]);
  // Which elements the document's style sheets may give ::before or ::after content: the
  // selectors of the rules that set one, less the pseudo-element (a superset: the element's
  // computed style then says) — a class alone (an icon set's thousand `.icon-x::before`) in a
  // set, the rest as one selector list. Read once a pass per document; null where a sheet cannot
  // be read (another origin's, from this world) or the selectors do not parse: every element is
  // asked.
  let pseudoSelectors = new Map();
  const PSEUDO_AT = /::?(?:before|after)\b/gi;
  const ONE_CLASS = /^(?:[a-z][a-z0-9-]*)?\.((?:[\w-]|\\.)+)$/i;
  // A rule's selector as it applies: a nested rule's is relative to its parent's (`& > a`,
  // `.x` meaning `& .x`).
  function absoluteSelector(rule) {
    const text = rule.selectorText;
    if (!text) return text;
    // The enclosing style rules, innermost first (a loop: a page may nest deep).
    const outers = [];
    for (let r = rule.parentRule; r && r.selectorText !== undefined; r = r.parentRule) outers.push(r.selectorText);
    let selector = outers.length ? outers[outers.length - 1] : text;
    for (let i = outers.length - 2; i >= -1; i--) {
      const inner = i >= 0 ? outers[i] : text;
      const outer = `:is(${selector})`;
      selector = topLevelParts(inner).map((part) => (part.includes("&") ? part.replaceAll("&", outer) : `${outer} ${part}`)).join(",");
    }
    return selector;
  }
  // A selector list's selectors (commas inside :is(), :not(), [attr="a,b"] are not between them).
  function topLevelParts(list) {
    const parts = [];
    let depth = 0, quote = "", start = 0;
    for (let i = 0; i < list.length; i++) {
      const c = list[i];
      if (quote) {
        if (c === "\\") i++;
        else if (c === quote) quote = "";
      } else if (c === "\\") i++;
      else if (c === '"' || c === "'") quote = c;
      else if (c === "(" || c === "[") depth++;
      else if (c === ")" || c === "]") depth--;
      else if (c === "," && depth === 0) {
        parts.push(list.slice(start, i).trim());
        start = i + 1;
      }
    }
    parts.push(list.slice(start).trim());
    return parts;
  }
  // A declared content value that can give no words: none, images, strings of white space or an
  // icon font's glyphs (a clearfix's "", an icon's "\e900"). An element its rules give only
  // such content shows no words there, whatever the cascade picks: it is not asked. Anything
  // computed (attr(), counters, quotes, var(), a keyword taking another value) may give words.
  const MAY_GIVE_WORDS = /\(|quote|inherit|unset|revert|initial/i;
  const IMAGE = /url\((?:"(?:[^"\\]|\\.)*"|[^)"]*)\)/gi;
  function wordless(content) {
    if (!content || content === "none" || content === "normal") return true;
    const rest = content.replace(IMAGE, "");
    return !MAY_GIVE_WORDS.test(rest) && !/[^\s]/.test(contentWords(rest));
  }
  // A selector whose last compound names a native target's tag (`nav a`, `button.primary`).
  const NATIVE_LAST = /(?:^|[\s>+~])(?:a|button|input|select|label|summary|textarea|option)(?:[.#:[][^\s>+~]*)?$/i;
  function pseudoSelectorOf(doc) {
    const found = rulesOf(doc);
    return found && found.pseudo;
  }
  // The style sheets' selectors of interest, read in one pass over the rules: those that may
  // give ::before/::after content (above) and those that give a pointer cursor (a page's own
  // mark of what it made clickable, where a framework's listener sits on a root far above:
  // React's, Vue's delegation), each { classes, selector }.
  // The rule lists of a document's sheets (an unreadable one, another origin's, told to
  // `unreadable`), and every rule in such lists: nested ones, an @import's sheet's.
  function ruleLists(doc, unreadable) {
    const lists = [];
    for (const sheet of doc.styleSheets) {
      try {
        lists.push(sheet.cssRules);
      } catch (e) {
        unreadable(sheet);
      }
    }
    for (const sheet of doc.adoptedStyleSheets || []) lists.push(sheet.cssRules);
    return lists;
  }
  function eachRule(lists, visit, unreadable) {
    while (lists.length) {
      const rules = lists.pop();
      for (let i = 0; i < rules.length; i++) {
        const rule = rules[i];
        if (rule.styleSheet) {
          let imported = null;
          try { imported = rule.styleSheet.cssRules; } catch (e) { unreadable(rule.styleSheet); }
          if (imported) lists.push(imported);
        }
        if (rule.cssRules && rule.cssRules.length) lists.push(rule.cssRules); // @media, nesting
        visit(rule);
      }
    }
  }
  const cannotRead = () => {
    throw new Error("a sheet of another origin");
  };
  function rulesOf(doc) {
    let found = pseudoSelectors.get(doc);
    if (found !== undefined) return found;
    const pseudo = { classes: new Set(), complex: [] };
    const pointer = { classes: new Set(), complex: [] };
    const add = (into, text) => {
      for (const part of topLevelParts(text)) {
        const m = part.match(ONE_CLASS);
        // A class written with escapes is asked through the selector list (its name is not
        // the written one).
        if (m && !m[1].includes("\\")) into.classes.add(m[1]);
        else into.complex.push(part || "*");
      }
    };
    try {
      eachRule(ruleLists(doc, cannotRead), (rule) => {
        const text = absoluteSelector(rule);
        if (!text) return;
        if (text.search(PSEUDO_AT) >= 0) {
          if (!wordless(rule.style.content)) add(pseudo, text.replace(PSEUDO_AT, ""));
        } else if (rule.style.cursor === "pointer") {
          // A rule for native targets only (`a`, `button`, `label:hover`) points at nothing the
          // walk asks: left out of the list every plain element is matched against.
          const parts = topLevelParts(text).filter((part) => !NATIVE_LAST.test(part));
          if (parts.length) add(pointer, parts.join(","));
        }
      }, cannotRead);
      const root = doc.documentElement;
      const parses = (selector) => {
        try {
          root.matches(selector);
          return true;
        } catch (e) {
          return false;
        }
      };
      // A list that does not parse: every element is asked for generated content; of the
      // pointers' (`::-webkit-scrollbar-thumb`, a selector of a newer CSS) only the parts that
      // parse are kept.
      let selector = pseudo.complex.join(",");
      if (selector && !parses(selector)) throw new SyntaxError(selector);
      found = { pseudo: { classes: pseudo.classes, selector } };
      selector = pointer.complex.join(",");
      if (selector && !parses(selector)) selector = pointer.complex.filter(parses).join(",");
      found.pointer = { classes: pointer.classes, selector };
    } catch (e) {
      found = null;
    }
    pseudoSelectors.set(doc, found);
    return found;
  }
  function matchesRules(el, found) {
    if (found.classes.size) for (const c of el.classList) if (found.classes.has(c)) return true;
    return found.selector !== "" && el.matches(found.selector);
  }
  function mayHavePseudo(el) {
    const doc = el.ownerDocument;
    // A shadow tree's own sheets may style it (it is in one, hosts one, or is slotted into one:
    // :host and ::slotted rules): asked.
    if (el.getRootNode() !== doc || el.shadowRoot || el.assignedSlot) return true;
    const found = pseudoSelectorOf(doc);
    if (found === null) return true;
    return matchesRules(el, found);
  }
  // A plain element the page shows with a pointer cursor, the outermost of its run (the cursor
  // is inherited) and not inside a native target: clickable. Where the document's sheets can all
  // be read, the candidates are the elements a rule of theirs (or their own style attribute)
  // points at, and their computed style then says (a later rule may set another cursor). Where
  // one cannot (another origin's: a CDN's, a file:), its rules may point anywhere, so every
  // plain element's computed cursor is asked, and so is every one in a shadow tree and every
  // shadow host (a tree's own sheets, its `:host` rules): one style read each, less inside a run
  // already found (a child of a pointer element is not the outermost).
  const NATIVE_TARGET = new Set(["a", "button", "label", "summary", "select", "input", "textarea", "option"]);
  let pointerOf = new Map();
  function pointerCursor(el) {
    let pointer = pointerOf.get(el);
    if (pointer === undefined) {
      pointer = getComputedStyle(el).cursor === "pointer";
      pointerOf.set(el, pointer);
    }
    return pointer;
  }
  function pointerTarget(el) {
    const inline = el.hasAttribute("style") && el.style.cursor === "pointer";
    // In a shadow tree, the tree's own sheets may point at it as well, and a shadow host's own
    // tree may point at the host (`:host { cursor: pointer }`): their cursor is asked.
    if (!inline && !el.shadowRoot && el.getRootNode() === el.ownerDocument) {
      const found = rulesOf(el.ownerDocument);
      if (found !== null && !matchesRules(el, found.pointer)) return false;
    }
    const up = elementAbove(el);
    if (up && pointerOf.get(up) === true) return false;
    if (!pointerCursor(el)) return false;
    if (up && pointerCursor(up)) return false;
    for (let n = up, i = 0; n && i < 16; n = elementAbove(n), i++) if (NATIVE_TARGET.has(n.localName)) return false;
    return !onlyWraps(el);
  }
  // The element above: the parent, or for the top of a shadow tree its host (whose cursor the
  // tree inherits).
  function elementAbove(el) {
    const up = el.parentNode;
    return up === null ? null : up.nodeType === 1 ? up : up.nodeType === 11 && up.host ? up.host : null;
  }
  // Whether every word and image under a pointer element is a target's inside it (a bar of
  // buttons given the cursor as a whole): clicking it is clicking one of them, so it is no
  // target of its own. A listener's element is kept whatever it holds (its own handler runs).
  // Shown words outside any target, or more than WRAP_SCAN nodes to look at, keep it.
  const WRAP_SCAN = 500;
  function onlyWraps(el) {
    const stack = [];
    pushFlatChildren(stack, el);
    let wraps = false;
    for (let seen = 0; stack.length; seen++) {
      if (seen > WRAP_SCAN) return false;
      const n = stack.pop();
      if (n.nodeType === 3) {
        if (/[^\t\n\f\r ]/.test(n.data)) return false;
        continue;
      }
      if (n.nodeType !== 1) continue;
      const tag = n.localName;
      if (SKIP.has(tag) && n.namespaceURI === XHTML) continue;
      if (clickable.has(n) || n.hasAttribute("onclick") || NATIVE_TARGET.has(tag) || focusable(n) || WIDGET.has(n.getAttribute("role"))) {
        if (n.checkVisibility()) wraps = true;
        continue;
      }
      if (!n.checkVisibility() && getComputedStyle(n).display === "none") continue;
      if (tag === "img" || tag === "svg" || tag === "canvas" || tag === "video" || tag === "picture") return false;
      pushFlatChildren(stack, n);
    }
    return wraps;
  }

  // An element's own generated content around its text (a name from its contents, a label's).
  function withPseudo(el, text) {
    if (!mayHavePseudo(el)) return text;
    const before = pseudoContent(el, "::before");
    const after = pseudoContent(el, "::after");
    // Without a space (accname 2F.ii; Chromium too): " (new window)" brings its own.
    return before || after ? collapse(before + text + after) : text;
  }

  // An edge of an element's box in textFrom's stack: met between two pieces of text, the
  // words are set apart if the element is laid out in a box of its own.
  // The closing edge also says where the element's text began, and its title: an element that
  // gave no text lends its title (accname 2I).
  class Edge {
    constructor(el, since, title) { this.el = el; this.since = since; this.title = title; }
  }
  const SPACE_AT_START = /^[\t\n\f\r ]/, SPACE_AT_END = /[\t\n\f\r ]$/;

  // A node's children in reverse onto `stack`: a shadow host's are its shadow root's, a slot's
  // its assigned nodes (else its own, the fallback). By sibling links, as the walk's
  // pushChildren reads them (no childNodes list made per node; measured no faster or slower).
  function pushFlatChildren(stack, n) {
    if (n.localName === "slot") {
      const a = n.assignedNodes({ flatten: true });
      if (a.length) {
        for (let i = a.length - 1; i >= 0; i--) stack.push(a[i]);
        return;
      }
    }
    for (let c = (n.shadowRoot || n).lastChild; c; c = c.previousSibling) stack.push(c);
  }

  // Text of a subtree for a name: text as it is, each box set apart, embedded controls by
  // their value, elements by their own names (aria-label, alt). Iterative; `budget` caps it.
  // An element's display is read only where its edge falls between two pieces of text.
  function textFrom(root, referenced, visited, pseudo, keepInert) {
    const out = [];
    let length = 0;
    const stack = [];
    const edges = []; // edges met since the last piece of text
    const pushKids = (n) => pushFlatChildren(stack, n);
    const text = (t) => {
      if (!t) return;
      if (edges.length) {
        // White space on either side already sets the words apart: no style to read.
        if (!SPACE_AT_START.test(t) && !SPACE_AT_END.test(out[out.length - 1])) {
          for (const e of edges) if (ownBox(e)) { out.push(" "); break; }
        }
        edges.length = 0;
      }
      out.push(t);
      length += t.length;
    };
    // Elements hidden by CSS visibility alone: their own text is not read, a descendant made
    // visible again is.
    const invisible = new Set();
    pushKids(root);
    while (stack.length && length < 10000) {
      const n = stack.pop();
      if (typeof n === "string") { text(n); continue; }
      if (n instanceof Edge) {
        if (n.title && length === n.since) text(" " + n.title + " ");
        if (length > 0) edges.push(n.el); // nothing before it: it sets nothing apart
        continue;
      }
      if (n.nodeType === 3) {
        if (invisible.size && invisible.has(n.parentNode)) continue;
        if (!keepInert && textInert(n)) continue;
        const style = textStyle(n.parentNode);
        if (style & CONTENTS_HIDDEN) continue;
        const how = style & CASE_MASK;
        text(how ? transform(n.data, how) : n.data);
        continue;
      }
      if (n.nodeType !== 1) continue;
      const tag = n.localName;
      if (SKIP.has(tag)) continue;
      if (visited.has(n)) continue;
      if (!keepInert && inertForName(n)) {
        // No words, label or alternative text of its own; below it, a shadow tree's top-level
        // text or a slotted one may still count (see textInert).
        pushKids(n);
        continue;
      }
      const hidden = referenced ? 0 : hiddenForName(n);
      if (hidden) {
        if (hidden === INVISIBLE) { // its children may show themselves (visibility: visible)
          invisible.add(n);
          pushKids(n);
        }
        continue;
      }
      const role = roleOf(n);
      const labelled = labelledBy(n);
      if (labelled && !referenced) {
        const t = labelledByText(n, labelled, visited);
        if (t) { text(" " + t + " "); continue; }
      }
      const value = WIDGET.has(role) || role === "meter" || role === "progressbar" ? embeddedValue(n, tag, role) : null;
      if (value !== null && role !== "button" && role !== "link" && role !== "checkbox" && role !== "radio" && role !== "option" && role !== "menuitem" && role !== "tab" && role !== "treeitem" && role !== "gridcell") {
        text(" " + value + " ");
        continue;
      }
      // A slot is no node of its own: its words are what is assigned to it (or its fallback),
      // never an aria-label written on it (the WPT's accname/shadowdom; Chromium reads so).
      const label = tag === "slot" ? null : aria(n, "aria-label");
      if (nonEmpty(label)) { text(" " + label + " "); continue; }
      if (tag === "svg") {
        // An SVG lends its own name (its <title>), though its role takes none from contents.
        const t = n.querySelector(":scope > title");
        if (t) text(" " + t.textContent + " ");
        continue;
      }
      if (NO_CONTENTS.has(role)) continue;
      if (tag === "img" || tag === "area" || (tag === "input" && n.type === "image")) {
        const alt = n.getAttribute("alt") || n.getAttribute("title") || "";
        if (alt) text(" " + alt + " ");
        continue;
      }
      if (tag === "br") { text(" "); continue; }
      if (tag === "iframe" || tag === "select" || tag === "textarea" || tag === "input") continue;
      stack.push(new Edge(n, length, n.getAttribute("title")));
      if (pseudo) {
        const after = pseudoContent(n, "::after");
        if (after) stack.push(after);
      }
      pushKids(n);
      if (pseudo) {
        const before = pseudoContent(n, "::before");
        if (before) stack.push(before);
      }
      stack.push(new Edge(n));
    }
    return collapse(out.join(""));
  }

  function labelledByText(el, list, visited) {
    const doc = el.getRootNode();
    const parts = [];
    for (const id of list.trim().split(/\s+/)) {
      const ref = doc.getElementById ? doc.getElementById(id) : el.ownerDocument.getElementById(id);
      if (incrementalPass) {
        if (ref) noteReferrer(ref, el);
        else referring.add(el); // an element with this id may come
      }
      if (!ref || visited.has(ref)) continue;
      // Read once in a whole computation: a node one part of it referenced is not read again
      // where the rest of the walk meets it (accname's traversal; Chromium reads it so).
      visited.add(ref);
      const label = aria(ref, "aria-label");
      if (nonEmpty(label)) { parts.push(label.trim()); continue; }
      const tag = ref.localName;
      const role = roleOf(ref);
      // An embedded control lends its value (a field naming itself too, as Chromium reads
      // it); anything else its text, hidden or not (being referenced is what counts), else its
      // title (accname 2I).
      const control = tag === "input" || tag === "select" || tag === "textarea";
      const value = ref === el && !control ? null : embeddedValue(ref, tag, role);
      if (value !== null && control) { parts.push(value); continue; }
      if (tag === "img") { parts.push(ref.getAttribute("alt") || ""); continue; }
      const text = textFrom(ref, hiddenForName(ref) || inertForName(ref), visited, false);
      parts.push(text || ref.getAttribute("title") || "");
    }
    return collapse(parts.join(" "));
  }

  // Elements whose contents are never shown (a supported element's fallback, a gauge's words).
  const UNSHOWN_CONTENTS = new Set(["meter", "progress", "video", "audio"]);
  // Inside a canvas: its fallback content, which Chromium reads though it has no box.
  function inCanvas(el) {
    const up = el.parentElement;
    return up !== null && up.closest("canvas") !== null;
  }

  // The map an image uses (usemap="#name": the first map of its tree so named, else so id'd).
  // `byRoot` keeps each tree's maps by name for a whole pass (a page of many mapped images
  // looks its maps up once).
  function mapOf(img, byRoot) {
    const name = img.useMap.replace(/^#/, "");
    if (!name) return null;
    const root = img.getRootNode();
    let maps = byRoot ? byRoot.get(root) : undefined;
    if (maps === undefined) {
      maps = new Map();
      for (const m of root.querySelectorAll("map")) {
        if (m.name && !maps.has(m.name)) maps.set(m.name, m);
        if (m.id && !maps.has(m.id)) maps.set(m.id, m);
      }
      if (byRoot) byRoot.set(root, maps);
    }
    return maps.get(name) || null;
  }

  // The first shown image that uses an area's map.
  function areaImage(area) {
    const map = area.closest("map");
    if (!map) return null;
    const maps = new Map(); // the tree's maps, looked up once for all its images
    for (const img of area.getRootNode().querySelectorAll("img[usemap]")) {
      if (mapOf(img, maps) === map && img.checkVisibility(VISIBILITY)) return img;
    }
    return null;
  }

  // An area's rectangle in the viewport: its shape's bounds on that image (coordinates in CSS
  // pixels from the image's corner); null when no image shows it or its coordinates are none.
  function areaRect(area) {
    const img = areaImage(area);
    if (!img) return null;
    const box = img.getBoundingClientRect();
    const c = (area.getAttribute("coords") || "").split(/[\s,]+/, 10000).filter((v) => v !== "").map(Number);
    if (c.some((v) => !isFinite(v))) return null;
    const shape = (area.getAttribute("shape") || "rect").toLowerCase();
    let x0 = 0, y0 = 0, x1 = box.width, y1 = box.height;
    if ((shape === "rect" || shape === "rectangle") && c.length >= 4) {
      x0 = Math.min(c[0], c[2]); y0 = Math.min(c[1], c[3]); x1 = Math.max(c[0], c[2]); y1 = Math.max(c[1], c[3]);
    } else if ((shape === "circle" || shape === "circ") && c.length >= 3) {
      x0 = c[0] - c[2]; y0 = c[1] - c[2]; x1 = c[0] + c[2]; y1 = c[1] + c[2];
    } else if ((shape === "poly" || shape === "polygon") && c.length >= 6) {
      x0 = y0 = Infinity; x1 = y1 = -Infinity;
      for (let i = 0; i + 1 < c.length; i += 2) {
        x0 = Math.min(x0, c[i]); x1 = Math.max(x1, c[i]); y0 = Math.min(y0, c[i + 1]); y1 = Math.max(y1, c[i + 1]);
      }
    } else if (shape !== "default") return null;
    return new DOMRect(box.x + x0, box.y + y0, x1 - x0, y1 - y0);
  }

  // A node's parent in the flat tree (through slots and shadow roots).
  function flatParent(n) {
    return n.assignedSlot || n.parentNode || n.host || null;
  }

  // A label Chromium leaves out of its tree: it names a checkbox or radio that is shown (by its
  // label, not by aria-label or aria-labelledby) and holds nothing but its words (and the
  // control itself, when it wraps it) — nothing of its own to read or act on.
  function redundantLabel(label) {
    const control = label.control;
    if (!control || control.localName !== "input" || (control.type !== "checkbox" && control.type !== "radio")) return false;
    if (labelledBy(control) !== null || nonEmpty(control.getAttribute("aria-label"))) return false;
    if (!control.checkVisibility(VISIBILITY)) return false;
    if (hasAria(label) || clickable.has(label) || label.hasAttribute("onclick") || label.hasAttribute("tabindex")) return false;
    for (let c = label.firstChild; c; c = c.nextSibling) if (c.nodeType === 1 && c !== control) return false;
    return true;
  }

  function labelStandsIn(label) {
    const control = label.control;
    return !!control && !control.checkVisibility(VISIBILITY);
  }

  function labelsText(el) {
    const labels = el.labels;
    if (!labels || labels.length === 0) return "";
    if (incrementalPass) labelled.add(el);
    const parts = [];
    const visited = new Set([el]);
    for (const l of labels) {
      if (hiddenForName(l)) continue;
      // A label is named as any element is (accname's step 2C before its contents).
      const own = l.getAttribute("aria-label");
      parts.push(nonEmpty(own) ? own : withPseudo(l, textFrom(l, false, visited, false, true)));
    }
    return collapse(parts.join(" "));
  }

  // [name, from contents]
  function nameOf(el, tag, role) {
    const visited = new Set();
    const labelled = labelledBy(el);
    if (labelled) {
      const t = labelledByText(el, labelled, visited);
      if (t) return [t, false];
    }
    const label = aria(el, "aria-label");
    if (nonEmpty(label)) return [collapse(label), false];
    switch (tag) {
      case "input": {
        const type = (el.getAttribute("type") || "").toLowerCase();
        if (type === "button" || type === "submit" || type === "reset") {
          const l = labelsText(el);
          if (l) return [l, false];
          const v = el.getAttribute("value");
          if (v !== null) return [collapse(v), false];
          if (type === "button") {
            const t = el.getAttribute("title"); // HTML-AAM; submit and reset say their default first
            return [nonEmpty(t) ? collapse(t) : "", false];
          }
          return [type === "submit" ? "Submit" : "Reset", false];
        }
        if (type === "image") {
          const alt = el.getAttribute("alt") || el.getAttribute("value") || el.getAttribute("title");
          return [collapse(alt || "Submit"), false];
        }
        if (type === "file") {
          const l = labelsText(el);
          return [l || "Choose File", false];
        }
        const l = labelsText(el);
        if (l) return [l, false];
        const t = el.getAttribute("title");
        if (nonEmpty(t)) return [collapse(t), false];
        const p = el.getAttribute("placeholder");
        if (nonEmpty(p)) return [collapse(p), false];
        return ["", false];
      }
      case "textarea": case "select": case "meter": case "progress": case "output": {
        const l = labelsText(el);
        if (l) return [l, false];
        const t = el.getAttribute("title");
        if (nonEmpty(t)) return [collapse(t), false];
        const p = tag === "textarea" ? el.getAttribute("placeholder") : null;
        if (nonEmpty(p)) return [collapse(p), false];
        return ["", false];
      }
      case "button": {
        const l = labelsText(el);
        if (l) return [l, false];
        break;
      }
      case "img": case "area": {
        const alt = el.getAttribute("alt");
        if (nonEmpty(alt)) return [collapse(alt), false];
        const t = el.getAttribute("title");
        return [nonEmpty(t) ? collapse(t) : "", false];
      }
      case "fieldset": case "table": {
        // A hidden legend or caption names nothing (HTML-AAM, w3c/html-aam#533; the WPT's
        // html-aam/hidden-names): the first shown one does, else the title below.
        const part = tag === "fieldset" ? "legend" : "caption";
        for (let c = el.firstElementChild; c; c = c.nextElementSibling) {
          if (c.localName !== part || hiddenForName(c)) continue;
          const t = textFrom(c, false, visited, false);
          if (t) return [t, false];
          break;
        }
        break;
      }
      case "optgroup": return [collapse(el.getAttribute("label") || ""), false];
      case "option": {
        const l = el.getAttribute("label");
        if (nonEmpty(l)) return [collapse(l), false];
        return [collapse(el.text), true];
      }
      case "svg": {
        const t = el.querySelector(":scope > title");
        if (t) return [collapse(t.textContent), false];
        break;
      }
      case "iframe": case "frame": {
        const t = el.getAttribute("title");
        return [nonEmpty(t) ? collapse(t) : "", false];
      }
    }
    if (FROM_CONTENTS.has(role) || (CONDITIONAL.has(role) && el.hasAttribute("tabindex") && el.tabIndex >= 0)) {
      // The element's own generated content counts (accname: "(opens in a new tab)" after a
      // link); its descendants' only where it has no other text (an icon button).
      let t = textFrom(el, false, visited, false);
      if (PSEUDO_NAMED.has(role)) t = withPseudo(el, t);
      if (!t && WIDGET.has(role)) t = collapse(textFrom(el, false, visited, true));
      if (t) return [t, true];
    }
    const title = el.getAttribute("title");
    if (nonEmpty(title) && !NAME_PROHIBITED.has(role)) return [collapse(title), false];
    if (role === "textbox" || role === "searchbox" || role === "combobox") {
      const p = aria(el, "aria-placeholder") || el.getAttribute("placeholder");
      if (nonEmpty(p)) return [collapse(p), false];
    }
    return ["", false];
  }

  // ---- hints for unnamed clickables (same rules as the DOM snapshot's) ------------------

  function readableWords(value, limit) {
    const out = [];
    for (const w of value.split(/\s+/)) {
      if (out.length >= limit) break;
      if (w && w.length <= 24 && /\p{L}/u.test(w) && /^[\p{L}_-]+$/u.test(w)) out.push(w);
    }
    return out;
  }

  function fileStem(url) {
    if (!url || url.startsWith("data:")) return null;
    const path = url.split(/[?#]/)[0];
    const hash = url.includes("#") ? url.slice(url.indexOf("#") + 1) : "";
    const last = path.slice(path.lastIndexOf("/") + 1);
    const dot = last.lastIndexOf(".");
    const stem = dot > 0 ? last.slice(0, dot) : last;
    const word = (stem || hash).trim();
    return word && /\p{L}/u.test(word) ? word : null;
  }

  function hintOf(el) {
    for (const name of ["aria-label", "title", "alt", "aria-description", "placeholder"]) {
      const v = el.getAttribute(name);
      if (nonEmpty(v)) return collapse(v).slice(0, 80);
    }
    const words = [];
    const img = el.localName === "img" ? el : el.querySelector("img,use");
    if (img) {
      const src = img.localName === "use" ? img.getAttribute("href") || img.getAttribute("xlink:href") : img.getAttribute("src") || img.currentSrc;
      const stem = fileStem(src);
      if (stem) words.push(stem);
    }
    const cls = el.getAttribute("class");
    if (cls) for (const w of readableWords(cls, 4)) if (!words.includes(w)) words.push(w);
    if (!words.length && el.id) words.push(...readableWords(el.id, 2));
    return words.length ? words.join(" ").slice(0, 80) : null;
  }

  // A pass's start: its options, ids from the caller's base on, dead entries dropped.
  function beginPass(options) {
    options = options || {};
    inertOf = new Map();
    inertRoots.clear();
    inTree.clear();
    if (options.base && next < options.base) next = options.base;
    prune();
    return options;
  }

  // ---- the page world's hook ---------------------------------------------------------------
  // hook.js tells which elements a script made clickable and which host closed shadow roots,
  // by events under names secret to the run, when a pass asks in a document.

  function onMark(e) {
    const t = e.composedPath()[0];
    if (t && t.nodeType === 1 && !clickable.has(t)) {
      clickable.add(t);
      if (watch) changed(watch, "seed", t); // listened to since the last pass
    }
  }
  function onInternals(e) {
    const t = e.composedPath()[0];
    if (!t || t.nodeType !== 1 || typeof e.detail !== "string") return;
    try {
      const said = parseJSON(e.detail);
      const kept = {};
      for (const k of Object.keys(said)) if (typeof said[k] === "string") kept[k] = said[k];
      const before = internalsOf.get(t);
      internalsOf.set(t, kept);
      anyInternals = true;
      if (watch && (!before || JSON.stringify(before) !== JSON.stringify(kept))) changed(watch, "all", t);
    } catch (err) { /* not the hook's */ }
  }
  function onClosed(e) {
    const t = e.composedPath()[0];
    if (t && t.nodeType === 1) closedHosts.add(t);
  }
  function askHook(doc, options, docs) {
    if (!options.askEvent) return;
    doc.addEventListener(options.markEvent, onMark, true);
    doc.addEventListener(options.closedEvent, onClosed, true);
    if (options.internalsEvent) doc.addEventListener(options.internalsEvent, onInternals, true);
    docs.push(doc);
    try {
      doc.dispatchEvent(new CustomEvent(options.askEvent, { bubbles: false }));
    } catch (e) { /* no hook in this document */ }
  }
  // Stops listening in the pass's documents; the ids of the closed shadow hosts on the page.
  function hookDone(docs, options) {
    for (const d of docs) {
      d.removeEventListener(options.markEvent, onMark, true);
      d.removeEventListener(options.closedEvent, onClosed, true);
      if (options.internalsEvent) d.removeEventListener(options.internalsEvent, onInternals, true);
    }
    const closed = [];
    for (const h of closedHosts) {
      if (h.isConnected) closed.push(idOf(h));
      else closedHosts.delete(h); // gone from the page (a host that comes back is reported again)
    }
    return closed;
  }

  // ---- reading only what changed (an incremental pass) -------------------------------------
  // Between passes a MutationObserver and a few event listeners (in this world: the page sees
  // none of them) note what may have changed; the next pass copies the rows of every element
  // whose subtree nothing touched, byte for byte, and reads the rest as a full pass does. What
  // a MutationObserver cannot see is checked at the pass's start (controls' values set by
  // script, the focus, running animations, style sheets, custom elements defined since) or
  // makes the pass a full one (a hover or focus where a style rule shows or hides on it, a
  // sheet this world cannot read, a resize, a frame). The text equals a full pass's
  // (options.check compares both).

  // CSS properties a pass reads (through checkVisibility, computed styles and pseudo content).
  const READ_PROPS = ["display", "visibility", "content", "content-visibility", "white-space-collapse", "text-wrap-mode", "text-transform"];
  // Selectors whose match changes without a DOM change (a state), by what tells the change: a
  // hover (mouse events), a focus (focus events, or the pass's own look at the focus), a press,
  // a value (input events, or the pass's look at the controls), others (a popover or details
  // toggled, a custom element defined).
  const HOVER = 1, FOCUS = 2, PRESS = 4, VALUE = 8, OTHER_STATE = 16, ANY_STATE = 31;
  const STATES = [
    [HOVER, /:hover/i],
    [FOCUS, /:focus/i],
    [PRESS, /:active/i],
    [VALUE, /:(?:checked|indeterminate|placeholder-shown|valid|invalid|user-valid|user-invalid|default|autofill|in-range|out-of-range|blank)/i],
    [OTHER_STATE, /:(?:target|popover-open|open|modal|fullscreen|defined)/i],
  ];
  const EVENT_STATE = { mouseover: HOVER, mouseout: HOVER, focusin: FOCUS, focusout: FOCUS, mousedown: PRESS, mouseup: PRESS, input: VALUE, change: VALUE, reset: VALUE };
  const SILENT_STATE = /:(?:state\(|playing|paused|picture-in-picture)/i;
  const STRUCTURAL_SELECTOR = /[+~]|:(?:nth-|first-|last-|only-|empty)/i;
  const MAX_WATCHED = 20000; // changes noted before the next pass is simply a full one
  let last = null; // the last pass's rows and what they were read under (the end of capture())
  let watch = null; // what changed since (see watchFrom)
  let table = null; // the last pass's strings, which its rows' bytes point into
  // Each answer's number. The caller says which whole answer it holds (options.have); a pass
  // whose answer would be that one byte for byte (rows, strings, unread frames, closed hosts)
  // says so (same: 1) instead of sending it again: on a large page sending the answer costs
  // three times its pass.
  let answers = 0;
  const referrers = new WeakMap(); // node -> the elements whose name read it by reference
  const referring = new Set(); // all such elements (an id that appears may name them)
  const labelled = new Set(); // elements named by their labels (an id that goes may unname them)
  const controlState = new Map(); // a control -> its state when a pass last read it
  const undefinedElements = new Set(); // custom elements a pass met before their definition
  let observedRoots = new WeakSet();
  let observer = null;
  let incrementalPass = false; // the pass under way notes what the next one needs
  let styleFacts = null; // the top document's (see factsOf)

  function noteReferrer(node, el) {
    let set = referrers.get(node);
    if (!set) referrers.set(node, (set = new Set()));
    set.add(el);
    referring.add(el);
  }
  function stateOfControl(c) {
    if (c.localName === "select") {
      if (!c.multiple) return String(c.selectedIndex);
      let s = "";
      for (const o of c.selectedOptions) s += o.index + ",";
      return s;
    }
    return c.localName === "input" ? c.value + "\u0000" + c.checked + c.indeterminate : c.value;
  }
  function noteControl(c) {
    controlState.set(c, stateOfControl(c));
  }

  // The top document's sheets as a key (a sheet added, removed or given a rule changes it)
  // and, read once per key, what their rules say about what a change may reach.
  function sheetsKey(doc) {
    let key = "";
    for (const sheet of doc.styleSheets) {
      let n;
      try { n = sheet.cssRules.length; } catch (e) { n = "x"; }
      key += n + (sheet.disabled ? "d" : "") + ",";
    }
    for (const sheet of doc.adoptedStyleSheets || []) key += "a" + sheet.cssRules.length + ",";
    return key;
  }
  // `given`: what the caller read of sheets this world cannot read (another origin's), by
  // address, in the form factsOfTexts gives; the others' addresses are in facts.unknown.
  // `restyled`: styles were computed anew since the last pass, so a rule may say something else
  // with as many rules as before (read again; a pass that copies nothing pays for it).
  function factsOf(doc, given, restyled) {
    const key = sheetsKey(doc);
    if (restyled) factsOfSheet = new WeakMap();
    if (!restyled && styleFacts && styleFacts.key === key && styleFacts.doc === doc && !styleFacts.unknown.some((h) => given && given[h])) return styleFacts;
    const facts = { ...noFacts(), key, doc, unknown: [] };
    const unreadable = (sheet) => untold(sheet, facts, given);
    try {
      scanRules(ruleLists(doc, unreadable), facts, unreadable);
    } catch (e) {
      facts.known = false;
    }
    styleFacts = facts;
    return facts;
  }
  function mergedFacts(a, b) {
    const out = { ...a };
    addFacts(out, b);
    if (!b.known) out.known = false;
    return out;
  }
  function addFacts(into, f) {
    for (const k of ["silent", "structural", "has", "locked"]) if (f[k]) into[k] = true;
    into.states |= f.states | 0;
    if (f.container) into.known = !(into.container = true);
  }
  // What no rule says yet: nothing reaches further than the change.
  function noFacts() {
    return { known: true, container: false, states: 0, silent: false, structural: false, has: false, locked: false };
  }
  // A sheet this world cannot read: what the caller read of it, else unknown (its address asked).
  function untold(sheet, facts, given) {
    const told = given && sheet.href ? given[sheet.href] : undefined;
    if (told) addFacts(facts, told);
    else {
      facts.known = false; // what it says cannot be known (yet)
      if (sheet.href && facts.unknown) facts.unknown.push(sheet.href);
    }
  }
  // What rules say about what a change may reach: a rule on a state (a hover, a focus, a
  // value) or on siblings, or :has(), that sets a property a pass reads; a container query.
  function scanRules(lists, facts, unreadable) {
    eachRule(lists, (rule) => {
      // A container query answers to layout sizes, which change with no event at all.
      if (typeof CSSContainerRule === "function" && rule instanceof CSSContainerRule) facts.known = !(facts.container = true);
      const selector = rule.selectorText;
      if (!rule.style) return;
      // Styles left uncomputed while off screen (content-visibility: auto): see capture's copy.
      if (/auto/i.test(rule.style.getPropertyValue("content-visibility"))) facts.locked = true;
      if (!selector) return;
      let reads = false;
      for (const p of READ_PROPS) if (rule.style.getPropertyValue(p)) { reads = true; break; }
      const pointer = rule.style.getPropertyValue("cursor") !== "";
      if (!reads && !pointer) return;
      if (reads) {
        for (const [bit, re] of STATES) if (re.test(selector)) facts.states |= bit;
        if (SILENT_STATE.test(selector)) facts.silent = true;
      }
      if (STRUCTURAL_SELECTOR.test(selector)) facts.structural = true;
      if (/:has\(/i.test(selector)) facts.has = true;
    }, unreadable || (() => { facts.known = false; }));
  }
  // An element of the document or of a shadow tree whose own style says content-visibility.
  const LOCKING_STYLE = '[style*="content-visibility" i]';
  function lockedInline(doc, roots) {
    if (doc.querySelector(LOCKING_STYLE)) return true;
    for (const root of roots) if (root.host && root.host.isConnected && root.querySelector(LOCKING_STYLE)) return true;
    return false;
  }
  // A shadow tree's own sheets' facts (readable: the page's own), each sheet's kept while its
  // rules are as many (a component's sheet is shared by all its instances).
  let factsOfSheet = new WeakMap();
  function shadowFacts(roots, into) {
    for (const root of roots) {
      for (const list of [root.styleSheets, root.adoptedStyleSheets || []]) {
        for (const sheet of list) {
          let kept = factsOfSheet.get(sheet);
          let n;
          try { n = sheet.cssRules.length; } catch (e) { into.known = false; continue; }
          if (!kept || kept.n !== n) {
            const facts = noFacts();
            try { scanRules([sheet.cssRules], facts); } catch (e) { facts.known = false; }
            factsOfSheet.set(sheet, (kept = { n, facts }));
          }
          addFacts(into, kept.facts);
          if (!kept.facts.known) into.known = false;
        }
      }
    }
    return into;
  }

  // The facts of sheets' texts (another origin's, which the caller read through DevTools).
  function factsOfTexts(texts) {
    return texts.map((text) => {
      const facts = noFacts();
      if (/@import/i.test(text)) return null; // what it imports is not in the text
      try {
        const sheet = new CSSStyleSheet();
        sheet.replaceSync(text);
        scanRules([sheet.cssRules], facts);
      } catch (e) {
        return null;
      }
      return facts;
    });
  }

  // An inline style's declarations a pass may read (custom properties too: a sheet's rule may
  // read them through var()).
  // Parsed on an element of a document of its own: the page's content security policy does
  // not apply there (setting a style attribute under it would be refused, and reported).
  let scratch = null;
  function readStyle(text) {
    if (!scratch) scratch = document.implementation.createHTMLDocument("").createElement("div");
    scratch.setAttribute("style", text || "");
    const s = scratch.style;
    let out = "";
    for (const p of READ_PROPS) out += s.getPropertyValue(p) + s.getPropertyPriority(p) + "|";
    out += s.getPropertyValue("cursor") + "|";
    for (let i = 0; i < s.length; i++) if (s[i].startsWith("--")) out += s[i] + ":" + s.getPropertyValue(s[i]) + ";";
    return out;
  }

  function changed(w, how, node) {
    if (w.full) return;
    if (how === "all") w.all.add(node);
    else if (how === "kids") w.kids.add(node);
    else w.seeds.push(node);
    if (++w.count > MAX_WATCHED) fullFrom(w);
  }
  function fullFrom(w) {
    w.full = true;
    w.seeds = [];
    w.all.clear();
    w.kids.clear();
    disconnect(); // nothing more to note: no cost to the page till then
  }
  function disconnect() {
    if (observer) observer.disconnect();
    observer = null;
    observedRoots = new WeakSet();
  }
  const STYLE_TAGS = new Set(["style", "link"]);
  // An element that has or holds an id, where a name was read through one.
  function holdsIds(n) {
    return n.nodeType === 1 && (referring.size > 0 || labelled.size > 0) && (n.id !== "" || n.querySelector("[id]") !== null);
  }
  function onMutations(records) {
    const w = watch;
    if (!w || w.full) return;
    for (const m of records) {
      const t = m.target;
      if (m.type === "characterData") {
        const p = t.parentNode;
        if (p && STYLE_TAGS.has(p.localName)) return fullFrom(w);
        changed(w, "seed", t);
      } else if (m.type === "childList") {
        if (t.nodeType === 9 || STYLE_TAGS.has(t.localName)) return fullFrom(w);
        const parent = t.nodeType === 11 ? t.host : t;
        if (!parent) return fullFrom(w);
        for (const n of m.addedNodes) {
          if (n.nodeType === 1) {
            if (STYLE_TAGS.has(n.localName)) return fullFrom(w);
            if (holdsIds(n)) w.ids = true;
            changed(w, "all", n);
          } else changed(w, "seed", n);
        }
        for (const n of m.removedNodes) {
          if (STYLE_TAGS.has(n.localName)) return fullFrom(w);
          if (holdsIds(n)) w.ids = true; // what an id named (a label's control) may be another now
        }
        // Siblings' positions changed (a list's numbers, the blanks between inline neighbours).
        changed(w, w.structural ? "all" : "kids", parent);
      } else {
        if (STYLE_TAGS.has(t.localName)) return fullFrom(w);
        const name = m.attributeName;
        if (name === "style" && readStyle(m.oldValue) === readStyle(t.getAttribute("style"))) continue;
        if (name === "for") return fullFrom(w);
        // An id or name says what a reference or label names; inert, whether words below it
        // count in a name read through a reference.
        if (name === "id" || name === "name" || name === "inert") w.ids = true;
        changed(w, "all", t);
        // Which slot shows a host's child: the whole shadow tree may show it elsewhere now.
        if (name === "slot" && t.parentNode) changed(w, "all", t.parentNode);
        if (t.localName === "slot") {
          const root = t.getRootNode();
          if (root.host) changed(w, "all", root.host);
        }
        const parent = flatParent(t);
        if (parent && (w.structural || t.localName === "li")) changed(w, w.structural ? "all" : "kids", parent);
      }
      if (w.full) return;
    }
  }
  // Events whose change a MutationObserver does not see (EVENT_STATE's).
  function onStateEvent(e) {
    const w = watch;
    if (!w || w.full) return;
    // A style rule shows or hides on a state (or a sheet may): anything may have changed.
    if (w.states & EVENT_STATE[e.type]) return fullFrom(w);
    if (e.type === "input" || e.type === "change" || e.type === "reset") {
      const t = e.composedPath()[0];
      if (t && t.nodeType === 1) changed(w, "seed", t);
    }
  }
  function onToggle(e) {
    const w = watch;
    const t = e.composedPath()[0];
    if (!w || w.full || !t || t.nodeType !== 1) return;
    if (w.states & OTHER_STATE) return fullFrom(w);
    changed(w, "all", t);
  }
  function onLoad(e) {
    const w = watch;
    const t = e.composedPath()[0];
    if (w && !w.full && t && t.nodeType === 1 && STYLE_TAGS.has(t.localName)) fullFrom(w);
  }
  function onWindowChange(e) {
    if (watch && !watch.full) fullFrom(watch);
  }
  const listening = new WeakSet();
  function listenIn(doc) {
    if (listening.has(doc)) return;
    listening.add(doc);
    for (const type of Object.keys(EVENT_STATE)) doc.addEventListener(type, onStateEvent, true);
    doc.addEventListener("toggle", onToggle, true);
    doc.addEventListener("load", onLoad, true);
    doc.addEventListener("error", onLoad, true);
    doc.addEventListener("visibilitychange", onWindowChange, true);
    doc.addEventListener("fullscreenchange", onWindowChange, true);
    const win = doc.defaultView;
    if (win) for (const type of ["resize", "hashchange", "popstate"]) win.addEventListener(type, onWindowChange, true);
  }
  const OBSERVE = { subtree: true, childList: true, attributes: true, attributeOldValue: true, characterData: true };
  function observeRoot(root) {
    if (!observer || observedRoots.has(root)) return;
    observedRoots.add(root);
    observer.observe(root, OBSERVE);
  }

  // The elements under the pointer and pressed, as one key (only where a rule reads them).
  const pointerIds = new WeakMap();
  let pointerCount = 0;
  function pointerStates(states) {
    let key = "";
    for (const [bit, selector] of [[HOVER, ":hover"], [PRESS, ":active"]]) {
      if (!(states & bit)) continue;
      for (const el of document.querySelectorAll(selector)) {
        let n = pointerIds.get(el);
        if (n === undefined) pointerIds.set(el, (n = ++pointerCount));
        key += n + ",";
      }
      key += "|";
    }
    return key;
  }
  function animationTargets() {
    const targets = [];
    for (const a of document.getAnimations()) {
      const t = a.effect && a.effect.target;
      if (t) targets.push(t);
    }
    return targets;
  }
  function stopWatching() {
    watch = null;
    disconnect();
  }

  function equalBytes(a, b, n) {
    for (let i = 0; i < n; i++) if (a[i] !== b[i]) return false;
    return true;
  }

  // Where two passes' rows first differ (null: nowhere), each row as its decoded fields.
  function firstDifference(a, b) {
    const rowsA = decodeRows(a), rowsB = decodeRows(b);
    for (let i = 0; i < Math.max(rowsA.length, rowsB.length); i++) {
      if (rowsA[i] !== rowsB[i]) return { row: i, incremental: rowsA.slice(Math.max(0, i - 4), i + 4), full: rowsB.slice(Math.max(0, i - 4), i + 4) };
    }
    return null;
  }
  function decodeRows(answer) {
    const text = answer.r, s = answer.s, out = [];
    let p = 0, id = 0;
    const num = () => {
      let z = 0, scale = 1;
      for (;;) {
        const d = DIGIT_OF[text.charCodeAt(p++)];
        if (d < 32) { z += d * scale; break; }
        z += (d - 32) * scale;
        scale *= 32;
      }
      return z % 2 ? -(z + 1) / 2 : z / 2;
    };
    const at = (i) => (i < 0 ? "-" : JSON.stringify(s[i]));
    while (p < text.length) {
      id += num();
      const r = out.length;
      const up = num();
      let line = id + " " + (up ? r - up : -1) + " " + at(num()) + " " + at(num());
      const flags = num();
      line += " " + flags;
      if (flags & 16) line += " v=" + at(num());
      if (flags & 32) line += " h=" + at(num());
      if (flags & 64) {
        const n = num();
        for (let k = 0; k < n; k++) {
          const name = at(num()), kind = num(), v = num();
          line += " " + name + "=" + (kind === 2 || kind === 3 ? at(v) : v);
        }
      }
      out.push(line);
    }
    return out;
  }

  // After a pass: notes what changes from now on (a new observer when the last one stopped).
  function watchFrom(doc, roots, facts) {
    if (!observer) {
      observer = new MutationObserver(onMutations);
      for (const r of [doc, ...roots]) {
        observer.observe(r, OBSERVE);
        observedRoots.add(r);
      }
    } else for (const r of roots) observeRoot(r);
    listenIn(doc);
    watch = {
      full: false, seeds: [], all: new Set(), kids: new Set(), count: 0, ids: false,
      states: facts.known ? facts.states : ANY_STATE, structural: facts.structural || !facts.known,
    };
  }

  // The elements whose rows cannot be copied (each one changed, is an ancestor of a change in
  // the flat tree, or names itself from one), or null when the pass is better read whole.
  function blockedSince(prev, focused, facts) {
    if (observer) onMutations(observer.takeRecords()); // changes not yet delivered
    const w = watch;
    if (!w || w.full) return null;
    const seeds = w.seeds;
    // Changes no event told (a focus, a value set by script, a custom element defined): where a
    // style rule answers to that state, the page is read whole.
    if (focused !== prev.focused) {
      if (w.states & FOCUS) return null;
      seeds.push(prev.focused, focused);
    }
    // The pointer's and the press' elements are looked at too: a page may stop their events
    // before they reach the document.
    if (w.states & (HOVER | PRESS) && pointerStates(w.states) !== prev.pointer) return null;
    for (const f of prev.frameEls) if (f.isConnected) seeds.push(f);
    for (const [c] of controlState) {
      if (!c.isConnected) controlState.delete(c);
      else if (stateOfControl(c) !== controlState.get(c)) {
        if (w.states & VALUE) return null;
        seeds.push(c);
      }
    }
    for (const el of undefinedElements) {
      if (!el.isConnected) undefinedElements.delete(el);
      else if (el.matches(":defined")) {
        if (w.states & OTHER_STATE) return null;
        w.all.add(el); // defined since: it may have a shadow tree now
        undefinedElements.delete(el);
      }
    }
    // An animation changes styles with no event: its element is read again while it runs,
    // and once more after (it may have ended in between).
    for (const t of animationTargets()) w.all.add(t);
    for (const t of prev.animated) if (t.isConnected) w.all.add(t);
    if (w.ids) {
      // An id came or went: every name read through one, every label's control, again.
      for (const el of referring) seeds.push(el);
      for (const el of labelled) seeds.push(el);
      for (const l of document.querySelectorAll("label[for]")) seeds.push(l, l.control);
    }
    const any = seeds.length + w.all.size + w.kids.size;
    // What nothing tells: with a sheet this world cannot read, any change may reach anywhere;
    // a rule on a custom state or a playing medium changes with no event; `:has()` reaches up.
    if (any && (!facts.known || facts.silent || facts.has)) return null;
    if (any > prev.count / 4) return null; // most of the page changed: a full pass costs less
    const blocked = new Set();
    const queue = [...seeds, ...w.all, ...w.kids];
    while (queue.length) {
      for (let n = queue.pop(); n && !blocked.has(n); n = flatParent(n)) {
        if (n.nodeType === 9) break;
        blocked.add(n);
        if (n.nodeType !== 1) continue;
        const refs = referrers.get(n);
        if (refs) for (const r of refs) queue.push(r);
        const tag = n.localName;
        if (tag === "label" && n.control) queue.push(n.control);
        if (n.labels) for (const l of n.labels) queue.push(l);
        if (tag === "table") w.all.add(n); // a cell's change may change what the table is
        else if (tag === "map") return null; // an image map changed
      }
    }
    return blocked;
  }

  // The position after the number of a row's bytes at `p` (its digits below 32 end it).
  function skipNumber(bytes, p) {
    while (DIGIT_OF[bytes[p++]] >= 32);
    return p;
  }

  // ---- the walk ---------------------------------------------------------------------------

  function capture(options) {
    options = beginPass(options);
    textStyleOf = new Map();
    layoutTables = new Map();
    pseudoSelectors = new Map();
    pointerOf = new Map();
    ownBoxOf = new Map();
    ordinals = new Map();
    const mapsOfPass = new Map(); // a tree's image maps by name (mapOf)
    const top = document;
    // An incremental pass (see "reading only what changed"): the last pass's rows are copied
    // where nothing changed, under the same options, document, address and style sheets; its
    // strings are kept, so that the copied bytes still point at theirs.
    const prev = last;
    last = null;
    const incremental = options.incremental === true;
    incrementalPass = incremental;
    const facts = incremental ? factsOf(top, options.sheetFacts, options.restyled !== false) : null;
    const optionsKey = [options.markClickable !== false, options.urls !== false, options.maxNodes, options.frames !== false, options.maxFrames].join();
    let reuse = incremental && !options.fresh && prev !== null && prev.doc === top && prev.optionsKey === optionsKey &&
      !prev.truncated && prev.url === top.URL && prev.base === top.baseURI && prev.sheetsKey === facts.key &&
      table !== null && table.strings.length < 2 * prev.freshStrings + 4096;
    // Rows are copied only where Chromium says no style was computed anew since the last pass
    // (options.restyled false: its style-recalc and layout counts did not move; see capture.py's
    // walk): a rule, a sheet, a shadow tree attached, a slot assigned, an animation, a state a
    // rule reads, a media query change styles with no mutation to see. Nor where some styles are
    // not computed until their subtree is on screen (content-visibility: auto, maybe in a sheet
    // this world cannot read): there a change may wait unseen by the counts. Either way the
    // strings are kept, so that an answer that is the same is still said to be.
    const allFacts = reuse ? mergedFacts(facts, prev.shadowFacts) : null;
    const copy = reuse && options.restyled === false && allFacts.known && !allFacts.locked && !lockedInline(top, prev.shadowRoots);
    const strings = reuse ? table.strings : [];
    const index = reuse ? table.index : new Map();
    // Each row's place, id, parent (rows back), hidden parent and node, for the next pass.
    let rAt = null, rId = null, rUp = null, rVis = null;
    const rNodes = [];
    if (incremental) {
      const size = prev ? prev.count + 1024 : 4096;
      rAt = new Uint32Array(size + 1);
      rId = new Uint32Array(size);
      rUp = new Uint32Array(size);
      rVis = new Uint8Array(size);
    }
    function roomFor(n) {
      if (n < rId.length) return;
      const size = Math.max(n + 1, rId.length * 2);
      const grown = (a, k) => { const b = new a.constructor(size + k); b.set(a); return b; };
      rAt = grown(rAt, 1); rId = grown(rId, 0); rUp = grown(rUp, 0); rVis = grown(rVis, 0);
    }
    let curVis = 0; // the hidden flag the row being written was visited with
    // A row written for a node by another one (an option by its select, an area by its
    // image): no row of the node's own, never copied in the node's place.
    const notOwn = (r) => {
      if (rId !== null) rNodes[r] = null;
    };
    let reused = 0;
    const str = (s) => {
      let i = index.get(s);
      if (i === undefined) {
        i = strings.length;
        strings.push(s);
        index.set(s, i);
      }
      return i;
    };
    let count = 0;
    const unread = [];
    const maxNodes = options.maxNodes || 1000000;
    let frameBudget = options.maxFrames === undefined ? Infinity : options.maxFrames - 1;
    // Report which elements the page's world saw listening for clicks (hook.js).
    const focusedEl = deepActive(top);

    // Rows as one ASCII string (see the top of this file): each number zigzag-encoded, five
    // bits a character, a character of the upper half saying more follow. Text rows take
    // about seven characters.
    let buf = new Uint8Array(1 << 16);
    let at = 0;
    function emit(v) {
      let z = v >= 0 ? v * 2 : -v * 2 - 1;
      if (at + 8 > buf.length) {
        const bigger = new Uint8Array(buf.length * 2);
        bigger.set(buf);
        buf = bigger;
      }
      while (z >= 32) {
        buf[at++] = DIGITS[32 + (z % 32)];
        z = Math.floor(z / 32);
      }
      buf[at++] = DIGITS[z];
    }
    let lastId = 0;
    function row(node, parent, role, name, flags, value, hint, props, slot) {
      const r = count++;
      const id = slot === undefined ? idOf(node) : auxId(node, slot);
      if (rId !== null) {
        roomFor(r);
        rAt[r] = at;
        rId[r] = id;
        rUp[r] = parent < 0 ? 0 : r - parent;
        rVis[r] = curVis;
        rNodes[r] = node;
      }
      const hasValue = value !== null && value !== undefined;
      flags |= (hasValue ? HAS_VALUE : 0) | (hint !== null ? HAS_HINT : 0) | (props.length ? HAS_PROPS : 0);
      emit(id - lastId);
      lastId = id;
      emit(parent < 0 ? 0 : r - parent);
      emit(str(role));
      emit(name === null ? -1 : str(name));
      emit(flags);
      if (hasValue) emit(str(String(value)));
      if (hint !== null) emit(str(hint));
      if (props.length) {
        emit(props.length / 3);
        for (const p of props) emit(p);
      }
      return r;
    }

    function prop(props, name, kind, value) {
      props.push(str(name), kind, kind === 2 || kind === 3 ? str(String(value)) : value);
    }

    // The walk's stack, as three arrays (no array per entry): the node, its parent row, and
    // flags: 1 its parent is hidden by visibility, 2 (an incremental pass) an ancestor changed
    // as a whole (no row below it is copied), 4 its parent's children moved (its own are not).
    const stack = [];
    let inherit = 0; // the flags 2 and 4 the children of the node being read get
    const shadowRoots = [];
    const frameEls = [];
    const parents = [];
    const hiddens = [];
    const docs = [];
    let entered = 0;
    // A modal dialog makes the rest of its document inert: not read (Chromium's tree leaves it
    // out, and nothing there can be clicked). `aboveModal` holds each modal's ancestors in the
    // flat tree (shadow roots and slots too): a node whose parent is one of them is read only
    // if it is one as well, or a modal itself.
    const modals = new Set();
    const aboveModal = new Set();
    function findModals(doc) {
      for (const d of doc.getElementsByTagName("dialog")) {
        if (!d.open || !d.matches(":modal")) continue;
        modals.add(d);
        for (let n = flatParent(d); n && !aboveModal.has(n); n = flatParent(n)) aboveModal.add(n);
      }
    }
    function enterDocument(doc, parent) {
      entered++;
      // Styles and layout brought up to date before anything is read, also where nothing will
      // be: a change made since they were last computed is computed now, and Chromium's counts
      // show it to the caller (see restyled above).
      if (doc.documentElement) doc.documentElement.getBoundingClientRect();
      findModals(doc);
      askHook(doc, options, docs);
      const props = [];
      const active = doc.activeElement;
      if (doc.hasFocus() && (!active || active === doc.body || active === doc.documentElement)) prop(props, "focused", 0, 1);
      if (doc.URL) prop(props, "url", 2, doc.URL);
      // The title as the document gives it (white space already collapsed): the tab's title too.
      const r = row(doc, parent, "RootWebArea", doc.title, 8, null, null, props);
      if (doc.documentElement) visit(doc.documentElement, r, false);
    }
    enterDocument(top, -1);
    // What changed since the last pass, and where its rows are (the first row of each node,
    // and where each row's subtree ends).
    let blocked = null, rowOf = null, ends = null, wholes = null, moved = null;
    if (copy && !modals.size) blocked = blockedSince(prev, focusedEl, allFacts);
    if (blocked !== null) {
      wholes = watch.all;
      moved = watch.kids;
      rowOf = new Map();
      for (let i = prev.count - 1; i >= 0; i--) rowOf.set(prev.nodes[i], i);
      ends = new Uint32Array(prev.count);
      for (let i = 0; i < prev.count; i++) ends[i] = i + 1;
      for (let i = prev.count - 1; i > 0; i--) {
        const up = prev.up[i];
        if (up && ends[i] > ends[i - up]) ends[i - up] = ends[i];
      }
    }

    while (stack.length) {
      const node = stack.pop();
      const parent = parents.pop();
      const hiddenParent = hiddens.pop();
      if (count >= maxNodes) break;
      inherit = 0;
      if (aboveModal.size && aboveModal.has(node.parentNode) && !aboveModal.has(node) && !modals.has(node)) continue;
      if (node.nodeType === 3) {
        if (hiddenParent & 1) continue;
        let data = node.data;
        if (!data) continue;
        const style = textStyle(node.parentNode);
        if (style & CONTENTS_HIDDEN) continue;
        const ws = style & WS_MASK;
        if (style & CASE_MASK) data = transform(data, style & CASE_MASK);
        if (ws === PRESERVE) {
          row(node, parent, "StaticText", data, 0, null, null, NO_PROPS);
          continue;
        }
        if (ws === PRESERVE_BREAKS) data = data.replace(/[\t\f\r ]*\n[\t\f\r ]*/g, "\n").replace(/[\t\f\r ]+/g, " ");
        else data = data.replace(/[\t\n\f\r ]+/g, " ");
        if (!/[^\t\n\f\r ]/.test(data)) {
          // Whitespace between two inline neighbours still parts their words.
          const prev = node.previousSibling;
          const nxt = node.nextSibling;
          if (!prev || !nxt || (prev.nodeType === 1 && block(prev)) || (nxt.nodeType === 1 && block(nxt))) continue;
          row(node, parent, "StaticText", " ", 0, null, null, NO_PROPS);
          continue;
        }
        row(node, parent, "StaticText", data, 0, null, null, NO_PROPS);
        continue;
      }
      if (node.nodeType !== 1) continue;
      const el = node;
      curVis = hiddenParent & 1;
      if (blocked !== null) {
        if (!(hiddenParent & 6) && !blocked.has(el)) {
          const r0 = rowOf.get(el);
          if (r0 !== undefined && prev.vis[r0] === curVis && count + ends[r0] - r0 <= maxNodes) {
            copyRows(r0, parent);
            continue;
          }
        }
        if (hiddenParent & 2 || wholes.has(el) || (moved.has(el) && el.shadowRoot)) inherit = 2;
        else if (moved.has(el)) inherit = 4;
      }
      const tag = el.localName;
      if (incremental && tag.includes("-") && !el.matches(":defined")) undefinedElements.add(el);
      if (SKIP.has(tag) && el.namespaceURI === XHTML) continue;
      if (aria(el, "aria-hidden") === "true" || el.inert) continue;
      let hiddenSelf = false;
      if (!el.checkVisibility(VISIBILITY)) {
        const st = getComputedStyle(el);
        if (st.display === "none") continue;
        if (st.visibility !== "visible") hiddenSelf = true;
        // No box of its own: not shown, but for a canvas' fallback content (what Chromium reads
        // in its place, focusable as any element).
        else if (st.display !== "contents" && !el.checkVisibility() && !inCanvas(el)) continue;
      }
      let role = hiddenSelf ? null : roleOf(el);
      if (role === "none" || role === null) {
        // Not a node of its own; its children are the parent's. A block one still parts the
        // text on either side of it (an ignored node, as in Chromium's tree).
        if (block(el)) pushChildren(el, row(el, parent, "none", null, 4, null, null, NO_PROPS), hiddenSelf);
        else pushChildren(el, parent, hiddenSelf);
        continue;
      }
      if (role === "LineBreak") {
        row(el, parent, "LineBreak", "\n", 0, null, null, NO_PROPS);
        continue;
      }
      if (role === "LabelText" && redundantLabel(el)) {
        // Its words are the name of the checkbox it labels: read once, as Chromium reads them.
        const control = el.control;
        if (control.parentNode === el) visit(control, parent, false);
        continue;
      }
      // A listener makes an element a node of its own (as Chromium keeps it); it is marked
      // an action target only when asked for.
      const listens = clickable.has(el) || el.hasAttribute("onclick");
      const pointer = role === "generic" && tag !== "a" && !listens && options.markClickable !== false && pointerTarget(el);
      const isClickable = options.markClickable !== false && (listens || pointer);
      // A label whose control is not shown (a switch CSS draws over a hidden checkbox, a radio
      // drawn as a pill): the label is what a person clicks, so it is a target, with the
      // control's state; Chromium's DOM snapshot marks it clickable too.
      const standsIn = role === "LabelText" && options.markClickable !== false && labelStandsIn(el);
      if (role === "region" && !named(el)) {
        role = "generic"; // an unnamed section is no landmark
      }
      if (role === "generic" && tag !== "a" && !listens && !pointer && !focusable(el) && !el.hasAttribute("role") && !el.isContentEditable && !hasAria(el)) {
        // A plain container: a block one stays as an ignored node (its boundary parts the
        // text around it), an inline one is not a node at all.
        if (tag === "html" || tag === "body") {
          const r = row(el, parent, "none", null, 4, null, null, NO_PROPS);
          pushChildren(el, r, false);
        } else if (block(el) || el.shadowRoot) {
          const r = row(el, parent, "generic", null, 0, null, null, NO_PROPS);
          pushChildren(el, r, false);
        } else {
          pushChildren(el, parent, false);
        }
        continue;
      }
      const props = [];
      let value = null;
      let [name, fromContents] = nameOf(el, tag, role);
      // States and properties (Chromium's names and kinds).
      if (role === "link" && options.urls !== false && el.href) prop(props, "url", 2, el.href);
      if (role === "heading") {
        const lv = parseInt(aria(el, "aria-level") || "", 10);
        prop(props, "level", 1, lv > 0 ? lv : /^h[1-6]$/.test(tag) ? +tag[1] : 2);
      }
      const isFormControl = tag === "input" || tag === "select" || tag === "textarea" || tag === "button";
      if (incremental && isFormControl && tag !== "button") noteControl(el);
      if (standsIn) {
        const control = el.control;
        if (incremental) noteControl(control);
        if (control.localName === "input" && (control.type === "checkbox" || control.type === "radio")) {
          prop(props, "checked", 2, control.indeterminate ? "mixed" : control.checked ? "true" : "false");
        }
        if (control.matches(":disabled")) prop(props, "disabled", 0, 1);
      }
      if (role === "checkbox" || role === "radio" || role === "switch" || role === "menuitemcheckbox" || role === "menuitemradio") {
        let checked;
        if (tag === "input") checked = el.indeterminate ? "mixed" : el.checked ? "true" : "false";
        else {
          const a = aria(el, "aria-checked");
          checked = a === "true" ? "true" : a === "mixed" ? "mixed" : "false";
        }
        prop(props, "checked", 2, checked);
      }
      const pressed = aria(el, "aria-pressed");
      if (pressed === "true" || pressed === "false" || pressed === "mixed") prop(props, "pressed", 2, pressed);
      if (role === "option" || role === "tab" || role === "treeitem" || role === "gridcell" || role === "row") {
        const sel = tag === "option" ? el.selected : aria(el, "aria-selected") === "true";
        if (tag === "option" || role === "tab" || aria(el, "aria-selected") !== null) prop(props, "selected", 0, sel ? 1 : 0);
      }
      const expanded = aria(el, "aria-expanded");
      if (expanded === "true" || expanded === "false") prop(props, "expanded", 0, expanded === "true" ? 1 : 0);
      else if (tag === "summary" && el.parentElement && el.parentElement.localName === "details") prop(props, "expanded", 0, el.parentElement.open ? 1 : 0);
      else if (role === "combobox" && tag === "select") prop(props, "expanded", 0, 0);
      if ((isFormControl || tag === "fieldset" || tag === "option" || tag === "optgroup") && el.matches(":disabled")) prop(props, "disabled", 0, 1);
      else if (aria(el, "aria-disabled") === "true") prop(props, "disabled", 0, 1);
      if (tag === "input" || tag === "select" || tag === "textarea") {
        prop(props, "required", 0, el.required ? 1 : 0);
        if (el.readOnly) prop(props, "readonly", 0, 1);
      } else if (aria(el, "aria-required") === "true") prop(props, "required", 0, 1);
      const popup = aria(el, "aria-haspopup");
      if (popup && popup !== "false") prop(props, "hasPopup", 2, popup === "true" ? "menu" : popup);
      else if (role === "combobox" && tag === "select") prop(props, "hasPopup", 2, "menu");
      if (role === "listbox" && (el.multiple || aria(el, "aria-multiselectable") === "true")) prop(props, "multiselectable", 0, 1);
      if (role === "dialog" && (aria(el, "aria-modal") === "true" || el.matches(":modal"))) prop(props, "modal", 0, 1);
      if (el === focusedEl) prop(props, "focused", 0, 1);
      if (role === "slider" || role === "spinbutton" || role === "progressbar" || role === "meter" || role === "scrollbar") {
        let now = aria(el, "aria-valuenow");
        let min = aria(el, "aria-valuemin");
        let max = aria(el, "aria-valuemax");
        if (tag === "input") { now = el.value; min = el.min || (el.type === "range" ? "0" : null); max = el.max || (el.type === "range" ? "100" : null); }
        else if (tag === "progress" || tag === "meter") { now = String(el.value); min = tag === "meter" ? String(el.min) : "0"; max = String(el.max); }
        if (min !== null && min !== "" && isFinite(+min)) prop(props, "valuemin", 3, +min);
        if (max !== null && max !== "" && isFinite(+max)) prop(props, "valuemax", 3, +max);
        const vt = aria(el, "aria-valuetext");
        if (vt) prop(props, "valuetext", 2, vt);
        if (now !== null && now !== "" && isFinite(+now)) value = +now;
      }
      if (role === "textbox" || role === "searchbox" || DATE_FIELD.has(role) || (role === "combobox" && tag !== "select")) {
        if (tag === "input" || tag === "textarea") value = shownValue(el);
        else if (el.isContentEditable) value = el.innerText;
      } else if (role === "combobox" && tag === "select") {
        value = optionText(el);
      }
      // An editing host (contenteditable, not inside another): Chromium gives it the text as
      // its value and its DOM snapshot marks it clickable, whatever its role; the text is read
      // there, once, and the element is a target that `type` fills.
      const editHost = value === null && el.isContentEditable && !(el.parentElement && el.parentElement.isContentEditable);
      if (editHost) {
        value = el.innerText;
        if (fromContents) [name, fromContents] = ["", false]; // its words are its value, not its name
      }
      if (tag === "input" && el.type === "color") value = el.value;
      else if (tag === "input" && el.type === "file") {
        value = el.files && el.files.length ? Array.from(el.files, (f) => f.name).join(", ") : "No file chosen";
      }
      if (role === "textbox" && tag === "textarea") prop(props, "multiline", 0, 1);
      if ((tag === "td" || tag === "th") && role !== "generic") {
        // A cell over several columns or rows: the Markdown table keeps the others aligned.
        if (el.colSpan > 1) prop(props, "colspan", 1, el.colSpan);
        if (el.rowSpan > 1) prop(props, "rowspan", 1, el.rowSpan);
      }
      // An unnamed target (a link around an image without alt): what its DOM says, as a hint,
      // and it is marked clickable as Chromium's DOM snapshot marks a link or a button.
      const hint = !name && options.markClickable !== false && (isClickable || standsIn || role === "link" || role === "button") ? hintOf(el) : null;
      const flags = (fromContents ? 1 : 0) | (isClickable || hint !== null || editHost || standsIn ? 2 : 0);
      const r = row(el, parent, role, name, flags, value, hint, props);
      if (tag === "img" && el.useMap) areaLinks(el, r);
      if (tag === "iframe" || tag === "frame") {
        // A frame's document is read whole at every pass (no observer watches it): no row
        // above it or in it is copied.
        if (incremental) frameEls.push(el);
        inherit = 2;
        let doc = null;
        try { doc = el.contentDocument; } catch (e) { doc = null; }
        if (options.frames === false) continue;
        // Frames are read up to the cap, in document order (the rest are said to be left out).
        if (frameBudget <= 0) continue;
        frameBudget--;
        if (doc && doc.documentElement) enterDocument(doc, r);
        else unread.push(idOf(el));
        continue;
      }
      if (tag === "select") {
        // Chromium's shape: the combobox holds a popup that holds the options.
        const popup = role === "combobox" ? row(el, r, "MenuListPopup", "", 0, null, null, [], 0) : r;
        for (const o of el.querySelectorAll("option")) {
          if (o.hidden) continue;
          const op = [];
          prop(op, "selected", 0, o.selected ? 1 : 0);
          if (o.disabled) prop(op, "disabled", 0, 1);
          notOwn(row(o, popup, "option", collapse(o.label || o.text), 1, null, null, op));
        }
        continue;
      }
      if (tag === "textarea" || tag === "input" || UNSHOWN_CONTENTS.has(tag)) continue;
      if (tag === "li" && role === "listitem") {
        const marker = markerOf(el);
        if (marker) row(el, r, "ListMarker", marker, 0, null, null, [], 1);
      }
      if (tag === "details" && !el.open) {
        for (const c of el.children) if (c.localName === "summary") visit(c, r, false);
        continue;
      }
      pushChildren(el, r, false);
    }
    const closed = hookDone(docs, options);
    lastUnread = unread;
    const truncated = stack.length > 0;
    const tail = `${unread}|${closed}`;
    const same = reuse && count === prev.count && !truncated && options.have === prev.answer &&
      strings.length === prev.strings && tail === prev.tail && at === prev.at[prev.count] && equalBytes(buf, prev.buf, at);
    const number = same ? prev.answer : ++answers;
    // x, next, frames, origin, reused, answer and same first: the caller reads them off the
    // answer's first bytes.
    const answer = {
      x: unread, next, frames: entered - 1, origin: performance.timeOrigin, reused, answer: number, same: same ? 1 : 0,
      v: 2, s: strings, r: same && !options.check ? "" : new TextDecoder("latin1").decode(buf.subarray(0, at)),
      closed, truncated,
    };
    // Last: sheets this world cannot read, for the caller to read (see factsOf).
    if (incremental && facts.unknown.length) answer.sheets = facts.unknown;
    if (incremental) {
      rAt[count] = at;
      last = {
        count, buf, at: rAt, id: rId, up: rUp, vis: rVis, nodes: rNodes, doc: top, optionsKey,
        truncated, frameEls, url: top.URL, base: top.baseURI, answer: number, strings: strings.length, tail,
        sheetsKey: facts.key, focused: focusedEl, freshStrings: reuse ? prev.freshStrings : strings.length,
        animated: animationTargets(),
        pointer: "",
        // What the shadow trees' own sheets say (those of trees in copied rows were read before).
        shadowFacts: shadowFacts(shadowRoots, blocked !== null ? { ...prev.shadowFacts } : noFacts()),
        shadowRoots: blocked !== null ? [...new Set([...prev.shadowRoots, ...shadowRoots])] : shadowRoots,
      };
      table = { strings, index };
      // Elements long gone are let go (a long-lived app replaces its lists all day).
      for (const kept of [referring, labelled, undefinedElements]) if (kept.size > 4096) for (const el of kept) if (!el.isConnected) kept.delete(el);
      if (controlState.size > 4096) for (const [c] of controlState) if (!c.isConnected) controlState.delete(c);
      if (!last.truncated) {
        watchFrom(top, shadowRoots, mergedFacts(facts, last.shadowFacts));
        if (watch.states & (HOVER | PRESS)) last.pointer = pointerStates(watch.states);
      }
      else stopWatching();
      // A check (tests): the same page read whole must give the same rows.
      if (options.check && reused) {
        answer.mismatch = firstDifference(answer, capture({ ...options, check: false, fresh: true }));
        last.answer = number; // the whole reading's rows are this answer's (else the check fails)
      }
    } else stopWatching();
    if (same) {
      delete answer.s;
      delete answer.r;
    }
    return answer;

    // An image map's areas with an address: links inside the image, as in Chromium's tree
    // (an area has no box of its own: the user agent's sheet says display: none).
    function areaLinks(img, parentRow) {
      const map = mapOf(img, mapsOfPass);
      if (!map) return;
      for (const a of map.querySelectorAll("area[href]")) {
        const props = [];
        if (options.urls !== false && a.href) prop(props, "url", 2, a.href);
        notOwn(row(a, parentRow, "link", nameOf(a, "area", "link")[0], 0, null, null, props));
      }
    }

    function visit(node, parentRow, hidden) {
      stack.push(node);
      parents.push(parentRow);
      hiddens.push((hidden ? 1 : 0) | inherit);
    }

    // The rows of `from`'s subtree in the last pass, under `parentRow`: the first one written
    // again (its id and parent are relative to the rows before it), the rest their bytes as
    // they were (relative to each other; their strings are the kept table's).
    function copyRows(from, parentRow) {
      const to = ends[from];
      const r = count++;
      roomFor(r + to - from);
      rAt[r] = at;
      rId[r] = prev.id[from];
      rUp[r] = parentRow < 0 ? 0 : r - parentRow;
      rVis[r] = prev.vis[from];
      rNodes[r] = prev.nodes[from];
      emit(prev.id[from] - lastId);
      emit(parentRow < 0 ? 0 : r - parentRow);
      const p = skipNumber(prev.buf, skipNumber(prev.buf, prev.at[from]));
      const end = prev.at[to];
      if (at + end - p + 8 > buf.length) {
        const bigger = new Uint8Array(Math.max(buf.length * 2, at + end - p + 8));
        bigger.set(buf);
        buf = bigger;
      }
      buf.set(prev.buf.subarray(p, end), at);
      const shift = at - p;
      at += end - p;
      for (let i = from + 1; i < to; i++) {
        const k = count++;
        rAt[k] = prev.at[i] + shift;
        rId[k] = prev.id[i];
        rUp[k] = prev.up[i];
        rVis[k] = prev.vis[i];
        rNodes[k] = prev.nodes[i];
      }
      lastId = prev.id[to - 1];
      reused += to - from;
    }

    // Children in reverse onto the stack (sibling links: no NodeList reads); a shadow host's
    // are its shadow root's, a slot's its assigned nodes (else its own, the fallback).
    function pushChildren(el, parentRow, hidden) {
      if (el.localName === "slot") {
        const list = el.assignedNodes({ flatten: true });
        if (list.length) {
          for (let i = list.length - 1; i >= 0; i--) visit(list[i], parentRow, hidden);
          return;
        }
      }
      if (el.shadowRoot && incremental) shadowRoots.push(el.shadowRoot);
      const from = el.shadowRoot || el;
      for (let c = from.lastChild; c; c = c.previousSibling) visit(c, parentRow, hidden);
    }
  }

  // ---- the page as HTML (the view of models that read markup: ScribeAgent) -----------------
  //
  //   {x, next, frames, origin: as capture's, n: [nodes], closed: [ids of closed shadow hosts],
  //    truncated: bool}
  //
  // n holds six entries a node, in document order: the index of its parent (-1: none), its
  // node type (1 element, 3 text, 8 comment, 10 doctype), its tag name, text or doctype name,
  // its attributes as [name, value, ...] (0 but for elements), 1 when it is outside the HTML
  // namespace, and its registry id (0 but for elements). The shape is DOM.getDocument's for
  // the same document, which the view was read from before: whitespace-only text left out
  // (DevTools leaves it out), a script's or style's text cut at 10,000 characters (DevTools
  // cuts every text there), an open shadow root's nodes before the host's own, a template
  // empty, a readable frame's <body> contents after its <iframe> in a <div>. options.body:
  // only the <body> contents of this document (a frame's own pass), at the top.
  const BLANK = /^[ \t\n\v\f\r]*$/;
  const CODE = new Set(["script", "style"]);
  const CODE_MAX = 10000;
  function frameBody(doc) {
    const root = doc.documentElement;
    if (!root) return [];
    for (let c = root.firstElementChild; c; c = c.nextElementSibling) {
      if (c.localName === "body" || c.localName === "frameset") return c.childNodes;
    }
    return root.childNodes;
  }
  function html(options) {
    options = beginPass(options);
    const n = [];
    const unread = [];
    const docs = [];
    const maxNodes = options.maxNodes || 1000000;
    let frameBudget = options.maxFrames === undefined ? Infinity : options.maxFrames - 1;
    let count = 0;
    let entered = 0;
    const stack = [];
    const parents = [];
    const push = (list, parent) => {
      for (let i = list.length - 1; i >= 0; i--) {
        stack.push(list[i]);
        parents.push(parent);
      }
    };
    const add = (parent, type, name, attrs, foreign, id) => {
      n.push(parent, type, name, attrs, foreign, id);
      return count++;
    };
    askHook(document, options, docs);
    push(options.body ? frameBody(document) : document.childNodes, -1);
    while (stack.length) {
      if (count >= maxNodes) break;
      const node = stack.pop();
      const parent = parents.pop();
      const type = node.nodeType;
      if (type === 3) {
        let data = node.data;
        if (BLANK.test(data)) continue;
        // A script's or a style sheet's code is never shown, and can be megabytes: cut where
        // DevTools cuts it.
        if (data.length > CODE_MAX && CODE.has(node.parentNode.localName) && node.parentNode.namespaceURI === XHTML) {
          data = data.slice(0, CODE_MAX) + "\u2026";
        }
        add(parent, 3, data, 0, 0, 0);
        continue;
      }
      if (type === 8) {
        add(parent, 8, node.data, 0, 0, 0);
        continue;
      }
      if (type === 10) {
        if (!count) add(parent, 10, node.name || "html", 0, 0, 0);
        continue;
      }
      if (type !== 1) continue;
      const el = node;
      const attrs = [];
      for (const a of el.attributes) attrs.push(a.name, a.value);
      const foreign = el.namespaceURI === XHTML ? 0 : 1;
      const tag = el.localName;
      const here = add(parent, 1, tag, attrs, foreign, idOf(el));
      if (!foreign && (tag === "iframe" || tag === "frame") && options.frames !== false && frameBudget > 0) {
        frameBudget--;
        let doc = null;
        try { doc = el.contentDocument; } catch (e) { doc = null; }
        if (doc) {
          entered++;
          askHook(doc, options, docs);
          push(frameBody(doc), add(parent, 1, "div", [], 0, 0));
        } else {
          unread.push(idOf(el)); // another origin's: a pass of its own, put here by the caller
        }
        continue;
      }
      if (tag === "template" && !foreign) continue;
      push(el.childNodes, here);
      if (el.shadowRoot) push(el.shadowRoot.childNodes, here); // popped first
    }
    const closed = hookDone(docs, options);
    return {
      x: unread, next, frames: entered, origin: performance.timeOrigin,
      v: 1, n, closed, truncated: stack.length > 0,
    };
  }

  // Ordinals of an ordered list's items, one pass per list (cached for the capture): an item's
  // value, else the list's start counted on (down, in a reversed list).
  let ordinals = new Map();
  function markerOf(li) {
    const list = li.parentElement;
    if (!list || list.localName !== "ol") return null;
    let known = ordinals.get(list);
    if (!known) {
      const type = getComputedStyle(list).listStyleType;
      const items = [];
      for (const c of list.children) if (c.localName === "li") items.push(c);
      const reversed = list.hasAttribute("reversed");
      let n = list.hasAttribute("start") ? parseInt(list.getAttribute("start"), 10) || 1 : reversed ? items.length : 1;
      const numbers = new Map();
      for (const c of items) {
        if (c.hasAttribute("value")) n = parseInt(c.getAttribute("value"), 10) || n;
        numbers.set(c, n);
        n += reversed ? -1 : 1;
      }
      known = { type, numbers };
      ordinals.set(list, known);
    }
    const type = known.type;
    const n = known.numbers.get(li);
    if (type === "none" || n === undefined) return null;
    if (type === "lower-alpha" || type === "lower-latin") return alpha(n).toLowerCase() + ". ";
    if (type === "upper-alpha" || type === "upper-latin") return alpha(n) + ". ";
    if (type === "lower-roman") return roman(n).toLowerCase() + ". ";
    if (type === "upper-roman") return roman(n) + ". ";
    if (type === "disc" || type === "circle" || type === "square") return null;
    return n + ". ";
  }

  function alpha(n) {
    let s = "";
    while (n > 0) { n--; s = String.fromCharCode(65 + (n % 26)) + s; n = Math.floor(n / 26); }
    return s || "0";
  }

  function roman(n) {
    if (n <= 0 || n >= 4000) return String(n);
    const t = [[1000, "M"], [900, "CM"], [500, "D"], [400, "CD"], [100, "C"], [90, "XC"], [50, "L"], [40, "XL"], [10, "X"], [9, "IX"], [5, "V"], [4, "IV"], [1, "I"]];
    let s = "";
    for (const [v, r] of t) while (n >= v) { s += r; n -= v; }
    return s;
  }

  function deepActive(doc) {
    let a = doc.activeElement;
    for (;;) {
      if (a && a.shadowRoot && a.shadowRoot.activeElement) { a = a.shadowRoot.activeElement; continue; }
      if (a && (a.localName === "iframe" || a.localName === "frame")) {
        let d = null;
        try { d = a.contentDocument; } catch (e) { d = null; }
        if (d && d.activeElement) { a = d.activeElement; continue; }
      }
      return a;
    }
  }

  // Viewport boxes of the nodes of this document that have one: [id, x, y, width, height].
  function boxes(list) {
    const out = [];
    for (const id of list) {
      const node = lookup(id);
      if (!node || node.nodeType !== 1 || node.ownerDocument !== document) continue;
      const r = node.localName === "area" ? areaRect(node) : node.getBoundingClientRect();
      if (r && r.width > 0 && r.height > 0) out.push([id, r.x, r.y, r.width, r.height]);
    }
    return out;
  }

  // The part of the viewport that holds the page's content: the union of the boxes of the
  // text and the replaced elements (images, fields, canvases) in view, as [x, y, width,
  // height]; null when there is none, or past `limit` nodes (the whole viewport then).
  const REPLACED = new Set(["img", "svg", "canvas", "video", "input", "textarea", "select", "button", "iframe"]);
  function contentBox(limit) {
    const vw = innerWidth, vh = innerHeight;
    let x0 = Infinity, y0 = Infinity, x1 = -Infinity, y1 = -Infinity, seen = 0;
    const add = (r) => {
      if (r.width <= 0 || r.height <= 0 || r.right <= 0 || r.bottom <= 0 || r.left >= vw || r.top >= vh) return;
      x0 = Math.min(x0, r.left); y0 = Math.min(y0, r.top); x1 = Math.max(x1, r.right); y1 = Math.max(y1, r.bottom);
    };
    const root = document.body || document.documentElement;
    if (!root) return null;
    const walker = document.createTreeWalker(root, NodeFilter.SHOW_ELEMENT | NodeFilter.SHOW_TEXT);
    const range = document.createRange();
    for (let n = walker.nextNode(); n; n = walker.nextNode()) {
      if (++seen > limit) return null;
      if (n.nodeType === 3) {
        if (!n.data.trim()) continue;
        range.selectNodeContents(n);
        add(range.getBoundingClientRect());
      } else if (REPLACED.has(n.localName)) {
        add(n.getBoundingClientRect());
      }
    }
    if (x0 === Infinity) return null;
    const x = Math.max(0, x0), y = Math.max(0, y0);
    return [x, y, Math.min(vw, x1) - x, Math.min(vh, y1) - y];
  }

  // Where a click on element `id` of this document lands, read from this world (nothing the
  // page patches is used): the centre of its first box in the viewport (and its bounding box),
  // scrolled into view if it is not in it, and hit-tested to the element or inside it.
  // `settle`: first wait for a rendering frame (the pointer has just arrived: what a :hover
  // restyles is laid out).
  // [x, y, boxX, boxY, width, height], or a word saying why not — "gone", "document" (the tab
  // shows another document than `origin`), "select" (an option of a drop-down), "disabled",
  // "hidden", "covered" (the point hits another element), "frame" (no rendering frame came):
  // the caller then takes the long way, which waits and says what is wrong.
  function nextFrame() {
    return new Promise((done) => {
      const timer = setTimeout(() => done(false), 200);
      requestAnimationFrame(() => { clearTimeout(timer); done(true); });
    });
  }
  function hitAt(x, y) {
    let hit = document.elementFromPoint(x, y);
    while (hit && hit.shadowRoot) {
      const inner = hit.shadowRoot.elementFromPoint(x, y);
      if (!inner || inner === hit) break;
      hit = inner;
    }
    return hit;
  }
  async function pointAt(id, origin, settle) {
    if (settle && !(await nextFrame())) return "frame";
    if (origin !== null && performance.timeOrigin !== origin) return "document";
    const el = lookup(id);
    if (!el || el.nodeType !== 1 || el.ownerDocument !== document) return "gone";
    if (el.localName === "option" || el.closest("select, datalist")) return "select";
    if (el.matches(":disabled") || el.closest("[aria-disabled=true]")) return "disabled";
    const vw = innerWidth, vh = innerHeight;
    const first = () => {
      if (el.localName === "area") {
        const r = areaRect(el);
        return r && r.width >= 1 && r.height >= 1 ? r : null;
      }
      for (const r of el.getClientRects()) if (r.width >= 1 && r.height >= 1) return r;
      return null;
    };
    const outside = (r) => r.right <= 0 || r.bottom <= 0 || r.left >= vw || r.top >= vh;
    let r = first();
    if (!r) return "hidden";
    if (outside(r)) {
      if (settle) return "hidden";  // it moved out of view since the pointer came
      const into = el.localName === "area" ? areaImage(el) || el : el; // an area has no box to scroll to
      if (typeof into.scrollIntoViewIfNeeded === "function") into.scrollIntoViewIfNeeded(true);
      else into.scrollIntoView({ block: "center", inline: "center" });
      r = first();
      if (!r || outside(r)) return "hidden";
    }
    const left = Math.max(r.left, 0), top = Math.max(r.top, 0);
    const x = (left + Math.min(r.right, vw)) / 2, y = (top + Math.min(r.bottom, vh)) / 2;
    for (let n = hitAt(x, y); n; n = n.parentNode || n.host) {
      if (n === el) {
        const b = el.getBoundingClientRect();
        return [x, y, b.x, b.y, b.width, b.height];
      }
    }
    return "covered";
  }

  // A text field made ready for what a `type` writes (its short way), from this world: an
  // <input> that takes typed text (by its type as the element reads it: an unknown type is a
  // text field) or a <textarea>, enabled and editable, with a box, in view (scrolled there if
  // not), its text selected — typing replaces it — and focused: what Playwright's fill does
  // before it inserts the text. Its box [x, y, width, height], or a word saying why not —
  // "document", "gone", "kind" (another element: a date, a number, an editable...), "disabled",
  // "readonly", "inert", "hidden", "focus" (it did not keep the focus) —: the caller then takes
  // the long way, which waits and says what is wrong. Nothing is selected or focused before
  // the checks that need no focus have passed.
  const TYPED_INPUTS = new Set(["text", "search", "email", "url", "tel", "password"]);
  function fieldAt(id, origin) {
    if (origin !== null && performance.timeOrigin !== origin) return "document";
    const el = lookup(id);
    if (!el || el.nodeType !== 1 || el.ownerDocument !== document) return "gone";
    const input = el instanceof HTMLInputElement;
    if (!(input && TYPED_INPUTS.has(el.type)) && !(el instanceof HTMLTextAreaElement)) return "kind";
    if (el.matches(":disabled") || el.closest("[aria-disabled=true]")) return "disabled";
    if (el.readOnly || (el.getAttribute("aria-readonly") || "").trim().toLowerCase() === "true") return "readonly";
    // Inert (by its own or an ancestor's attribute, or outside an open modal dialog): focus
    // would not move there, and the text would go where the focus is.
    const modal = document.querySelector("dialog:modal");
    if (el.closest("[inert]") || (modal && !modal.contains(el))) return "inert";
    if (!el.checkVisibility({ visibilityProperty: true })) return "hidden";
    const vw = innerWidth, vh = innerHeight;
    let r = el.getBoundingClientRect();
    if (r.width <= 0 || r.height <= 0) return "hidden";
    if (r.right <= 0 || r.bottom <= 0 || r.left >= vw || r.top >= vh) {
      el.scrollIntoViewIfNeeded(true);
      r = el.getBoundingClientRect();
    }
    if (input) {
      el.select();
    } else {
      el.selectionStart = 0;
      el.selectionEnd = el.value.length;
    }
    el.focus();
    // A page's focus listener can send the focus elsewhere: then nothing is typed here.
    if (deepActive(document) !== el) return "focus";
    return [r.x, r.y, r.width, r.height];
  }

  // Where typed keys go now (a `type` into an element that is no field clicks it first, then
  // types): "text" (a field, an editable, a widget that takes text), "control" (a button, a
  // link, a box to tick: keys fill nothing, and Space or Enter would press it), "nowhere" (the
  // document itself), or "element" (anything else focused: a custom widget may read keys).
  const TEXT_ROLES = new Set(["textbox", "searchbox", "combobox", "spinbutton"]);
  const CONTROL_ROLES = new Set([
    "button", "link", "checkbox", "radio", "switch", "menuitem", "menuitemcheckbox", "menuitemradio", "tab",
    "option", "treeitem",
  ]);
  const CONTROL_INPUTS = new Set(["checkbox", "radio", "button", "submit", "reset", "image", "file"]);
  function focusKind() {
    const el = deepActive(document);
    if (!el || el.nodeType !== 1) return "nowhere";
    if (el.isContentEditable) return "text";
    const tag = el.localName;
    if (tag === "textarea" || tag === "select") return "text";
    if (tag === "input") return CONTROL_INPUTS.has((el.getAttribute("type") || "").toLowerCase()) ? "control" : "text";
    const role = (aria(el, "role") || "").trim().split(/\s+/)[0].toLowerCase();
    if (TEXT_ROLES.has(role)) return "text";
    if (CONTROL_ROLES.has(role)) return "control";
    if (tag === "body" || tag === "html") return "nowhere";
    if (tag === "button" || tag === "summary" || ((tag === "a" || tag === "area") && el.hasAttribute("href"))) return "control";
    return "element";
  }

  Object.defineProperty(globalThis, "__pagelens", {
    value: Object.freeze({
      capture, html, lookup, idOf, adopt, boxes, contentBox, pointAt, fieldAt, focusKind, unread: () => lastUnread,
      factsOfTexts,
    }),
    enumerable: false,
  });
})();
