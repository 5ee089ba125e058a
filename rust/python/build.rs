//! Bakes the git commit the binding is built from into it (`pagelens._core.BUILD_COMMIT`), so
//! that a study run from an installed wheel still records which pagelens it ran. Empty when
//! the build has no git checkout (an sdist); `PAGELENS_BUILD_COMMIT` overrides it.

use std::path::PathBuf;
use std::process::Command;

fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git").args(args).output().ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_owned())
}

fn main() {
    println!("cargo:rerun-if-env-changed=PAGELENS_BUILD_COMMIT");
    let commit = std::env::var("PAGELENS_BUILD_COMMIT")
        .ok()
        .or_else(|| git(&["rev-parse", "HEAD"]))
        .unwrap_or_default();
    // Built again when HEAD moves (a commit, a checkout): HEAD and the branch it points to.
    if let Some(dir) = git(&["rev-parse", "--absolute-git-dir"]) {
        let dir = PathBuf::from(dir);
        println!("cargo:rerun-if-changed={}", dir.join("HEAD").display());
        let branch = git(&["symbolic-ref", "-q", "HEAD"]).map(|b| dir.join(b));
        // A branch packed away has no file of its own (a missing path would rerun every build).
        match branch {
            Some(file) if file.is_file() => println!("cargo:rerun-if-changed={}", file.display()),
            _ => println!(
                "cargo:rerun-if-changed={}",
                dir.join("packed-refs").display()
            ),
        }
    }
    println!("cargo:rustc-env=PAGELENS_BUILD_COMMIT={commit}");
}
