//! Any two texts (the input split at its first zero byte, read leniently as UTF-8): the line runs
//! cover both texts in order, equal runs are equal, and applying them rebuilds the new text.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pagelens_core::diff::{line_runs, RunKind};

fuzz_target!(|data: &[u8]| {
    let split = data.iter().position(|&b| b == 0).unwrap_or(data.len());
    let old = String::from_utf8_lossy(&data[..split]);
    let new = String::from_utf8_lossy(data.get(split + 1..).unwrap_or_default());
    let (o, n): (Vec<&str>, Vec<&str>) = (old.split('\n').collect(), new.split('\n').collect());
    let (mut oi, mut ni) = (0, 0);
    let mut rebuilt: Vec<&str> = Vec::with_capacity(n.len());
    for run in line_runs(&old, &new) {
        assert_eq!((run.old_start, run.new_start), (oi, ni));
        assert!(run.old_len + run.new_len > 0);
        match run.kind {
            RunKind::Equal => {
                assert_eq!(o[oi..oi + run.old_len], n[ni..ni + run.new_len]);
            }
            RunKind::Insert => assert_eq!(run.old_len, 0),
            RunKind::Delete => assert_eq!(run.new_len, 0),
            RunKind::Replace => assert!(run.old_len > 0 && run.new_len > 0),
        }
        rebuilt.extend(&n[ni..ni + run.new_len]);
        oi += run.old_len;
        ni += run.new_len;
    }
    assert_eq!((oi, ni), (o.len(), n.len()));
    assert_eq!(rebuilt, n);
});
