//! The records a CDP `Accessibility.getFullAXTree` payload (or pagelens' capture rows) is read
//! into, borrowed from the input: nodes, their properties and values, clickable entries and the
//! capture's notes. `parse` reads JSON into them and `rows` the capture's compact rows; both
//! build these, neither imports the other's reader.
//!
//! Only the fields the renderers read are kept; every other field (`chromeRole`,
//! `ignoredReasons`, ...) is skipped by serde without allocating. Of a name's `sources`
//! only one bit is kept: whether the name was computed from the node's contents.

use std::borrow::Cow;
use std::fmt;

use serde::de::{self, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;

/// A JSON scalar as CDP's `AXValue.value` carries it.
#[derive(Debug, Clone, PartialEq)]
pub enum Scalar<'a> {
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(Cow<'a, str>),
    /// null, an object or an array: nothing a renderer prints.
    Other,
}

impl<'de: 'a, 'a> Deserialize<'de> for Scalar<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Scalar<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a JSON value")
            }
            fn visit_bool<E>(self, v: bool) -> Result<Self::Value, E> {
                Ok(Scalar::Bool(v))
            }
            fn visit_i64<E>(self, v: i64) -> Result<Self::Value, E> {
                Ok(Scalar::Int(v))
            }
            fn visit_u64<E>(self, v: u64) -> Result<Self::Value, E> {
                Ok(i64::try_from(v)
                    .map(Scalar::Int)
                    .unwrap_or(Scalar::Float(v as f64)))
            }
            fn visit_f64<E>(self, v: f64) -> Result<Self::Value, E> {
                Ok(Scalar::Float(v))
            }
            fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Self::Value, E> {
                Ok(Scalar::Str(Cow::Borrowed(v)))
            }
            fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
                Ok(Scalar::Str(Cow::Owned(v.to_owned())))
            }
            fn visit_string<E>(self, v: String) -> Result<Self::Value, E> {
                Ok(Scalar::Str(Cow::Owned(v)))
            }
            fn visit_unit<E>(self) -> Result<Self::Value, E> {
                Ok(Scalar::Other)
            }
            fn visit_none<E>(self) -> Result<Self::Value, E> {
                Ok(Scalar::Other)
            }
            fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<Self::Value, A::Error> {
                while m.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                Ok(Scalar::Other)
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut s: A) -> Result<Self::Value, A::Error> {
                while s.next_element::<IgnoredAny>()?.is_some() {}
                Ok(Scalar::Other)
            }
        }
        d.deserialize_any(V)
    }
}

/// A node id: CDP sends strings of integers; those become `Int` (no allocation, cheap
/// hashing). Other strings, and integers written as JSON numbers, are accepted too.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum IdRef<'a> {
    Int(i64),
    Str(Cow<'a, str>),
}

/// The string is exactly how Rust prints the integer (so "007" stays a string id).
fn canonical_int(s: &str) -> Option<i64> {
    let digits = s.strip_prefix('-').unwrap_or(s);
    if digits.is_empty() || digits.len() > 18 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    if digits.len() > 1 && digits.starts_with('0') || s == "-0" {
        return None;
    }
    s.parse().ok()
}

impl<'a> IdRef<'a> {
    fn from_cow(s: Cow<'a, str>) -> IdRef<'a> {
        match canonical_int(&s) {
            Some(i) => IdRef::Int(i),
            None => IdRef::Str(s),
        }
    }
}

impl fmt::Display for IdRef<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            IdRef::Int(i) => write!(f, "{i}"),
            IdRef::Str(s) => f.write_str(s),
        }
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for IdRef<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = IdRef<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a node id (string or integer)")
            }
            fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Self::Value, E> {
                Ok(IdRef::from_cow(Cow::Borrowed(v)))
            }
            fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
                Ok(IdRef::from_cow(Cow::Owned(v.to_owned())))
            }
            fn visit_string<E>(self, v: String) -> Result<Self::Value, E> {
                Ok(IdRef::from_cow(Cow::Owned(v)))
            }
            fn visit_i64<E>(self, v: i64) -> Result<Self::Value, E> {
                Ok(IdRef::Int(v))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Self::Value, E> {
                i64::try_from(v)
                    .map(IdRef::Int)
                    .map_err(|_| E::custom("node id out of range"))
            }
        }
        d.deserialize_any(V)
    }
}

