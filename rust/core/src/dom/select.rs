//! Finding elements: CSS selectors (Servo's `selectors` crate matched on our arena) and
//! absolute node paths (`/html/body/div[2]/a`, the form `DevTools`' "Copy full `XPath`" gives).
//! Workflow recordings name their action targets this way.

use std::fmt;

use cssparser::ToCss;
use precomputed_hash::PrecomputedHash;
use selectors::attr::{AttrSelectorOperation, CaseSensitivity, NamespaceConstraint};
use selectors::bloom::BloomFilter;
use selectors::context::{
    MatchingContext, MatchingForInvalidation, MatchingMode, NeedsSelectorFlags, QuirksMode,
    SelectorCaches,
};
use selectors::matching::{matches_selector_list, ElementSelectorFlags};
use selectors::parser::{ParseRelative, SelectorParseErrorKind};
use selectors::{OpaqueElement, SelectorList};

use super::tree::{Dom, Kind, NONE};
use crate::dom::DomError;

/// A string as the selector parser hands it over (names, classes, ids, values).
#[derive(Clone, Debug, Default, Eq, Hash, PartialEq)]
pub struct CssString(String);

impl From<&str> for CssString {
    fn from(s: &str) -> Self {
        CssString(s.to_owned())
    }
}

impl AsRef<str> for CssString {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

impl ToCss for CssString {
    fn to_css<W: fmt::Write>(&self, dest: &mut W) -> fmt::Result {
        cssparser::serialize_identifier(&self.0, dest)
    }
}

impl PrecomputedHash for CssString {
    // Only used by bloom filters, which we do not pass to the matcher.
    fn precomputed_hash(&self) -> u32 {
        self.0.bytes().fold(2_166_136_261u32, |h, b| {
            (h ^ u32::from(b)).wrapping_mul(16_777_619)
        })
    }
}

/// The state pseudo-classes a static snapshot can answer from attributes.
#[derive(Clone, Debug, Eq, PartialEq)]
pub enum PseudoClass {
    Checked,
    Disabled,
    Enabled,
    AnyLink,
}

impl ToCss for PseudoClass {
    fn to_css<W: fmt::Write>(&self, dest: &mut W) -> fmt::Result {
        dest.write_str(match self {
            PseudoClass::Checked => ":checked",
            PseudoClass::Disabled => ":disabled",
            PseudoClass::Enabled => ":enabled",
            PseudoClass::AnyLink => ":any-link",
        })
    }
}

impl selectors::parser::NonTSPseudoClass for PseudoClass {
    fn is_active_or_hover(&self) -> bool {
        false
    }
    fn is_user_action_state(&self) -> bool {
        false
    }
}

/// No pseudo-element selects an element of a snapshot.
#[derive(Clone, Debug, Eq, PartialEq)]
pub enum NoPseudoElement {}

impl ToCss for NoPseudoElement {
    fn to_css<W: fmt::Write>(&self, _dest: &mut W) -> fmt::Result {
        match *self {}
    }
}

impl selectors::parser::PseudoElement for NoPseudoElement {}

#[derive(Clone, Debug)]
pub struct Html;

impl selectors::parser::SelectorImpl for Html {
    type ExtraMatchingData<'a> = std::marker::PhantomData<&'a ()>;
    type AttrValue = CssString;
    type Identifier = CssString;
    type LocalName = CssString;
    type NamespaceUrl = CssString;
    type NamespacePrefix = CssString;
    type BorrowedLocalName = CssString;
    type BorrowedNamespaceUrl = CssString;
    type NonTSPseudoClass = PseudoClass;
    type PseudoElement = NoPseudoElement;
}

struct HtmlParser;

impl selectors::parser::Parser<'_> for HtmlParser {
    type Impl = Html;
    type Error = SelectorParseErrorKind;

    fn parse_is_and_where(&self) -> bool {
        true
    }
    fn parse_has(&self) -> bool {
        true
    }
    fn parse_nth_child_of(&self) -> bool {
        true
    }

