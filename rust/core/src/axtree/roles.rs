//! What the renderers need to know about a role, decided once per node at parse time.

/// Bit set of role classes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RoleClass(pub u32);

impl RoleClass {
    /// Chromium's `InlineTextBox` and `LineBreak`: never shown, nor their subtrees.
    pub const SKIPPED: u32 = 1;
    /// Section 2: dropped when the name is blank and no property is kept.
    pub const DROP_WHEN_BLANK: u32 = 1 << 1;
    /// An action target (spec section 5's list plus the menu item variants).
    pub const INTERACTIVE: u32 = 1 << 2;
    /// `StaticText` (printed as `text`).
    pub const TEXT: u32 = 1 << 3;
    /// Inline formatting that joins text runs.
    pub const INLINE: u32 = 1 << 4;
    /// Occam mode prints no id on this role.
    pub const ID_HIDDEN: u32 = 1 << 5;
    pub const IMAGE: u32 = 1 << 6;
    pub const LIST: u32 = 1 << 7;
    pub const LIST_ITEM: u32 = 1 << 8;
    pub const LIST_MARKER: u32 = 1 << 9;
    pub const TABLE: u32 = 1 << 10;
    pub const ROW: u32 = 1 << 11;
    pub const CELL: u32 = 1 << 12;
    pub const HEADER_CELL: u32 = 1 << 13;
    /// menu, listbox, `MenuListPopup`: printed on one line when all children are options.
    pub const OPTION_POPUP: u32 = 1 << 14;
    pub const COMBOBOX: u32 = 1 << 15;
    /// option, menuitem and its checkbox/radio variants.
    pub const OPTION: u32 = 1 << 16;
    pub const DESCRIPTION_LIST: u32 = 1 << 17;
    pub const TERM: u32 = 1 << 18;
    pub const DEFINITION: u32 = 1 << 19;
    /// A document root: its name (the page title) never absorbs body text.
    pub const DOCUMENT: u32 = 1 << 20;
    /// `LabelText`, printed as `text` like `StaticText`.
    pub const LABEL_TEXT: u32 = 1 << 21;
    /// `rowgroup` (thead/tbody/tfoot): prints nothing when blank.
    pub const ROWGROUP: u32 = 1 << 22;
    /// Chromium's `LineBreak` (`<br>`): never shown, but it separates the texts around it.
    pub const LINE_BREAK: u32 = 1 << 23;
    /// Not an interactive role, but its DOM element responds to clicks (a script's
    /// listener): an action target all the same. Set by the tree, never by the role.
    pub const CLICKABLE: u32 = 1 << 24;
    /// Something an action can use: an interactive role or a clickable element.
    pub const TARGET: u32 = Self::INTERACTIVE | Self::CLICKABLE;

    pub fn has(self, bits: u32) -> bool {
        self.0 & bits != 0
    }

    pub fn of(role: &str) -> RoleClass {
        use RoleClass as R;
        let bits = match role {
            "InlineTextBox" => R::SKIPPED,
            "LineBreak" => R::SKIPPED | R::LINE_BREAK,
            "StaticText" => R::TEXT | R::ID_HIDDEN,
            "LabelText" => R::LABEL_TEXT | R::DROP_WHEN_BLANK | R::ID_HIDDEN,
            "generic" | "none" | "strong" | "paragraph" | "banner" | "navigation" | "Section"
            | "Legend" => R::DROP_WHEN_BLANK,
            "img" | "image" => R::IMAGE,
            "list" => R::LIST | R::DROP_WHEN_BLANK | R::ID_HIDDEN,
            "listitem" => R::LIST_ITEM | R::DROP_WHEN_BLANK | R::ID_HIDDEN,
            "ListMarker" => R::LIST_MARKER | R::ID_HIDDEN,
            "table" | "grid" | "treegrid" | "LayoutTable" => R::TABLE | R::ID_HIDDEN,
            "row" | "LayoutTableRow" => R::ROW | R::ID_HIDDEN,
            "cell" | "gridcell" | "LayoutTableCell" => R::CELL | R::ID_HIDDEN,
            "columnheader" | "rowheader" => R::CELL | R::HEADER_CELL | R::ID_HIDDEN,
            "menu" | "listbox" | "MenuListPopup" => R::OPTION_POPUP,
            "combobox" => R::COMBOBOX | R::INTERACTIVE,
            "option" | "menuitem" | "menuitemcheckbox" | "menuitemradio" => {
                R::OPTION | R::INTERACTIVE
            }
            // `Date`, `DateTime`, `InputTime`: Chromium's roles for its date and time fields.
            "link" | "button" | "textbox" | "searchbox" | "checkbox" | "radio" | "switch"
            | "slider" | "spinbutton" | "tab" | "treeitem" | "Date" | "DateTime" | "InputTime" => {
                R::INTERACTIVE
            }
            "DescriptionList" => R::DESCRIPTION_LIST | R::ID_HIDDEN,
            "term" | "DescriptionListTerm" => R::TERM | R::ID_HIDDEN,
            "definition" | "DescriptionListDetail" => R::DEFINITION | R::ID_HIDDEN,
            "RootWebArea" | "WebArea" | "document" => R::DOCUMENT | R::ID_HIDDEN,
            "rowgroup" => R::ROWGROUP | R::ID_HIDDEN,
            "heading" | "main" | "contentinfo" | "alert" | "caption" | "tabpanel" => R::ID_HIDDEN,
            _ => 0,
        };
        // `strong` is both a section-2 drop role and inline formatting.
        let inline = match role {
            "strong" | "emphasis" | "superscript" | "subscript" | "code" | "mark" | "Abbr"
            | "time" | "insertion" | "deletion" => R::INLINE | R::ID_HIDDEN,
            _ => 0,
        };
        RoleClass(bits | inline)
    }
}

/// Section 2's role list for "dropped when blank" uses `img`, not Chromium's `image`.
/// Kept as written so that the webarena form stays comparable with published agents.
pub fn webarena_drop_role(role: &str) -> bool {
    matches!(
        role,
        "generic"
            | "none"
            | "img"
            | "list"
            | "strong"
            | "paragraph"
            | "banner"
            | "navigation"
            | "Section"
            | "LabelText"
            | "Legend"
            | "listitem"
    )
}

/// Properties section 2 never shows (with the cell spans pagelens' capture adds, which
/// Chromium's tree does not carry).
pub fn webarena_hidden_prop(name: &str) -> bool {
    matches!(
        name,
        "focusable"
            | "editable"
            | "readonly"
            | "level"
            | "settable"
            | "multiline"
            | "invalid"
            | "colspan"
            | "rowspan"
    )
}

/// Properties the occam form shows (spec section 3.9); everything else is noise for a
/// model (`url`, `live`, `atomic`, `labelledby`, ...). `required` only when true.
pub fn occam_shown_prop(name: &str) -> bool {
    matches!(
        name,
        "checked"
            | "selected"
            | "disabled"
            | "expanded"
            | "pressed"
            | "required"
            | "valuetext"
            | "valuemin"
            | "valuemax"
            | "modal"
    )
}