/// CDP's `AXValue`: only `.value` matters here.
#[derive(Debug, Clone, PartialEq, Deserialize, Default)]
pub struct AxValue<'a> {
    #[serde(borrow, default)]
    pub value: Option<Scalar<'a>>,
}

/// A node's `name`: its value, and whether the winning source (the first with a value that
/// is not superseded) is the node's own contents, i.e. the name only repeats its text.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct NameValue<'a> {
    pub value: Option<Scalar<'a>>,
    pub from_contents: bool,
}

impl<'de: 'a, 'a> Deserialize<'de> for NameValue<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        struct Raw<'a> {
            #[serde(borrow, default)]
            value: Option<Scalar<'a>>,
            #[serde(borrow, default)]
            sources: Option<Vec<NameSource<'a>>>,
        }
        let raw = Raw::deserialize(d)?;
        let winner = raw
            .sources
            .iter()
            .flatten()
            .find(|s| s.value.is_some() && !s.superseded);
        let from_contents = winner.is_some_and(|s| s.kind.as_deref() == Some("contents"));
        Ok(NameValue {
            value: raw.value,
            from_contents,
        })
    }
}

/// One entry of `name.sources`; its value is only checked for presence.
#[derive(Deserialize)]
struct NameSource<'a> {
    #[serde(rename = "type", borrow, default)]
    kind: Option<Cow<'a, str>>,
    #[serde(default)]
    superseded: bool,
    #[serde(default)]
    value: Option<IgnoredAny>,
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct RawProp<'a> {
    #[serde(borrow)]
    pub name: Cow<'a, str>,
    #[serde(borrow, default)]
    pub value: Option<AxValue<'a>>,
}

/// One entry of `nodes`, with the fields of spec section 1.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct RawNode<'a> {
    #[serde(rename = "nodeId", borrow, default)]
    pub node_id: Option<IdRef<'a>>,
    #[serde(default)]
    pub ignored: bool,
    #[serde(borrow, default)]
    pub role: Option<AxValue<'a>>,
    #[serde(borrow, default)]
    pub name: Option<NameValue<'a>>,
    #[serde(borrow, default)]
    pub properties: Option<Vec<RawProp<'a>>>,
    #[serde(borrow, default)]
    pub value: Option<AxValue<'a>>,
    #[serde(rename = "childIds", borrow, default)]
    pub child_ids: Option<Vec<IdRef<'a>>>,
    #[serde(rename = "backendDOMNodeId", default)]
    pub backend_dom_node_id: Option<i64>,
    #[serde(rename = "frameId", borrow, default)]
    pub frame_id: Option<Cow<'a, str>>,
}

/// An entry of a saved capture's `clickable` list: a backend DOM node id, or
/// `{"backendDOMNodeId": n, "hint": "..."}` with the hint the capture took from the DOM.
#[derive(Debug, Clone, PartialEq)]
pub struct ClickableEntry {
    pub backend_id: i64,
    pub hint: Option<String>,
}

impl<'de> Deserialize<'de> for ClickableEntry {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Entry {
            Id(i64),
            Full {
                #[serde(rename = "backendDOMNodeId")]
                backend_id: i64,
                #[serde(default)]
                hint: Option<String>,
            },
        }
        Ok(match Entry::deserialize(d)? {
            Entry::Id(backend_id) => ClickableEntry {
                backend_id,
                hint: None,
            },
            Entry::Full { backend_id, hint } => ClickableEntry { backend_id, hint },
        })
    }
}

/// A payload's nodes and, in a saved capture, the clickable elements it recorded.
#[derive(Debug, Default)]
pub struct ParsedPayload<'a> {
    pub nodes: Vec<RawNode<'a>>,
    pub clickable: Vec<ClickableEntry>,
    /// What pagelens' own capture could not read (empty for a CDP payload).
    pub notes: CaptureNotes,
}

/// What a capture of pagelens' own reports beside its rows.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct CaptureNotes {
    /// Ids of the `<iframe>`s whose document the capture could not read (another origin).
    pub unread_frames: Vec<i64>,
    /// Ids of elements holding a closed shadow root (a script cannot read inside one).
    pub closed: Vec<i64>,
    /// The capture stopped at its node limit.
    pub truncated: bool,
}