    fn parse_non_ts_pseudo_class(
        &self,
        name: &str,
    ) -> Result<PseudoClass, cssparser::ParseError<Self::Error>> {
        match name.to_ascii_lowercase().as_str() {
            "checked" => Ok(PseudoClass::Checked),
            "disabled" => Ok(PseudoClass::Disabled),
            "enabled" => Ok(PseudoClass::Enabled),
            "any-link" | "link" => Ok(PseudoClass::AnyLink),
            _ => Err(cssparser::ParseError::custom(
                SelectorParseErrorKind::UnsupportedPseudoClassOrElement,
            )),
        }
    }
}

/// A compiled selector list.
pub struct Selector(SelectorList<Html>);

impl Selector {
    /// # Errors
    /// A selector that does not parse (the error says where).
    pub fn parse(css: &str) -> Result<Selector, DomError> {
        let mut parser = cssparser::Parser::new(css);
        SelectorList::parse(&HtmlParser, &mut parser, ParseRelative::No)
            .map(Selector)
            .map_err(|e| DomError::Selector {
                css: css.to_owned(),
                reason: format!("{:?}", e.kind),
            })
    }
}

/// An element of a [`Dom`] as the matcher sees it. `pos[n]` is n's index among its
/// parent's children, computed once per query so sibling steps are O(1).
#[derive(Clone, Copy)]
struct El<'a> {
    dom: &'a Dom,
    pos: &'a [u32],
    n: u32,
}

impl fmt::Debug for El<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "<{} #{}>", self.tag(), self.n)
    }
}

impl<'a> El<'a> {
    fn tag(&self) -> &'a str {
        self.dom.tag(self.n).unwrap_or("")
    }
    fn attrs(&self) -> &'a [(String, String)] {
        match &self.dom.nodes[self.n as usize].kind {
            Kind::Element { attrs, .. } => attrs,
            _ => &[],
        }
    }
    fn attr(&self, name: &str) -> Option<&'a str> {
        self.attrs()
            .iter()
            .find(|(a, _)| a == name)
            .map(|(_, v)| v.as_str())
    }
    fn at(&self, n: u32) -> El<'a> {
        El {
            dom: self.dom,
            pos: self.pos,
            n,
        }
    }
    fn is_element(&self, n: u32) -> bool {
        matches!(self.dom.nodes[n as usize].kind, Kind::Element { .. })
    }
    fn siblings(&self) -> &'a [u32] {
        let p = self.dom.nodes[self.n as usize].parent;
        if p == NONE {
            &[]
        } else {
            &self.dom.nodes[p as usize].children
        }
    }
}

