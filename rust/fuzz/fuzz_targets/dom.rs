//! Any bytes as HTML: parse, clean with both profiles, serialize, select and find paths. The
//! serialized document parses back to the same element ids.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pagelens_core::dom::{clean, CleanOptions, Dom, Selector};
use pagelens_core::Tokenizer;

fuzz_target!(|data: &[u8]| {
    let keep_ids = data.first().is_some_and(|b| b & 1 == 1);
    let dom = Dom::parse(data, None, keep_ids);
    let (html, _) = dom.serialize();
    let again = Dom::parse(html.as_bytes(), Some("utf-8"), true);
    assert_eq!(again.serialize().0, html, "serializing is not stable");
    let tok = Tokenizer::named("gpt2").expect("embedded");
    for profile in ["scribe", "minimal"] {
        let o = CleanOptions::profile(profile).expect("a profile");
        let cleaned = clean(&dom, &o, &tok);
        let _ = cleaned.serialize();
    }
    let query: String = String::from_utf8_lossy(data).chars().take(64).collect();
    if let Ok(sel) = Selector::parse(&query) {
        let _ = dom.select(&sel);
    }
    let _ = dom.find_path(&query);
});
