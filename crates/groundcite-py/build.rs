//! `cargo test` and `cargo build` link libpython (no `extension-module`
//! feature; see Cargo.toml): record its directory as the binaries' rpath so
//! that the test binary starts with a Python whose library is not on the
//! loader's path (pyenv, a virtual environment's base). A no-op when maturin
//! builds the extension module, which does not link libpython.
fn main() {
    pyo3_build_config::add_libpython_rpath_link_args();
}