impl selectors::Element for El<'_> {
    type Impl = Html;

    fn opaque(&self) -> OpaqueElement {
        OpaqueElement::new(&self.dom.nodes[self.n as usize])
    }
    fn parent_element(&self) -> Option<Self> {
        let p = self.dom.nodes[self.n as usize].parent;
        (p != NONE && self.is_element(p)).then(|| self.at(p))
    }
    fn parent_node_is_shadow_root(&self) -> bool {
        false
    }
    fn containing_shadow_host(&self) -> Option<Self> {
        None
    }
    fn is_pseudo_element(&self) -> bool {
        false
    }
    fn prev_sibling_element(&self) -> Option<Self> {
        let sibs = self.siblings();
        let i = self.pos[self.n as usize] as usize;
        sibs[..i.min(sibs.len())]
            .iter()
            .rev()
            .find(|&&s| self.is_element(s))
            .map(|&s| self.at(s))
    }
    fn next_sibling_element(&self) -> Option<Self> {
        let sibs = self.siblings();
        let i = self.pos[self.n as usize] as usize;
        sibs.get(i + 1..)
            .unwrap_or(&[])
            .iter()
            .find(|&&s| self.is_element(s))
            .map(|&s| self.at(s))
    }
    fn first_element_child(&self) -> Option<Self> {
        self.dom.nodes[self.n as usize]
            .children
            .iter()
            .find(|&&c| self.is_element(c))
            .map(|&c| self.at(c))
    }
    fn is_html_element_in_html_document(&self) -> bool {
        true
    }
    fn has_local_name(&self, name: &CssString) -> bool {
        self.tag().eq_ignore_ascii_case(&name.0)
    }
    fn has_namespace(&self, ns: &CssString) -> bool {
        ns.0.is_empty() || ns.0 == "http://www.w3.org/1999/xhtml"
    }
    fn is_same_type(&self, other: &Self) -> bool {
        self.tag() == other.tag()
    }
    fn attr_matches(
        &self,
        _ns: &NamespaceConstraint<&CssString>,
        local_name: &CssString,
        operation: &AttrSelectorOperation<&CssString>,
    ) -> bool {
        self.attrs()
            .iter()
            .any(|(a, v)| a.eq_ignore_ascii_case(&local_name.0) && operation.eval_str(v))
    }
    fn match_non_ts_pseudo_class(
        &self,
        pc: &PseudoClass,
        _context: &mut MatchingContext<Html>,
    ) -> bool {
        let form_control = matches!(
            self.tag(),
            "button" | "input" | "select" | "textarea" | "option" | "optgroup" | "fieldset"
        );
        match pc {
            PseudoClass::Checked => {
                self.attr("checked").is_some()
                    || (self.tag() == "option" && self.attr("selected").is_some())
            }
            PseudoClass::Disabled => form_control && self.attr("disabled").is_some(),
            PseudoClass::Enabled => form_control && self.attr("disabled").is_none(),
            PseudoClass::AnyLink => self.is_link(),
        }
    }
    fn match_pseudo_element(
        &self,
        pe: &NoPseudoElement,
        _context: &mut MatchingContext<Html>,
    ) -> bool {
        match *pe {}
    }
    fn apply_selector_flags(&self, _flags: ElementSelectorFlags) {}
    fn is_link(&self) -> bool {
        matches!(self.tag(), "a" | "area" | "link") && self.attr("href").is_some()
    }
    fn is_html_slot_element(&self) -> bool {
        self.tag() == "slot"
    }
    fn has_id(&self, id: &CssString, case_sensitivity: CaseSensitivity) -> bool {
        self.attr("id")
            .is_some_and(|v| case_sensitivity.eq(v.as_bytes(), id.0.as_bytes()))
    }
    fn has_class(&self, name: &CssString, case_sensitivity: CaseSensitivity) -> bool {
        self.attr("class").is_some_and(|v| {
            v.split_ascii_whitespace()
                .any(|c| case_sensitivity.eq(c.as_bytes(), name.0.as_bytes()))
        })
    }
    fn has_custom_state(&self, _name: &CssString) -> bool {
        false
    }
    fn imported_part(&self, _name: &CssString) -> Option<CssString> {
        None
    }
    fn is_part(&self, _name: &CssString) -> bool {
        false
    }
    fn is_empty(&self) -> bool {
        self.dom.nodes[self.n as usize].children.iter().all(|&c| {
            match &self.dom.nodes[c as usize].kind {
                Kind::Element { .. } => false,
                Kind::Text(t) => t.is_empty(),
                _ => true,
            }
        })
    }
    fn is_root(&self) -> bool {
        let p = self.dom.nodes[self.n as usize].parent;
        p != NONE && matches!(self.dom.nodes[p as usize].kind, Kind::Document)
    }
    fn add_element_unique_hashes(&self, _filter: &mut BloomFilter) -> bool {
        false
    }
}

impl Dom {
    /// Arena indices of the elements matching `selector`, in document order.
    pub fn select(&self, selector: &Selector) -> Vec<u32> {
        let mut pos = vec![0u32; self.nodes.len()];
        for node in &self.nodes {
            for (i, &c) in node.children.iter().enumerate() {
                pos[c as usize] = i as u32;
            }
        }
        let mut caches = SelectorCaches::default();
        let mut ctx = MatchingContext::new(
            MatchingMode::Normal,
            None,
            &mut caches,
            QuirksMode::NoQuirks,
            NeedsSelectorFlags::No,
            MatchingForInvalidation::No,
        );
        self.preorder()
            .into_iter()
            .filter(|&n| matches!(self.nodes[n as usize].kind, Kind::Element { .. }))
            .filter(|&n| {
                matches_selector_list(
                    &selector.0,
                    El {
                        dom: self,
                        pos: &pos,
                        n,
                    },
                    &mut ctx,
                )
            })
            .collect()
    }

    /// The element at an absolute path of tag steps, each with an optional 1-based index
    /// among same-tag element siblings: `/html/body/div[2]/a`. `Ok(None)` when no element
    /// is there; an error for anything that is not such a path.
    ///
    /// # Errors
    /// A path that is not `/tag[index]/...`.
    pub fn find_path(&self, path: &str) -> Result<Option<u32>, DomError> {
        let bad = |why: &str| DomError::Path {
            path: path.to_owned(),
            reason: why.to_owned(),
        };
        let rest = path
            .trim()
            .strip_prefix('/')
            .ok_or_else(|| bad("must start with '/'"))?;
        let mut at = self.root;
        for step in rest.split('/') {
            let (tag, index) = match step.split_once('[') {
                Some((tag, idx)) => {
                    let idx = idx.strip_suffix(']').ok_or_else(|| bad("unclosed '['"))?;
                    let idx: usize = idx
                        .trim()
                        .parse()
                        .map_err(|_| bad("index must be a positive integer"))?;
                    if idx == 0 {
                        return Err(bad("indices start at 1"));
                    }
                    (tag, idx)
                }
                None => (step, 1),
            };
            let tag = tag.trim();
            if tag.is_empty()
                || !tag
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == ':')
            {
                return Err(bad(&format!("step {step:?} is not a tag name")));
            }
            let next = self.nodes[at as usize]
                .children
                .iter()
                .filter(|&&c| self.tag(c).is_some_and(|t| t.eq_ignore_ascii_case(tag)))
                .nth(index - 1);
            match next {
                Some(&c) => at = c,
                None => return Ok(None),
            }
        }
        Ok(Some(at))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dom(html: &str) -> Dom {
        Dom::parse(html.as_bytes(), Some("utf-8"), false)
    }

    fn tags(d: &Dom, css: &str) -> Vec<String> {
        d.select(&Selector::parse(css).unwrap())
            .into_iter()
            .map(|n| {
                let el = El {
                    dom: d,
                    pos: &[],
                    n,
                };
                format!(
                    "{}{}",
                    el.tag(),
                    el.attr("id").map(|i| format!("#{i}")).unwrap_or_default()
                )
            })
            .collect()
    }

    #[test]
    fn selectors_match_like_a_browser() {
        let d = dom(
            r#"<div id=a class="x y"><p id=p1>one</p><p id=p2 class=y>two</p><span id=s></span></div>
            <ul><li id=l1><li id=l2><li id=l3></ul><input id=c type=checkbox checked><a id=k href=/>k</a>"#,
        );
        assert_eq!(tags(&d, "div.x.y > p"), ["p#p1", "p#p2"]);
        assert_eq!(tags(&d, "p + p"), ["p#p2"]);
        assert_eq!(tags(&d, "#p1 ~ span"), ["span#s"]);
        assert_eq!(tags(&d, "ul > li:nth-child(2)"), ["li#l2"]);
        assert_eq!(tags(&d, "li:last-of-type, span:empty"), ["span#s", "li#l3"]);
        assert_eq!(tags(&d, "input[type=checkbox]:checked"), ["input#c"]);
        assert_eq!(tags(&d, "a:any-link"), ["a#k"]);
        assert_eq!(tags(&d, "div:has(> span)"), ["div#a"]);
        assert_eq!(tags(&d, ":root"), ["html"]);
        assert_eq!(tags(&d, "[class~=y]"), ["div#a", "p#p2"]);
        assert!(Selector::parse("div >").is_err());
        assert!(Selector::parse("p:hover").is_err());
    }

    #[test]
    fn paths_address_same_tag_siblings() {
        let d = dom("<body><div>a</div><p>x</p><div><a>1</a><a>2</a></div></body>");
        let n = d.find_path("/html/body/div[2]/a[2]").unwrap().unwrap();
        assert_eq!(d.text_content(n), "2");
        assert_eq!(d.find_path("/html/body/div[3]").unwrap(), None);
        assert!(d.find_path("html/body").is_err());
        assert!(d.find_path("/html/body/div[0]").is_err());
        assert!(d.find_path("/html/body/div[x]").is_err());
    }
}
